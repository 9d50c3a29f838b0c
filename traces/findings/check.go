package findings

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// CheckReproducers builds the reproducers of subject's findings under
// root (the packages pattern names, built in dir: the module that holds
// them) as published and with our side (-tags kverify_ours), runs each,
// and fails t unless, at release, each prints DEFECT and exits 1 when the
// release is in its range (OK and 0 otherwise), and on ours prints OK and
// exits 0. The main module's test runs it on client-go's, the nested
// module traces/findings/controller-runtime on controller-runtime's.
func CheckReproducers(t *testing.T, root, subject, dir, pattern, release string) {
	t.Helper()
	fds, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	bins := map[string]string{}
	for _, side := range []string{"upstream", "ours"} {
		out := t.TempDir()
		args := []string{"build", "-o", out + string(filepath.Separator)}
		if side == "ours" {
			args = append(args, "-tags", "kverify_ours")
		}
		args = append(args, pattern)
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, b)
		}
		bins[side] = out
	}
	n := 0
	for _, f := range fds {
		if f.Subject != subject {
			continue
		}
		n++
		t.Run(f.ID, func(t *testing.T) {
			t.Parallel()
			want := f.HasRelease(release)
			line, defect := runReproducer(t, filepath.Join(bins["upstream"], f.ID))
			if defect != want {
				t.Errorf("%s %s: printed %q; want the defect shown: %v (releases %q)", subject, release, line, want, f.Releases)
			}
			if line, defect := runReproducer(t, filepath.Join(bins["ours"], f.ID)); defect {
				t.Errorf("ours: %q, want OK", line)
			}
		})
	}
	if n == 0 {
		t.Fatalf("no findings of %s", subject)
	}
}

// runReproducer runs bin and returns its line and whether it reported the
// defect; anything but the protocol fails t.
func runReproducer(t *testing.T, bin string) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	line, defect, err := Run(ctx, bin)
	if err != nil {
		t.Fatalf("%s: %v", filepath.Base(bin), err)
	}
	return line, defect
}

// Run runs a built reproducer and reads the protocol: its line, and
// whether it reported the defect ("DEFECT: ..." and exit status 1) or
// not ("OK: ..." and 0). Any other outcome is an error.
func Run(ctx context.Context, bin string) (line string, defect bool, err error) {
	out, runErr := exec.CommandContext(ctx, bin).Output()
	line, _, _ = strings.Cut(strings.TrimSpace(string(out)), "\n")
	var ee *exec.ExitError
	switch {
	case runErr == nil && strings.HasPrefix(line, "OK: "):
		return line, false, nil
	case errors.As(runErr, &ee) && ee.ExitCode() == 1 && strings.HasPrefix(line, "DEFECT: "):
		return line, true, nil
	}
	return line, false, fmt.Errorf("%v, output %q: not the reproducer protocol (DEFECT and 1, or OK and 0)", runErr, line)
}
