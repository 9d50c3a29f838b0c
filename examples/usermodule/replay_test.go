package usermodule

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestReplayCommand runs the conformance test on the broken queue in a
// child go test, takes the replay command its failure prints, runs it, and
// expects the same violation: a counterexample found in this module
// replays in this module.
func TestReplayCommand(t *testing.T) {
	if testing.Short() || os.Getenv("USERMODULE_BROKEN") != "" {
		t.Skip("runs go test in a child process")
	}
	goTest := func(args ...string) (string, error) {
		cmd := exec.Command("go", append([]string{"test", "-count=1"}, args...)...)
		cmd.Env = append(os.Environ(), "USERMODULE_BROKEN=1", "KVERIFY_TRACE_DIR=")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := goTest("-run", "^TestConformance$/^queue/drain$")
	if err == nil {
		t.Fatalf("the broken queue passed queue/drain:\n%s", out)
	}
	m := regexp.MustCompile(`replay: go test -run '\^TestConformance\$' -kverify\.replay=(\S+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("the failure printed no replay command:\n%s", out)
	}
	defer func() {
		// The trace and the directories made for it (empty ones only: a
		// counterexample of the user's own is kept).
		os.Remove(m[1])
		os.Remove(filepath.Dir(m[1]))
		os.Remove(filepath.Dir(filepath.Dir(m[1])))
	}()
	t.Logf("replay command: go test -run '^TestConformance$' -kverify.replay=%s", m[1])
	out, err = goTest("-run", "^TestConformance$", "-kverify.replay="+m[1])
	if err == nil || !strings.Contains(out, "the violation occurs again") {
		t.Fatalf("the replay command did not reproduce the failure (err %v):\n%s", err, out)
	}
}
