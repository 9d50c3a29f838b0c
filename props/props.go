// Package props is kverify's conformance library, as its users see it: run
// a component's named checks against your implementation from a go test,
// declare the differences you mean, and replay a failure's saved
// counterexample.
//
//	func TestConformance(t *testing.T) {
//		props.Run(t, workqueue.Checks(subject))
//	}
//
// The checks themselves come from the component packages (props/workqueue,
// props/fifo, props/informer, props/reflector, props/ring,
// props/ratelimit, props/backoff, props/controller, props/wire), each
// from a factory of your subject.
// Every check states one guarantee; a failure names the guarantee it broke,
// prints the shortest counterexample found, keeps it as a trace under
// testdata/kverify and prints the command that replays it
// (go test -run ... -kverify.replay=FILE).
//
// This package holds only what a user of the checks needs. The toolkit
// for writing checks (the rapid driver, racers, retention probes, size
// generators, the watchdog) is package props/checkkit; the names here are
// the same types and functions.
package props

import (
	"testing"
	"time"

	"github.com/kverify/kverify/props/checkkit"
)

// Check is one named guarantee of a component: its Name (stable within the
// component, e.g. "queue/model"), Family (model, timing, linear, leak,
// retention, witness, fuzz), Guarantee (one sentence) and the Run function
// that checks the subject. A component's Checks function builds them; a
// check the subject cannot take part in carries the reason in NotOffered
// and is reported as not offered, never run. Fields: see checkkit.Check.
type Check = checkkit.Check

// Config is what Run hands each check: the exploration Budget and rapid
// Checks per round, the TraceDir for counterexamples, the Subject and
// Component names. Options set it; see checkkit.Config.
type Config = checkkit.Config

// Divergence declares that a subject breaks a check on purpose: Check (the
// check's name), Reason, Upstream (the file:line the behaviour comes
// from), and optionally Guarantees, narrowing it to violations of those
// guarantees, and Intermittent. A declared check must fail: it is then
// reported as skipped with the reason; if it passes, the declaration is
// stale and Run fails. Fields: see checkkit.Divergence.
type Divergence = checkkit.Divergence

// Violation is a broken guarantee: Guarantee, Detail, and the shortest
// counterexample's Trace with the path it was saved at and the command
// that replays it. A failing check's error is one (errors.As).
type Violation = checkkit.Violation

// Option configures Run.
type Option = checkkit.Option

// ReplayFlag names the go test flag (-kverify.replay=FILE) with which Run
// replays the saved trace FILE on the check it names instead of running
// the checks; a failure prints the whole command.
const ReplayFlag = checkkit.ReplayFlag

// Run runs every check as a subtest named after it, under a watchdog that
// turns a panic or a hang into a violation naming the guarantee. A hung
// check's goroutines cannot be stopped, so each check after it runs again
// in a fresh process of the test binary, with its verdict reported here. The
// environment (KVERIFY_BUDGET, KVERIFY_CHECKS, KVERIFY_TRACE_DIR) applies
// first, then opts; a malformed variable fails t, naming it.
func Run(t *testing.T, checks []Check, opts ...Option) {
	t.Helper()
	checkkit.Run(t, checks, opts...)
}

// FuzzCheck runs check c once on a fuzz input: the check's rapid state
// machines draw from data, so that go test -fuzz explores them with
// coverage guidance. A violation fails t.
//
//	f.Fuzz(func(t *testing.T, data []byte) { props.FuzzCheck(t, c, data) })
func FuzzCheck(t *testing.T, c Check, data []byte) {
	t.Helper()
	checkkit.FuzzCheck(t, c, data)
}

// WithDivergences declares the subject's known differences (see
// Divergence).
func WithDivergences(ds ...Divergence) Option { return checkkit.WithDivergences(ds...) }

// WithBudget lets each randomized check explore for up to d after its
// first full round.
func WithBudget(d time.Duration) Option { return checkkit.WithBudget(d) }

// WithChecks sets the number of rapid cases per round.
func WithChecks(n int) Option { return checkkit.WithChecks(n) }

// WithTraceDir saves counterexample traces in dir (default
// testdata/kverify next to the test).
func WithTraceDir(dir string) Option { return checkkit.WithTraceDir(dir) }

// WithSubject names the subject in traces and messages.
func WithSubject(name string) Option { return checkkit.WithSubject(name) }

// WithComponent names the component in traces, so that a violation with
// no steps of its own is saved as a probe trace that replays by running
// the check again.
func WithComponent(name string) Option { return checkkit.WithComponent(name) }
