package checkkit

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kverify/kverify/traces"
)

// toyChecks is a conformance suite as another module would run it: one
// check that fails with a step trace, replayable; the step "boom" is the
// bug.
func toyChecks() []Check {
	replay := func(_ *testing.T, tr *traces.Trace) error {
		if slices.Contains(tr.Ops(), "boom") {
			return Broke("Toy", "boom broke it again")
		}
		return nil
	}
	return []Check{
		{Name: "toy/ok", Family: FamilyWitness, Guarantee: "nothing", Run: func(*testing.T, Config) error { return nil }},
		{Name: "toy/model", Family: FamilyModel, Guarantee: "no boom", Replay: replay,
			Run: func(t *testing.T, cfg Config) error {
				v := &Violation{Guarantee: "Toy", Detail: "boom", Trace: &traces.Trace{Steps: []traces.Step{{Op: "ok"}, {Op: "boom"}}}}
				return Save(t, cfg, "toy", "toy/model", v)
			}},
	}
}

// TestHelperConformance is the other module's conformance test; it runs
// only as TestReplayElsewhere's child process.
func TestHelperConformance(t *testing.T) {
	if os.Getenv("KVERIFY_PROPS_HELPER") != "1" {
		t.Skip("run by TestReplayElsewhere")
	}
	Run(t, toyChecks())
}

// TestReplayElsewhere: a failure in a test outside the kverify command
// keeps its counterexample in defaultTraceDir under the test's directory
// and prints a go test command with -kverify.replay that reproduces it
// there; a trace that no longer breaks the subject replays clean.
func TestReplayElsewhere(t *testing.T) {
	dir := t.TempDir()
	run := func(args ...string) (string, error) {
		cmd := exec.Command(os.Args[0], append([]string{"-test.run", "^TestHelperConformance$", "-test.v"}, args...)...)
		cmd.Dir = dir
		cmd.Env = append(slices.DeleteFunc(os.Environ(), func(e string) bool {
			return strings.HasPrefix(e, "KVERIFY_")
		}), "KVERIFY_PROPS_HELPER=1")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := run()
	if err == nil {
		t.Fatalf("the failing conformance test passed:\n%s", out)
	}
	m := regexp.MustCompile(`saved: (\S+)\n\s*replay: go test -run '\^TestHelperConformance\$' -kverify\.replay=(\S+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no saved trace and go test replay command in the output:\n%s", out)
	}
	if m[1] != m[2] {
		t.Errorf("the replay command names %s, the trace was saved at %s", m[2], m[1])
	}
	if want := filepath.Join(dir, defaultTraceDir); filepath.Dir(m[1]) != want {
		t.Errorf("the trace was saved at %s, want it in %s", m[1], want)
	}
	if _, err := os.Stat(m[1]); err != nil {
		t.Fatalf("the trace did not survive the test run: %v", err)
	}

	out, err = run("-kverify.replay=" + m[1])
	if err == nil || !strings.Contains(out, "the violation occurs again") || !strings.Contains(out, "boom broke it again") {
		t.Errorf("replaying the trace did not reproduce the violation (err %v):\n%s", err, out)
	}
	if !strings.Contains(out, "NOT RUN: replaying") {
		t.Errorf("replaying ran the other checks too:\n%s", out)
	}

	tr, err := traces.Read(m[1])
	if err != nil {
		t.Fatal(err)
	}
	tr.Steps = tr.Steps[:1] // the fix: no boom
	fixed, err := traces.Write(t.TempDir(), tr)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := run("-kverify.replay=" + fixed); err != nil || !strings.Contains(out, "no violation") {
		t.Errorf("a trace that no longer breaks the subject did not replay clean (err %v):\n%s", err, out)
	}
}
