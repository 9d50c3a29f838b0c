package checkkit

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kverify/kverify/internal/kvenv"
	"github.com/kverify/kverify/traces"
)

// ReplayFlag names the go test flag -kverify.replay=FILE, with which Run
// replays one saved counterexample trace instead of running its checks.
const ReplayFlag = "kverify.replay"

// replayFlag is -kverify.replay: the go test flag that makes Run replay one
// saved counterexample instead of exploring, in whatever module the test
// lives. Registered on the default flag set, as rapid registers -rapid.*.
var replayFlag = flag.String(ReplayFlag, "", "kverify: replay this saved counterexample trace (a file a failing check saved) instead of running the checks")

// defaultTraceDir is where a check that fails saves its counterexample
// when neither WithTraceDir nor KVERIFY_TRACE_DIR chose a directory: next
// to the test, like rapid's testdata/rapid and go fuzz's testdata/fuzz, so
// that it survives the test run (t.ArtifactDir is removed after it unless
// go test -artifacts is given). Counterexamples of declared divergences
// are not kept.
const defaultTraceDir = "testdata/kverify"

// probeReplayBudget is how long a check explores when a probe trace (one
// without steps: a lifecycle sweep, a concurrent history) that names no
// race round is replayed: it cannot be replayed step by step, so the check
// runs again, stopping at its first violation. (A race probe's trace names
// its round, and its replay is counted in rounds: raceReplayRounds.)
const probeReplayBudget = 20 * time.Second

// ProbeReplayPlan says how a probe trace is replayed, for a log line.
func ProbeReplayPlan(tr *traces.Trace) string {
	if r := tr.Race; r != nil {
		return fmt.Sprintf("racing %s at offset %d (round %d of seed %d) again, for up to %d hot rounds", r.Pair, r.Offset, r.Round, r.Seed, raceReplayRounds)
	}
	return fmt.Sprintf("running the check again, exploring for up to %v", probeReplayBudget)
}

func probeReplayConfig(cfg Config, tr *traces.Trace) Config {
	o := runOptions{cfg: cfg}
	WithProbeReplay(tr)(&o)
	return o.cfg
}

// replayTrace is the trace -kverify.replay names, read once.
func replayTrace() (*traces.Trace, string, error) {
	if replayFlag == nil || *replayFlag == "" {
		return nil, "", nil
	}
	tr, err := traces.Read(*replayFlag)
	return tr, *replayFlag, err
}

// runReplay is Run's body under -kverify.replay: the check the trace names
// replays it (step by step through Check.Replay, or, for a probe trace, by
// running again with probeReplayBudget); every other check is skipped. A
// violation that occurs again fails the check, whatever divergence is
// declared: replaying is asking whether it still happens.
func runReplay(t *testing.T, checks []Check, cfg Config, tr *traces.Trace, path string) {
	t.Helper()
	found := false
	for _, c := range checks {
		t.Run(c.Name, func(t *testing.T) {
			if c.Name != tr.Check {
				t.Skipf("%s: replaying %s, a trace of %s", NotRunPrefix, path, tr.Check)
			}
			found = true
			if c.NotOffered != "" {
				SkipNotOffered(t, "%s", c.NotOffered)
			}
			var err error
			switch {
			case len(tr.Steps) > 0 && c.Replay != nil:
				err = c.Replay(t, tr)
			case len(tr.Steps) > 0:
				t.Fatalf("check %s cannot replay a trace step by step (Check.Replay is nil)", c.Name)
			default:
				t.Logf("%s is a probe trace: %s (recorded: %s)", path, ProbeReplayPlan(tr), firstLine(errors.New(tr.Message)))
				cfg = probeReplayConfig(cfg, tr)
				cfg.TraceDir = t.TempDir() // the replay's own trace is not news
				var ended bool
				if ended, err = guarded(t, c, cfg); ended {
					return
				}
			}
			var v *Violation
			switch {
			case errors.As(err, &v):
				t.Errorf("replayed %s: the violation occurs again: %s check %s: %v", path, c.Family, c.Name, err)
				return
			case err != nil:
				t.Fatalf("replaying %s: %v", path, err)
			}
			t.Logf("replayed %s: no violation (recorded: broke %s)", path, tr.Guarantee)
		})
	}
	if !found {
		t.Errorf("-kverify.replay=%s: the trace is of check %q, which this test does not run", path, tr.Check)
	}
}

// keep moves a failing check's saved trace out of a directory the test
// run removes into defaultTraceDir, when no directory was chosen, and
// records the new path in the violation.
func keep(t *testing.T, cfg Config, err error) {
	var v *Violation
	if cfg.TraceDir != "" || !errors.As(err, &v) || v.TracePath == "" {
		return
	}
	dst, cerr := copyInto(defaultTraceDir, v.TracePath)
	if cerr != nil {
		t.Logf("could not keep the trace in %s: %v", defaultTraceDir, cerr)
		return
	}
	v.TracePath, v.ReplayCommand = dst, replayHint(cfg.environ(), t.Name(), dst)
}

func copyInto(dir, src string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	in, err := os.Open(src)
	if err != nil {
		return "", err
	}
	defer in.Close()
	dst, err := filepath.Abs(filepath.Join(dir, filepath.Base(src)))
	if err != nil {
		return "", err
	}
	out, err := os.Create(dst)
	if err != nil {
		return "", err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return "", err
	}
	return dst, out.Close()
}

// replayHint is the command that replays a saved trace where the failure
// happened: kverify replay inside the kverify command's runs (with the
// mutant, when the subject was one), go test -kverify.replay in any other
// module, naming the top-level test that called Run.
func replayHint(env kvenv.Config, testName, path string) string {
	if m := env.Mutant; m != "" {
		return fmt.Sprintf("kverify replay %s --subject mutant:%s", path, m)
	}
	if len(env.Subjects) > 0 {
		return "kverify replay " + path
	}
	top, _, _ := strings.Cut(testName, "/")
	return fmt.Sprintf("go test -run '^%s$' -kverify.replay=%s", top, path)
}

// Replayable sets replay as the Replay of every check in cs that has
// none, and returns cs: how a component whose checks share one replay
// engine (dispatching on the trace's check) makes them all replayable.
func Replayable(cs []Check, replay func(t *testing.T, tr *traces.Trace) error) []Check {
	for i := range cs {
		if cs[i].Replay == nil {
			cs[i].Replay = replay
		}
	}
	return cs
}
