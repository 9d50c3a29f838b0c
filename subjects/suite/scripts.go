package suite

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kverify/kverify/traces/findings"
)

// RunScriptReproducers runs, for each finding of subject under
// findingsDir (findingsDir/subject/<id>/finding.json), its script
// reproducer as command(dir of the finding) builds it: each must print
// one "DEFECT: " line and exit with status 1, and its finding.json must
// decode strictly as a finding of subject with its directory's id. For
// reproducers that are not Go programs (repro.py), which
// findings.CheckReproducers cannot build.
func RunScriptReproducers(t *testing.T, findingsDir, subject string, command func(ctx context.Context, dir string) *exec.Cmd) {
	t.Helper()
	reports, err := filepath.Glob(filepath.Join(findingsDir, subject, "*", "finding.json"))
	if err != nil || len(reports) == 0 {
		t.Fatalf("no findings under %s (%v)", filepath.Join(findingsDir, subject), err)
	}
	for _, report := range reports {
		id := filepath.Base(filepath.Dir(report))
		t.Run(id, func(t *testing.T) {
			b, err := os.ReadFile(report)
			if err != nil {
				t.Fatal(err)
			}
			var f findings.Finding
			dec := json.NewDecoder(bytes.NewReader(b))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&f); err != nil || f.ID != id || f.Subject != subject {
				t.Fatalf("%s: %v, or not the finding %s of %s", report, err, id, subject)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := command(ctx, filepath.Dir(report))
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err = cmd.Run()
			out := strings.TrimSpace(stdout.String())
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 1 || strings.Contains(out, "\n") || !strings.HasPrefix(out, "DEFECT: ") {
				t.Fatalf("want one DEFECT line and exit status 1, got %v\nstdout: %s\nstderr: %s", err, out, stderr.String())
			}
			t.Log(out)
		})
	}
}
