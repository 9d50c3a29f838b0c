package checkkit

import (
	"errors"
	"flag"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kverify/kverify/internal/kvenv"
	"github.com/kverify/kverify/traces"
	"pgregory.net/rapid"
)

// Recorder collects the steps of one run of a property, so that the run
// that fails last (rapid's shrunk counterexample) becomes the trace.
type Recorder struct {
	steps    []traces.Step
	start    time.Time
	sink     *sink
	progress *Progress
	cfg      Config // for Excused
}

// excusedCase ends a rapid case whose violation the subject's declared
// divergence covers: the case counts as passed, and the next one runs.
type excusedCase struct{}

type sink struct {
	mu   sync.Mutex
	last *Violation
}

// Step records one operation with the model's and the subject's results.
func (r *Recorder) Step(op, want, got string) {
	s := traces.Step{Op: op, Want: want, Got: got}
	if !r.start.IsZero() {
		s.At = time.Since(r.start)
	}
	r.steps = append(r.steps, s)
	r.progress.Op(op)
}

// Progress is the heartbeat the recorder reports steps to (nil outside the
// runner), for engines that report progress between steps.
func (r *Recorder) Progress() *Progress { return r.progress }

// Timed makes later steps carry the time since now (fake time in a bubble).
func (r *Recorder) Timed() { r.start = time.Now() }

// Len is the number of steps recorded so far.
func (r *Recorder) Len() int { return len(r.steps) }

// Fail records the violation with the steps so far and fails the rapid run.
func (r *Recorder) Fail(t *rapid.T, guarantee, format string, args ...any) {
	t.Helper()
	v := &Violation{Guarantee: guarantee, Detail: fmt.Sprintf(format, args...),
		Trace: &traces.Trace{Steps: append([]traces.Step(nil), r.steps...)}}
	if r.cfg.Excused(v) {
		panic(excusedCase{})
	}
	if r.sink != nil {
		r.sink.mu.Lock()
		r.sink.last = v
		r.sink.mu.Unlock()
	}
	t.Fatalf("broke %s: %s", v.Guarantee, v.Detail)
}

// Errorf reports a violation found outside the recorder (e.g. an error
// returned by a shared step engine) and fails the rapid run.
func (r *Recorder) Errorf(t *rapid.T, err error) {
	t.Helper()
	if v, ok := err.(*Violation); ok {
		r.Fail(t, v.Guarantee, "%s", v.Detail)
		return
	}
	r.Fail(t, GNoError, "%v", err)
}

// Rapid runs prop with rapid until it fails or the budget is spent (at
// least one round of cfg.Checks cases). A failure comes back as a
// *Violation whose trace is the shrunk counterexample and whose detail
// includes rapid's report with the seed to reproduce it.
func Rapid(t *testing.T, cfg Config, prop func(t *rapid.T, rec *Recorder)) error {
	if cfg.Checks > 0 {
		if f := flag.Lookup("rapid.checks"); f != nil {
			old := f.Value.String()
			_ = f.Value.Set(strconv.Itoa(cfg.Checks))
			defer func() { _ = f.Value.Set(old) }()
		}
	}
	// Counterexamples are saved as kverify traces (with rapid's seed in the
	// report); rapid's own fail files would land in the caller's testdata/
	// on every run of a declared divergence.
	if f := flag.Lookup("rapid.nofailfile"); f != nil {
		old := f.Value.String()
		_ = f.Value.Set("true")
		defer func() { _ = f.Value.Set(old) }()
	}
	// Shrinking runs the subject again and again; with bulk steps of
	// thousands of items rapid's default 30s would make the gate wait that
	// long to report. The budget keeps what is found within it.
	if f := flag.Lookup("rapid.shrinktime"); f != nil && f.Value.String() == "30s" {
		_ = f.Value.Set(shrinkTime(cfg).String())
		defer func() { _ = f.Value.Set("30s") }()
	}
	s := &sink{}
	if cfg.fuzz != nil {
		// One case, its draws taken from the fuzzer's bytes; a failure
		// fails t (the fuzz target's), which saves the input as a crasher.
		cfg.rapidCalls.Add(1)
		rapid.MakeFuzz(func(rt *rapid.T) {
			prop(rt, &Recorder{sink: s, progress: cfg.Progress})
		})(t, *cfg.fuzz)
		return nil
	}
	start := time.Now()
	for round := 1; ; round++ {
		tb := &captureTB{name: t.Name(), logf: t.Logf}
		done := make(chan struct{})
		go func() {
			defer close(done)
			rapid.Check(tb, func(rt *rapid.T) {
				defer func() {
					if r := recover(); r != nil {
						if _, ok := r.(excusedCase); !ok {
							panic(r)
						}
					}
				}()
				cfg.Progress.Op("-- new case --")
				prop(rt, &Recorder{sink: s, progress: cfg.Progress, cfg: cfg})
			})
		}()
		<-done
		if tb.failed {
			s.mu.Lock()
			v := s.last
			s.mu.Unlock()
			if v == nil {
				// No check recorded it: a panic or a deadlock in the subject.
				v = &Violation{Guarantee: GTermination, Detail: reportCause(tb.report.String())}
			}
			v.Detail += "\n" + rapidHint(cfg.environ().Mutant, strings.TrimSpace(tb.report.String()))
			return v
		}
		if time.Since(start) >= cfg.Budget {
			if cfg.isAbandoned() {
				return nil
			}
			t.Logf("passed %d round(s) in %v", round, time.Since(start).Round(time.Millisecond))
			return nil
		}
	}
}

// InBubble runs body in a testing/synctest bubble, for a check that runs
// one fixed scenario on fake time, and returns body's error, or a
// GNoPanic violation for a panic (of the subject, or synctest's deadlock
// report when the subject leaves goroutines blocked). Body must stop every
// goroutine it started.
func InBubble(t *testing.T, body func() error) (err error) {
	defer func() {
		if p := recover(); p != nil && err == nil {
			err = Broke(GNoPanic, "%v", p)
		}
	}()
	Bubble(t, func() { err = body() })
	return err
}

// Bubble runs body in a testing/synctest bubble (fresh fake clock, durable
// blocking detection) and re-raises inside the calling goroutine any panic
// body raised, which is how rapid's failures leave a bubble: rapid sees them
// as ordinary failures and can shrink. Body must stop every goroutine it
// started (use defer), or the bubble reports a deadlock.
func Bubble(t *testing.T, body func()) {
	var p, invalid any
	defer func() {
		// A subject that leaves goroutines blocked makes synctest panic
		// with "deadlock" after body returned; a violation body recorded
		// first is the better report.
		if r := recover(); r != nil {
			if p == nil && invalid == nil {
				panic(r)
			}
		}
		if invalid != nil {
			panic(invalid) // not a failure: rapid discards this case
		}
		if p != nil {
			panic(p)
		}
	}()
	synctest.Test(t, func(*testing.T) {
		defer func() {
			r := recover()
			// rapid tells a failure from "this draw sequence is invalid"
			// (e.g. the bit stream ran out while shrinking) by the panic's
			// value and traceback; both would otherwise leave from the
			// same line below and the shrinker could chase the wrong one.
			if fmt.Sprintf("%T", r) == "rapid.invalidData" {
				invalid = r
				return
			}
			p = r
		}()
		body()
	})
}

// captureTB is a rapid.TB that records a failure instead of failing the
// test, so that a failing check becomes an error value.
type captureTB struct {
	name   string
	logf   func(string, ...any)
	mu     sync.Mutex
	failed bool
	report strings.Builder
}

func (c *captureTB) Helper()      {}
func (c *captureTB) Name() string { return c.name }
func (c *captureTB) Logf(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.failed {
		fmt.Fprintf(&c.report, format+"\n", args...)
	}
}
func (c *captureTB) Log(args ...any) { c.Logf("%s", fmt.Sprint(args...)) }
func (c *captureTB) Skipf(format string, args ...any) {
	c.Errorf("skipped: "+format, args...)
	c.FailNow()
}
func (c *captureTB) Skip(args ...any) { c.Skipf("%s", fmt.Sprint(args...)) }
func (c *captureTB) SkipNow()         { c.Skip("SkipNow") }
func (c *captureTB) Errorf(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.failed = true
	fmt.Fprintf(&c.report, format+"\n", args...)
}
func (c *captureTB) Error(args ...any)                 { c.Errorf("%s", fmt.Sprint(args...)) }
func (c *captureTB) Fatalf(format string, args ...any) { c.Errorf(format, args...); c.FailNow() }
func (c *captureTB) Fatal(args ...any)                 { c.Error(args...); c.FailNow() }
func (c *captureTB) FailNow()                          { c.Fail(); runtime.Goexit() }
func (c *captureTB) Fail() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.failed = true
}
func (c *captureTB) Failed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.failed
}

// reportCause is the cause line of a rapid report ("[rapid] panic after N
// tests: <cause>").
func reportCause(report string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(report), "\n")
	if _, cause, ok := strings.Cut(line, " tests: "); ok {
		return "the subject panicked or deadlocked: " + cause
	}
	return line
}

// defaultShrinkTime bounds rapid's shrinking of a counterexample in the
// default gate; a budget (Config.Budget) raises it to the budget.
const defaultShrinkTime = 3 * time.Second

// shrinkTime is how long Rapid lets rapid shrink a counterexample:
// defaultShrinkTime, or cfg.Budget if that is longer. An explicit
// -rapid.shrinktime other than rapid's default wins.
func shrinkTime(cfg Config) time.Duration { return max(defaultShrinkTime, cfg.Budget) }

// NewRecorder returns a recorder that reports its steps to p (nil: to
// nobody), for fixed scenarios run outside Rapid with the same engine.
func NewRecorder(p *Progress) *Recorder { return &Recorder{progress: p} }

// Attach gives err, if it is a violation without a trace, the steps
// recorded so far as its trace.
func (r *Recorder) Attach(err error) error {
	var v *Violation
	if errors.As(err, &v) && v.Trace == nil {
		v.Trace = &traces.Trace{Steps: append([]traces.Step(nil), r.steps...)}
	}
	return err
}

// rapidHint adjusts rapid's "To reproduce, specify -run=..." line where
// it would mislead: on a mutant (kverify mutants, kverify verify --subject
// mutant:ID) the test it names runs our code without the mutant's overlay,
// so the seed reproduces nothing there.
func rapidHint(m, report string) string {
	if m == "" {
		return report
	}
	return strings.ReplaceAll(report, "To reproduce, specify -run=",
		"To reproduce (this ran on mutant "+m+": replay the saved trace with kverify replay FILE --subject mutant:"+m+", or build with the mutant's overlay first), specify -run=")
}

// FuzzCheck runs check c once on a fuzz input: each rapid machine the
// check runs takes its draws from data (rapid.MakeFuzz) instead of a
// random source, so that a native fuzz target explores the same state
// machine with coverage guidance. The check's fixed witnesses run as
// usual. A violation fails t. A check that runs no rapid machine is
// skipped: it has nothing to fuzz.
//
//	func FuzzQueueModel(f *testing.F) {
//		c := ... // the check, from its component's Checks
//		f.Fuzz(func(t *testing.T, data []byte) { props.FuzzCheck(t, c, data) })
//	}
func FuzzCheck(t *testing.T, c Check, data []byte) {
	t.Helper()
	if c.NotOffered != "" {
		SkipNotOffered(t, "%s", c.NotOffered)
	}
	env, err := kvenv.Load()
	if err != nil {
		t.Fatalf("kverify's environment: %v", err)
	}
	calls := new(atomic.Int32)
	cfg := Config{Subject: defaultSubject, TraceDir: t.TempDir(), fuzz: &data, rapidCalls: calls, env: &env}
	ended, err := guarded(t, c, cfg)
	if ended {
		return
	}
	if err != nil {
		t.Fatalf("%s check %s: %v", c.Family, c.Name, err)
	}
	if calls.Load() == 0 {
		t.Skipf("check %s runs no rapid machine: nothing to fuzz", c.Name)
	}
}
