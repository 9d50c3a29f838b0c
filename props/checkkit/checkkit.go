package checkkit

import (
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kverify/kverify/internal/kvenv"
	"github.com/kverify/kverify/traces"
)

// Families of checks, the columns of kverify's table.
const (
	FamilyModel     = "model"     // rapid state machine against a spec model
	FamilyTiming    = "timing"    // synctest: deadlines and fake time
	FamilyLinear    = "linear"    // porcupine linearizability of concurrent histories
	FamilyLeak      = "leak"      // goroutines stopped on shutdown
	FamilyRetention = "retention" // no reference kept to consumed items
	FamilyWitness   = "witness"   // one fixed scenario pinning a decided contract
	FamilyFuzz      = "fuzz"      // fuzz seed corpus and saved crashers
	// FamilyExhaustive is a check that enumerates its choices up to a
	// bound (Explore) and reports the states it covered.
	FamilyExhaustive = "exhaustive"
)

// Check is one named guarantee of a component.
type Check struct {
	// Name is stable and unique within the component, e.g. "queue/model".
	Name string
	// Family is one of the Family constants.
	Family string
	// Guarantee says what the check promises, in one sentence.
	Guarantee string
	// Run checks the subject. It returns nil or the violation; it may use t
	// for logging, t.TempDir, synctest bubbles and artifacts, but must not
	// fail t itself.
	Run func(t *testing.T, cfg Config) error
	// Replay, when set, replays a saved trace of this check step by step
	// against the subject, returning the violation if it occurs again
	// (go test -kverify.replay=FILE; see Run). A check without it replays
	// a probe trace by running again.
	Replay func(t *testing.T, tr *traces.Trace) error
	// NotOffered, when set, says why the subject cannot take part in the
	// check (it lacks the constructor or the feature the check needs):
	// Run reports the check as skipped with NotOfferedPrefix and this
	// reason, never runs it, and never counts it as a failure.
	NotOffered string
}

// OfferedIf returns c, marked as not offered for reason unless ok: the
// way a component's Checks lists a check its subject may lack the means
// for, so that the report still shows the check, and why it did not run.
func (c Check) OfferedIf(ok bool, reason string) Check {
	if !ok {
		c.NotOffered = reason
	}
	return c
}

// NotOfferedPrefix starts the skip message of a check the subject cannot
// take part in; the kverify command reports such checks as not offered.
const NotOfferedPrefix = "NOT OFFERED"

// SkipNotOffered ends a check that finds, once running, that the subject
// lacks what it needs (an optional method, a capability the subject
// declares): the check is reported as not offered, with the reason.
func SkipNotOffered(t testing.TB, format string, args ...any) {
	t.Helper()
	t.Skipf("%s: %s", NotOfferedPrefix, fmt.Sprintf(format, args...))
}

// Config is what the runner hands each check.
type Config struct {
	// Budget is how long a randomized check may keep exploring after its
	// first full round; zero means one round.
	Budget time.Duration
	// Checks is the number of rapid cases per round; zero means rapid's
	// default (-rapid.checks).
	Checks int
	// TraceDir is where failing checks save their counterexample; empty
	// means the test's artifact directory.
	TraceDir string
	// Subject names the subject under test, for traces; Run sets
	// defaultSubject when it is empty.
	Subject string
	// Component names the checks' component, for traces. When it is set,
	// a violation that carries no step trace (a probe's: a race, a
	// lifecycle sweep, a concurrent history) is saved as a probe trace,
	// which replays by running the check again (see ProbeTrace).
	Component string
	// Progress is the check's heartbeat (see Progress): the runner's
	// watchdog fails a check that reports no progress for HangAfter.
	Progress *Progress

	// declared is the subject's declaration for the running check (nil:
	// none), which Excused consults and records into.
	declared *declared

	// abandoned is set when the runner gave up on the check as hung: its
	// goroutines must then not touch the finished test.
	abandoned *atomic.Bool
	// fuzz, when set, is the input of a fuzz run (FuzzCheck): Rapid draws
	// from it once (rapid.MakeFuzz) instead of exploring, and counts its
	// calls in rapidCalls.
	fuzz       *[]byte
	rapidCalls *atomic.Int32
	// race, when set, is the race round a probe trace replays (see
	// WithProbeReplay and NewRaceSchedule).
	race *traces.Race
	// env is the KVERIFY_* environment, parsed once by Run (nil: a Config
	// made elsewhere, which reads it when asked; see environ).
	env *kvenv.Config
}

// environ is the KVERIFY_* environment the check runs under: Run's,
// parsed once per run, or, for a Config made outside Run, the process's
// now. (A malformed environment failed Run before any check started.)
func (c Config) environ() kvenv.Config {
	if c.env != nil {
		return *c.env
	}
	env, _ := kvenv.Load()
	return env
}

// Deeper is the depth the run adds to every exhaustive bound
// (KVERIFY_DEEPER, kverify --deeper): Explore adds it to Space.Depth, and
// a check whose alphabet is limited besides (how many handlers may join)
// raises those limits with it.
func (c Config) Deeper() int { return max(c.environ().Deeper, 0) }

// isAbandoned reports whether the runner has given up on the check as hung.
func (c Config) isAbandoned() bool { return c.abandoned != nil && c.abandoned.Load() }

// Option configures Run.
type Option func(*runOptions)

type runOptions struct {
	cfg         Config
	divergences map[string]Divergence
}

// WithBudget lets randomized checks explore for up to d each.
func WithBudget(d time.Duration) Option { return func(o *runOptions) { o.cfg.Budget = d } }

// WithProbeReplay configures Run to replay probe trace tr (one without
// steps) by running its check again: a race probe's trace races only its
// failing pair, at its offset, for up to raceReplayRounds hot rounds;
// another probe's runs the whole check exploring for probeReplayBudget.
func WithProbeReplay(tr *traces.Trace) Option {
	return func(o *runOptions) {
		if tr.Race != nil {
			o.cfg.race = tr.Race
			return
		}
		o.cfg.Budget = probeReplayBudget
	}
}

// WithChecks sets the number of rapid cases per round.
func WithChecks(n int) Option { return func(o *runOptions) { o.cfg.Checks = n } }

// WithTraceDir saves counterexample traces in dir.
func WithTraceDir(dir string) Option { return func(o *runOptions) { o.cfg.TraceDir = dir } }

// defaultSubject names, in traces and messages, a subject that neither
// WithSubject nor KVERIFY_SUBJECT named.
const defaultSubject = "subject"

// WithSubject names the subject in traces.
func WithSubject(name string) Option { return func(o *runOptions) { o.cfg.Subject = name } }

// WithComponent names the component in traces, and makes Run save a probe
// trace for a violation that has no steps of its own.
func WithComponent(name string) Option { return func(o *runOptions) { o.cfg.Component = name } }

// Run runs every check as a subtest named after it. Options from the
// environment (KVERIFY_BUDGET, KVERIFY_CHECKS, KVERIFY_TRACE_DIR) apply
// first, then opts; a malformed variable fails t, naming it. A check the subject is not offered is skipped with its
// reason. A failing check's counterexample is kept in defaultTraceDir
// unless a trace directory was set, and the failure prints the command
// that replays it; with -kverify.replay=FILE, Run replays that trace on the
// check it names instead of running the checks.
//
// Each check runs on its own goroutine under a watchdog: a panic becomes a
// "No panic" violation and a check that makes no progress for HangAfter
// (see Progress) a "Termination" violation naming its last operations,
// with the goroutine stacks. A hung check's goroutines cannot be stopped,
// so each check after it runs again in a fresh process of the test binary,
// whose verdict Run relays (under the kverify command, which reruns them
// itself, they are skipped as NOT RUN).
func Run(t *testing.T, checks []Check, opts ...Option) {
	t.Helper()
	o := runOptions{divergences: map[string]Divergence{}}
	if err := envOptions(&o.cfg); err != nil {
		t.Fatal(err)
	}
	for _, opt := range opts {
		opt(&o)
	}
	if o.cfg.Subject == "" {
		// Traces and messages name the subject; an unnamed one is the
		// test's own, not "" (trace files were named "...-.json").
		o.cfg.Subject = defaultSubject
	}
	if tr, path, err := replayTrace(); err != nil {
		t.Fatalf("-kverify.replay: %v", err)
	} else if tr != nil {
		runReplay(t, checks, o.cfg, tr, path)
		return
	}
	names := map[string]bool{}
	for _, c := range checks {
		names[c.Name] = true
	}
	for name, d := range o.divergences {
		if !names[name] {
			t.Errorf("divergence declared for unknown check %q", name)
		}
		if _, err := shapeRegexp(d.Shape); err != nil {
			t.Errorf("divergence declared for check %q: Shape: %v", name, err)
		}
	}
	for _, c := range checks {
		t.Run(c.Name, func(t *testing.T) {
			if c.NotOffered != "" {
				SkipNotOffered(t, "%s", c.NotOffered)
			}
			if by := tainted.Load(); by != nil {
				if inFreshProcess(t, o.cfg.environ(), *by) {
					return
				}
				t.Skipf("%s: %s hung in this process and its goroutines may still run; run this check in a fresh process (kverify does)", NotRunPrefix, *by)
			}
			cfg := o.cfg
			d, divergent := o.divergences[c.Name]
			if divergent {
				cfg.declared = &declared{d: d}
			}
			ended, err := guarded(t, c, cfg)
			if ended {
				return // skipped (t.Skip in the check)
			}
			err = saveProbe(t, cfg, c.Name, err)
			n, excused := cfg.declared.first()
			switch {
			case divergent && err == nil && excused == nil && d.Intermittent:
				t.Logf("declared intermittent divergence %q not observed in this run", c.Name)
			case divergent && err != nil && !d.covers(err):
				keep(t, cfg, err)
				t.Errorf("%s check %s: %v\n(the declared divergence covers only %s; it excused %d other violation(s) before this one)", c.Family, c.Name, err, d.excuses(), n)
			case divergent && (err != nil || excused != nil):
				if err == nil {
					// The check ran on past the excused violation and
					// passed: save it, so that every divergence met
					// leaves a trace (a subject's TestFindings asks for
					// one per declaration).
					err = saveExcused(t, cfg, c.Name, excused)
				}
				t.Skipf("%s: %s\n  reason: %s\n  upstream: %s\n  observed: %s%s%s", DivergencePrefix, c.Name, d.Reason, d.Upstream, firstLine(err), savedAt(err), ranOn(n, err != excused))
			case divergent:
				t.Errorf("declared divergence %q was not observed: the subject now keeps %q; remove the declaration", c.Name, c.Guarantee)
			case err != nil:
				keep(t, o.cfg, err)
				t.Errorf("%s check %s: %v", c.Family, c.Name, err)
			}
		})
	}
}

// saveProbe saves a violation that has no trace of its own as a probe
// trace (no steps; the violation's message holds the counterexample: the
// round, the history), when the component is known.
func saveProbe(t *testing.T, cfg Config, check string, err error) error {
	var v *Violation
	if cfg.Component == "" || !errors.As(err, &v) || v.Trace != nil || v.TracePath != "" {
		return err
	}
	v.Trace = &traces.Trace{Race: v.Race}
	err = Save(t, cfg, cfg.Component, check, err)
	v.Trace = nil // the message is the counterexample; a probe has no steps to print
	return err
}

// saveExcused saves an excused violation: its own trace if it has one not
// yet written, else as a probe trace.
func saveExcused(t *testing.T, cfg Config, check string, err error) error {
	var v *Violation
	if cfg.Component != "" && errors.As(err, &v) && v.Trace != nil && v.TracePath == "" {
		return Save(t, cfg, cfg.Component, check, err)
	}
	return saveProbe(t, cfg, check, err)
}

// savedAt is the line naming a violation's saved trace, or "".
func savedAt(err error) string {
	var v *Violation
	if !errors.As(err, &v) || v.TracePath == "" {
		return ""
	}
	return fmt.Sprintf("\n  trace: %s (replay: %s)", v.TracePath, v.replay())
}

func firstLine(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// envOptions applies the KVERIFY_* environment (internal/kvenv) to cfg.
func envOptions(cfg *Config) error {
	env, err := kvenv.Load()
	if err != nil {
		return fmt.Errorf("kverify's environment: %w", err)
	}
	if env.Budget > 0 {
		cfg.Budget = env.Budget
	}
	if env.Checks > 0 {
		cfg.Checks = env.Checks
	}
	cfg.TraceDir, cfg.Subject = env.TraceDir, env.Subject
	cfg.env = &env
	return nil
}

// Violation is a broken guarantee. Trace, when set, is the shortest
// counterexample found.
type Violation struct {
	Guarantee string
	Detail    string
	Trace     *traces.Trace
	TracePath string // where the trace was saved, if it was
	// Race, for a violation found by a race probe, is the round that
	// failed (see RaceAt.Broke): its probe trace records it.
	Race *traces.Race
	// ReplayCommand replays the saved trace where the check ran (see
	// defaultTraceDir and -kverify.replay).
	ReplayCommand string
}

func (v *Violation) replay() string {
	if v.ReplayCommand != "" {
		return v.ReplayCommand
	}
	return "kverify replay " + v.TracePath
}

// Shape is what a Divergence's Shape is matched against: the guarantee,
// ": ", and the detail (the operations and outcomes observed).
func (v *Violation) Shape() string { return v.Guarantee + ": " + v.Detail }

func (v *Violation) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "broke %s: %s", v.Guarantee, v.Detail)
	if v.Trace != nil {
		fmt.Fprintf(&b, "\ncounterexample (%s)", v.Trace)
	}
	if r := v.Race; r != nil {
		fmt.Fprintf(&b, "\nrace seed %d (KVERIFY_RACE_SEED=%d draws the same offsets; replaying the trace races %s at offset %d again)", r.Seed, r.Seed, r.Pair, r.Offset)
	}
	if v.TracePath != "" {
		fmt.Fprintf(&b, "\nsaved: %s\nreplay: %s", v.TracePath, v.replay())
	}
	return b.String()
}

// Broke returns a Violation of guarantee without a trace.
func Broke(guarantee, format string, args ...any) error {
	return &Violation{Guarantee: guarantee, Detail: fmt.Sprintf(format, args...)}
}

// Dir is where a check saves what it leaves for the user (traces,
// histories): TraceDir, or the test's artifact directory.
func (c Config) Dir(t *testing.T) string {
	if c.TraceDir != "" {
		return c.TraceDir
	}
	return t.ArtifactDir()
}

// Save writes the violation's trace (if any) for check c to the configured
// directory and records the path in the violation. Errors other than
// violations are returned unchanged.
func Save(t *testing.T, cfg Config, component string, c string, err error) error {
	var v *Violation
	if !errors.As(err, &v) || v.Trace == nil {
		return err
	}
	dir := cfg.Dir(t)
	v.Trace.Component, v.Trace.Check, v.Trace.Subject = component, c, cfg.Subject
	v.Trace.Guarantee, v.Trace.Message = v.Guarantee, v.Detail
	if path, werr := traces.Write(dir, v.Trace); werr == nil {
		v.TracePath = path
		v.ReplayCommand = replayHint(cfg.environ(), t.Name(), path)
	} else {
		t.Logf("could not save trace: %v", werr)
	}
	return err
}

// Watchdog bounds a call that must return promptly, so that a hang
// becomes a violation instead of a test timeout. Inside a synctest bubble
// it is fake time; outside one, it counts only the wall time during which
// none of the check's goroutines could run (see ReturnsWithin), so that a
// call starved of CPU on a loaded machine is not taken for a blocked one.
const Watchdog = 5 * time.Second

// ReturnsWithin reports whether f returns within d. Inside a synctest
// bubble d is fake time. Outside one, under props.Run, d counts only while
// none of the check's goroutines can run (every one blocked, none running,
// runnable or in a system call), looked at between growing pauses: a call
// that is slow because the machine is loaded has a runnable goroutine
// somewhere, and waits; one that blocks for good runs the count out. Run
// elsewhere (no check label), d is wall time. If f does not return in
// time, the goroutine running f is abandoned. If f panics, the panic is
// raised again on the caller's goroutine, with the stack where it
// happened, so that the check running there reports it (a panic on a
// goroutine of its own would end the whole test binary: a subject whose
// second ShutDown closes a closed channel did so).
func ReturnsWithin(d time.Duration, f func()) bool {
	done := make(chan struct{})
	var p *goPanic
	go func() {
		defer close(done)
		defer func() {
			if v := recover(); v != nil {
				p = &goPanic{v, debug.Stack()}
			}
		}()
		f()
	}()
	returned := func() bool {
		if p != nil {
			panic(*p)
		}
		return true
	}
	if me := self(); me.bubble == "" && me.label != "" {
		if stuck(done, nil, me, d) {
			return false
		}
		return returned()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return returned()
	case <-t.C:
		return false
	}
}

// Eventually reports whether cond becomes true within d, polling it. Like
// ReturnsWithin it counts, outside a bubble under props.Run, only the time
// during which none of the check's goroutines could run, so a slow
// delivery on a loaded machine is waited for and a lost one is not; run
// elsewhere, d is wall time.
func Eventually(d time.Duration, cond func() bool) bool {
	if me := self(); me.bubble == "" && me.label != "" {
		return !stuck(nil, cond, me, d) || cond()
	}
	deadline := time.Now().Add(d)
	for !cond() {
		if !time.Now().Before(deadline) {
			return false
		}
		time.Sleep(200 * time.Microsecond)
	}
	return true
}

// goPanic is a panic of a call made on a helper goroutine, raised again on
// the check's goroutine.
type goPanic struct {
	value any
	stack []byte
}

func (p goPanic) Error() string { return fmt.Sprintf("%v\n%s", p.value, p.stack) }

// Protect calls f and returns its panic, if it panicked, as an error.
func Protect(f func()) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	f()
	return nil
}

// Problem is one broken guarantee among the many cases a check tries.
type Problem struct{ Guarantee, Detail string }

// Worst reports problems as one violation: the guarantee of the most
// severe (the first of order that any problem breaks; else the first
// problem's), its detail, then every other problem's on its own line.
func Worst(problems []Problem, order ...string) (guarantee, detail string) {
	rank := func(g string) int {
		for i, o := range order {
			if o == g {
				return i
			}
		}
		return len(order)
	}
	first := 0
	for i, p := range problems {
		if rank(p.Guarantee) < rank(problems[first].Guarantee) {
			first = i
		}
	}
	var b strings.Builder
	b.WriteString(problems[first].Detail)
	for i, p := range problems {
		if i != first {
			fmt.Fprintf(&b, "\n  also (%s): %s", p.Guarantee, p.Detail)
		}
	}
	return problems[first].Guarantee, b.String()
}
