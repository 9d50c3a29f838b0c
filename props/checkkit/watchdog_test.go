package checkkit

import (
	"errors"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// A check that hangs outside any bubble is reported after HangAfter.
func TestGuardNamesHang(t *testing.T) {
	t.Setenv("KVERIFY_HANG_AFTER", "200ms")
	defer tainted.Store(nil)
	release := make(chan struct{})
	c := Check{Name: "x/hang", Run: func(_ *testing.T, cfg Config) error {
		cfg.Progress.Op("Get()")
		<-release
		return nil
	}}
	err := guard(t, c, Config{TraceDir: t.TempDir()})
	close(release)
	var v *Violation
	if !errors.As(err, &v) || v.Guarantee != GTermination || !strings.Contains(v.Detail, "no progress for") || !strings.Contains(v.Detail, "Get()") {
		t.Fatalf("guard = %v, want a %s violation naming Get()", err, GTermination)
	}
}

// The check's own analysis (a porcupine search) is not the subject's lack
// of progress, however long it takes within its bound; the same wait
// outside Analyse is a hang.
func TestGuardWaitsForAnalysis(t *testing.T) {
	t.Setenv("KVERIFY_HANG_AFTER", "100ms")
	defer tainted.Store(nil)
	for _, analysed := range []bool{true, false} {
		release := make(chan struct{})
		// The analysis ends by itself after 500ms of wall time; the wait
		// outside Analyse only once the guard has given its verdict, so
		// that a watchdog starved on a loaded machine cannot miss it.
		var timer *time.Timer
		if analysed {
			timer = time.AfterFunc(500*time.Millisecond, func() { close(release) })
		}
		c := Check{Name: "x/analyse", Run: func(_ *testing.T, cfg Config) error {
			cfg.Progress.Op("workload")
			if analysed {
				cfg.Progress.Analyse(func() { <-release })
			} else {
				<-release
			}
			return nil
		}}
		err := guard(t, c, Config{TraceDir: t.TempDir()})
		if analysed && err != nil {
			t.Fatalf("a 500ms analysis with a 100ms hang limit: guard = %v, want nil", err)
		}
		var v *Violation
		if !analysed && (!errors.As(err, &v) || v.Guarantee != GTermination) {
			t.Fatalf("a wait outside Analyse: guard = %v, want a %s violation", err, GTermination)
		}
		if analysed {
			<-release
			timer.Stop()
		} else {
			close(release)
		}
	}
}

// spinCheck is a check whose subject spins inside a synctest bubble until
// stop is closed: synctest.Wait never returns, and only the watchdog can
// end the check.
func spinCheck(stop chan struct{}, wg *sync.WaitGroup) Check {
	return Check{Name: "x/spin", Family: FamilyModel, Run: func(t *testing.T, cfg Config) error {
		wg.Add(1)
		defer wg.Done()
		synctest.Test(t, func(*testing.T) {
			cfg.Progress.Op("Add(a)")
			cfg.Progress.Op("Spin()")
			go func() {
				// Spins: the subject's bug this test stands for.
				for !isClosed(stop) {
				}
			}()
			synctest.Wait()
		})
		return nil
	}}
}

// A spin inside a bubble is told from a slow step by the bubble's state and
// the CPU time it burns: it is reported by the spin rule (after spinAfter
// of wall time and twice that of CPU time), not as a hang.
func TestGuardNamesSpinWithStacks(t *testing.T) {
	defer tainted.Store(nil)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	start := time.Now()
	err := guard(t, spinCheck(stop, &wg), Config{TraceDir: t.TempDir(), Subject: "test"})
	took := time.Since(start)
	close(stop)
	wg.Wait()
	var v *Violation
	if !errors.As(err, &v) || v.Guarantee != GTermination {
		t.Fatalf("guard = %v, want a %s violation", err, GTermination)
	}
	// Which rule fired, not how long it took: on a loaded machine the
	// spin rule waits for 2s of CPU time given to the process.
	t.Logf("reported after %v of wall time", took)
	for _, want := range []string{"keeps running (the subject spins", "Add(a)\n    Spin()", "spinCheck.func1.1.1", "every goroutine: "} {
		if !strings.Contains(v.Detail, want) {
			t.Errorf("violation lacks %q:\n%s", want, v.Detail)
		}
	}
	if by := tainted.Load(); by == nil || *by != t.Name() {
		t.Errorf("tainted = %v, want %q", by, t.Name())
	}
}

func TestGuardTurnsPanicIntoViolation(t *testing.T) {
	c := Check{Name: "x/panic", Run: func(*testing.T, Config) error { panic("subject exploded") }}
	err := guard(t, c, Config{})
	var v *Violation
	if !errors.As(err, &v) || v.Guarantee != "No panic" || !strings.Contains(v.Detail, "subject exploded") {
		t.Fatalf("guard = %v, want a No panic violation", err)
	}
}

func TestProgressKeepsTheTail(t *testing.T) {
	var p Progress
	for i := range progressTail + 3 {
		p.Op(string(rune('a' + i%26)))
	}
	last := p.last()
	if len(last) != progressTail || last[0] != "d" {
		t.Fatalf("Last() = %v", last)
	}
	var nilP *Progress
	nilP.Op("x") // must not panic
	nilP.Beat()
}

func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// fakeWatch is a watch on synthetic clocks and dumps: every sample moves
// wall time by a tick and the process's CPU time by cpuPerTick.
type fakeWatch struct {
	*watch
	wall, cpu  time.Time
	cpuPerTick time.Duration
	stacks     string
}

func newFakeWatch(stacks string, cpuPerTick time.Duration) *fakeWatch {
	f := &fakeWatch{wall: time.Unix(0, 0), cpu: time.Unix(0, 0), cpuPerTick: cpuPerTick, stacks: stacks}
	w := newWatch(&Progress{}, "1", HangAfter)
	w.since = f.wall
	w.cpuNow = func() (time.Duration, bool) { return f.cpu.Sub(time.Unix(0, 0)), true }
	w.threadNow = func() (time.Duration, bool) { return 0, true }
	w.stacks = func() string { return f.stacks }
	w.wallNow = func() time.Time { return f.wall }
	w.cpu, w.haveCPU = w.cpuNow()
	f.watch = w
	return f
}

// run samples for at most d of wall time and returns the first verdict and
// when it came.
func (f *fakeWatch) run(d time.Duration) (string, time.Duration) {
	start := f.wall
	for f.wall.Sub(start) < d {
		f.wall = f.wall.Add(f.tick())
		f.cpu = f.cpu.Add(f.cpuPerTick)
		if why, _ := f.sample(f.wall); why != "" {
			return why, f.wall.Sub(start)
		}
	}
	return "", d
}

const (
	waiter  = "goroutine 10 [synctest.Wait (durable), synctest bubble 3 labels:{\"kverify-check\": \"1\"}]:\nmain.f()\n\t/x.go:1"
	runner  = "goroutine 11 [runnable, synctest bubble 3 labels:{\"kverify-check\": \"1\"}]:\nexample.com/subject.(*Q).loop()\n\t/q.go:9"
	locker  = "goroutine 12 [sync.Mutex.Lock, synctest bubble 3 labels:{\"kverify-check\": \"1\"}]:\nexample.com/subject.(*Q).Add()\n\t/q.go:20"
	blocked = "goroutine 13 [chan receive, 2 minutes labels:{\"kverify-check\": \"1\"}]:\nexample.com/check.run()\n\t/c.go:3"
	other   = "goroutine 14 [runnable, labels:{\"kverify-check\": \"0\"}]:\nexample.com/leftover.spin()\n\t/l.go:1"
)

// The watchdog's evidence, case by case, on synthetic dumps and clocks.
func TestWatchEvidence(t *testing.T) {
	for _, tc := range []struct {
		name       string
		stacks     []string
		cpuPerTick time.Duration
		want       string // "" for no verdict within a minute
		within     time.Duration
	}{
		// A goroutine of the bubble wants a CPU and the process is given
		// almost none (8 hogs beside it): starved, not spinning.
		{"starved work inside a Wait", []string{waiter, runner}, time.Millisecond, "", 0},
		// The same bubble with the process given a whole core: a spin,
		// reported once 2 s of CPU time went by.
		{"spin inside a Wait", []string{waiter, runner}, 100 * time.Millisecond, "keeps running", 3 * time.Second},
		// Nothing of the check can run and the bubble cannot quiesce: a
		// deadlock on a lock, reported after spinAfter.
		{"deadlock on a lock", []string{waiter, locker}, 0, "deadlocks on a lock", 2 * time.Second},
		// Blocked outside any bubble: a hang after HangAfter.
		{"blocked", []string{blocked}, 0, "hangs or deadlocks", HangAfter + time.Second},
		// Another check's leftover goroutine that keeps running does not
		// hide this check's hang.
		{"blocked beside a leftover", []string{blocked, other}, 0, "hangs or deadlocks", HangAfter + time.Second},
		// A check that gets no CPU while its goroutine is runnable is
		// waiting for a core, however long.
		{"starved outside a bubble", []string{strings.Replace(blocked, "chan receive, 2 minutes", "runnable", 1)}, 0, "", 0},
		// Given CPU time with no progress and no bubble: a busy hang after
		// 10 s of CPU time.
		{"busy outside a bubble", []string{strings.Replace(blocked, "chan receive, 2 minutes", "running", 1)}, 100 * time.Millisecond, "spins or polls", 11 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeWatch(strings.Join(tc.stacks, "\n\n"), tc.cpuPerTick)
			why, at := f.run(time.Minute)
			switch {
			case tc.want == "" && why != "":
				t.Fatalf("verdict after %v: %s", at, why)
			case tc.want != "" && !strings.Contains(why, tc.want):
				t.Fatalf("verdict %q, want one saying %q", why, tc.want)
			case tc.want != "" && at > tc.within:
				t.Fatalf("verdict after %v, want within %v", at, tc.within)
			}
		})
	}
}

// A check whose bubble deadlocks on a lock is named as such (after
// spinAfter of time with nothing of the check able to run, not HangAfter),
// although it uses no CPU.
func TestGuardNamesLockDeadlock(t *testing.T) {
	defer tainted.Store(nil)
	var mu sync.Mutex
	mu.Lock()
	var wg sync.WaitGroup
	c := Check{Name: "x/lock", Run: func(t *testing.T, cfg Config) error {
		wg.Add(1)
		defer wg.Done()
		synctest.Test(t, func(*testing.T) {
			cfg.Progress.Op("Add(a)")
			go func() {
				mu.Lock()
				defer mu.Unlock() // blocks on the test's lock: the deadlock under test
			}()
			synctest.Wait()
		})
		return nil
	}}
	start := time.Now()
	err := guard(t, c, Config{TraceDir: t.TempDir(), Subject: "test"})
	took := time.Since(start)
	mu.Unlock()
	wg.Wait()
	var v *Violation
	if !errors.As(err, &v) || !strings.Contains(v.Detail, "deadlocks on a lock") {
		t.Fatalf("guard = %v, want a deadlock on a lock", err)
	}
	t.Logf("reported after %v of wall time", took) // the rule, not the time, is the test: load stretches it
}

// A race probe whose own call deadlocks in the subject (the racer's call
// took the lock and kept it) is reported as a hang, not as a spin: the
// racer, idle with no round to run, parks on its own (raceIdlePark)
// instead of spinning until the watchdog's CPU rule fires.
func TestGuardNamesRaceDeadlockAsHang(t *testing.T) {
	defer tainted.Store(nil)
	var mu sync.Mutex
	var wg sync.WaitGroup
	c := Check{Name: "x/race-deadlock", Family: FamilyModel, Run: func(t *testing.T, cfg Config) error {
		wg.Add(1)
		defer wg.Done()
		synctest.Test(t, func(*testing.T) {
			r := newRacer()
			defer r.Close()
			cfg.Progress.Op("Race(Lock, Lock)")
			// b takes the lock and returns holding it: a's Lock waits
			// for ever (not durably: the bubble never idles).
			var held atomic.Bool
			r.Race(0, func() {
				for !held.Load() {
					runtime.Gosched()
				}
				mu.Lock()
			}, func() { mu.Lock(); held.Store(true) })
		})
		return nil
	}}
	err := guard(t, c, Config{TraceDir: t.TempDir(), Subject: "test"})
	mu.Unlock() // a's Lock returns; the probe closes its racer
	wg.Wait()
	var v *Violation
	if !errors.As(err, &v) || v.Guarantee != GTermination {
		t.Fatalf("guard = %v, want a %s violation", err, GTermination)
	}
	if !strings.Contains(v.Detail, "hangs or deadlocks") {
		t.Errorf("the verdict is not a hang:\n%s", v.Detail)
	}
}
