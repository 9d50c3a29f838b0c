package workqueue

import (
	"fmt"
	"math"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kverify/kverify/props/checkkit"
	"k8s.io/utils/clock"
)

// CheckRateLimitingCollaborators is the rate-limiting queue's check of a
// faulty limiter (issue 27, class 3).
const CheckRateLimitingCollaborators = "ratelimiting/collaborators"

// faultyLimiter answers When from a script of delays and panics where the
// script says so (a nil entry); Forget and NumRequeues panic when told to.
// It is what a user's limiter can be: anything that has the method set.
type faultyLimiter struct {
	mu           sync.Mutex
	next         func(item string) (time.Duration, bool) // false: panic
	panicForget  bool
	panicRequeue bool
	// caller is the goroutine of the queue call in progress: a panic is
	// raised only there. A queue that calls the limiter on a goroutine
	// of its own would have the panic crash the test binary; the limiter
	// answers 0 there instead and notes it in elsewhere.
	caller    int64
	elsewhere string
}

// goid is the calling goroutine's number, from its stack header
// ("goroutine 42 [running]:"): the only way to tell which goroutine calls
// the limiter.
func goid() int64 {
	var buf [64]byte
	f := strings.Fields(string(buf[:runtime.Stack(buf[:], false)]))
	if len(f) < 2 {
		return -1
	}
	id, _ := strconv.ParseInt(f[1], 10, 64)
	return id
}

// from marks the calling goroutine as the one a panic may be raised on.
func (f *faultyLimiter) from() {
	f.mu.Lock()
	f.caller = goid()
	f.mu.Unlock()
}

// raise panics on the caller's goroutine; elsewhere it records what was
// called and returns false.
func (f *faultyLimiter) raise(what string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if goid() != f.caller {
		if f.elsewhere == "" {
			f.elsewhere = what
		}
		return false
	}
	panic(errLimiter)
}

// errLimiter is the value a faulty limiter panics with.
const errLimiter = "faulty limiter"

func (f *faultyLimiter) When(item string) time.Duration {
	f.mu.Lock()
	d, ok := f.next(item)
	f.mu.Unlock()
	if !ok && !f.raise("When("+item+")") {
		return 0
	}
	return d
}

func (f *faultyLimiter) Forget(string) {
	f.mu.Lock()
	p := f.panicForget
	f.mu.Unlock()
	if p {
		f.raise("Forget")
	}
}

func (f *faultyLimiter) NumRequeues(string) int {
	f.mu.Lock()
	p := f.panicRequeue
	f.mu.Unlock()
	if p {
		f.raise("NumRequeues")
	}
	return 0
}

// callOutcome is how a call on the queue ended: it returned, it panicked
// (with what), or it was still blocked after the watchdog.
type callOutcome struct {
	returned bool
	panicked any
}

// call runs f on its own goroutine and reports how it ended within the
// watchdog: a call that blocks (on a mutex a panic left locked) is
// reported, not waited for.
func call(f func()) callOutcome {
	var out callOutcome
	// ReturnsWithin counts, on the real clock, only time when none of the
	// check's goroutines could run: a call starved on a loaded machine is
	// waited for, one blocked on a lock is not.
	if !checkkit.ReturnsWithin(checkkit.Watchdog, func() {
		defer func() {
			if p := recover(); p != nil {
				out.panicked = p
			}
		}()
		f()
		out.returned = true
	}) {
		return callOutcome{}
	}
	return out
}

// collaborators drives a rate-limiting queue on the real clock with a
// limiter that fails in each way a user's limiter can, and checks
// client-go's outcome (rate_limiting_queue.go: AddRateLimited is
// AddAfter(item, When(item)), Forget and NumRequeues forward):
//
//   - When panics: AddRateLimited panics with the limiter's value, adds
//     nothing, and the queue goes on working (Add, AddAfter, Get, Done,
//     Len, a later AddRateLimited and ShutDown all return);
//   - Forget or NumRequeues panics: the panic reaches the caller and the
//     queue goes on working;
//   - When answers 0, a negative delay or math.MinInt64: the item is
//     queued before AddRateLimited returns (Len counts it at once);
//   - When answers math.MaxInt64: the item never comes, and ShutDown
//     returns with it waiting.
func collaborators(s Subject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, cfg checkkit.Config) error {
		return checkkit.Save(t, cfg, ComponentRateLimit, CheckRateLimitingCollaborators, collaboratorsScenario(s, cfg))
	}
}

// handOverSettle is how long the collaborators' script lets a queue that
// hands adds over (Profile.AddHandedOver) settle before its Len counts.
const handOverSettle = 100 * time.Millisecond

// collaboratorsScenario is collaborators' fixed script.
func collaboratorsScenario(s Subject, cfg checkkit.Config) error {
	lim := &faultyLimiter{}
	answers := map[string]time.Duration{"zero": 0, "negative": -time.Second, "min": math.MinInt64, "huge": math.MaxInt64, "later": 50 * time.Millisecond}
	lim.next = func(item string) (time.Duration, bool) {
		d, ok := answers[item]
		return d, ok
	}
	q := s.NewRateLimiting(Deps{Clock: clock.RealClock{}}, lim)
	// A violation (or a declared one) ends the script before its own
	// ShutDown: the queue's goroutines must not outlive the check. A
	// second ShutDown may panic or block on a broken queue: call bounds
	// and recovers it.
	defer call(q.ShutDown)
	var steps []string
	step := func(op string) {
		steps = append(steps, op)
		cfg.Progress.Op(op)
	}
	broke := func(g, format string, args ...any) error {
		return checkkit.Broke(g, "after %s: %s", strings.Join(steps, ", "), fmt.Sprintf(format, args...))
	}
	works := func(op string, f func()) error {
		step(op)
		out := call(f)
		switch {
		case out.panicked != nil:
			return broke(GLimiterFault, "%s panicked: %v", op, out.panicked)
		case !out.returned:
			return broke(GLimiterFault, "%s still blocked after %v: the limiter's panic left the queue stuck", op, checkkit.Watchdog)
		}
		return nil
	}
	panics := func(op string, f func()) error {
		step(op)
		out := call(func() { lim.from(); f() })
		elsewhere := ""
		// A call that returned without the panic is a violation either
		// way; a queue that hands the call to a goroutine of its own
		// makes it there soon after, and saying so is the better report.
		for i := 0; i < 100 && out.returned && elsewhere == ""; i++ {
			lim.mu.Lock()
			elsewhere = lim.elsewhere
			lim.mu.Unlock()
			if elsewhere == "" {
				time.Sleep(time.Millisecond)
			}
		}
		switch {
		case elsewhere != "":
			return broke(GLimiterFault, "%s: the queue called the limiter's %s on a goroutine of its own, not within the call: a panicking limiter would crash the process", op, elsewhere)
		case !out.returned && out.panicked == nil:
			return broke(GLimiterFault, "%s still blocked after %v", op, checkkit.Watchdog)
		case out.panicked == nil:
			return broke(GLimiterFault, "%s returned: the limiter's panic must reach the caller, as in client-go", op)
		case out.panicked != errLimiter:
			return broke(GLimiterFault, "%s panicked with %v, want the limiter's %q", op, out.panicked, errLimiter)
		}
		return nil
	}
	lenIs := func(want int) error {
		var n int
		if err := works("Len", func() { n = q.Len() }); err != nil {
			return err
		}
		if n != want && s.Profile.AddHandedOver {
			// Its goroutines carry an item from one inner queue to the
			// other, where Len counts it in neither: let them settle
			// (the time counted is only the time no goroutine of the
			// check could run, so load does not change the verdict).
			checkkit.Eventually(handOverSettle, func() bool { n = q.Len(); return n == want })
		}
		if n != want {
			return broke(GLimiterFault, "Len() = %d, want %d", n, want)
		}
		return nil
	}
	get := func(want string) error {
		var got string
		var shut bool
		if err := works("Get", func() { got, shut = q.Get() }); err != nil {
			return err
		}
		if shut || got != want {
			return broke(GLimiterFault, "Get() = %q, %v, want %q", got, shut, want)
		}
		return works("Done("+got+")", func() { q.Done(got) })
	}
	for _, f := range []func() error{
		func() error { return panics("AddRateLimited(panics)", func() { q.AddRateLimited("panics") }) },
		func() error { return lenIs(0) },
		func() error { return works("AddAfter(x,1ms)", func() { q.AddAfter("x", time.Millisecond) }) },
		func() error { return get("x") },
		func() error { return works("Add(y)", func() { q.Add("y") }) },
		func() error { return get("y") },
		func() error { return panics("AddRateLimited(panics)", func() { q.AddRateLimited("panics") }) },
		func() error { return works("AddRateLimited(later)", func() { q.AddRateLimited("later") }) },
		func() error { return get("later") },
		func() error {
			lim.mu.Lock()
			lim.panicForget, lim.panicRequeue = true, true
			lim.mu.Unlock()
			return panics("Forget(a)", func() { q.Forget("a") })
		},
		func() error { return panics("NumRequeues(a)", func() { q.NumRequeues("a") }) },
		func() error { return works("AddRateLimited(zero)", func() { q.AddRateLimited("zero") }) },
		func() error { return lenIs(1) },
		func() error { return works("AddRateLimited(negative)", func() { q.AddRateLimited("negative") }) },
		func() error { return lenIs(2) },
		func() error { return works("AddRateLimited(min)", func() { q.AddRateLimited("min") }) },
		func() error { return lenIs(3) },
		func() error { return get("zero") },
		func() error { return get("negative") },
		func() error { return get("min") },
		func() error { return works("AddRateLimited(huge)", func() { q.AddRateLimited("huge") }) },
		func() error { step("Sleep(20ms)"); time.Sleep(20 * time.Millisecond); return lenIs(0) },
		func() error { return works("ShutDown", q.ShutDown) },
		func() error { return lenIs(0) },
	} {
		if err := f(); err != nil {
			return err
		}
	}
	return nil
}
