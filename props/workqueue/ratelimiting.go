package workqueue

import (
	"fmt"
	"sync"
	"time"

	"github.com/kverify/kverify/props/checkkit"
)

// Check names of the rate-limiting queue.
const (
	CheckRateLimitingModel    = "ratelimiting/model"
	CheckRateLimitingDelegate = "ratelimiting/delegates"
)

// rateLimitingChecks returns the rate-limiting queue checks; none without
// NewRateLimiting.
func rateLimitingChecks(s Subject) []checkkit.Check {
	if s.NewRateLimiting == nil {
		return nil
	}
	return []checkkit.Check{
		{Name: CheckRateLimitingModel, Family: checkkit.FamilyModel,
			Guarantee: "AddRateLimited(x) calls the limiter's When(x) exactly once and then behaves as AddAfter(x, When(x)) against the delaying model (scripted delays, including 0, negative and huge ones), mixed with AddAfter and the queue operations",
			Run:       delayingMachineCheck(s, CheckRateLimitingModel, dMode{RateLimited: true})},
		{Name: CheckRateLimitingDelegate, Family: checkkit.FamilyModel,
			Guarantee: "Forget(x) and NumRequeues(x) call the limiter's Forget(x) and NumRequeues(x) exactly once, NumRequeues returns the limiter's answer, and neither touches the queue or its waiting items; with metrics (Subject.Metrics; then sleeps of at most a minute), among AddRateLimited, AddAfter and the queue operations, the metrics are the model's as in delaying/metrics: AddRateLimited counted as a retry (as AddAfter is), Forget and NumRequeues counting nothing",
			Run:       delayingMachineCheck(s, CheckRateLimitingDelegate, delegatesMode(s))},
		{Name: CheckRateLimitingExhaustive, Family: checkkit.FamilyExhaustive,
			Guarantee: fmt.Sprintf("every sequence of up to %d steps (AddRateLimited of two keys with the limiter answering 1s or 0, Forget, NumRequeues, Gets and Dones by two workers, sleeping to the next ready time and by a second, ShutDown), each ending in ShutDown, breadth first with one run per state: ratelimiting/model's and ratelimiting/delegates' guarantees after every step", rateLimitingDepth),
			Run:       delayingExhaustive(s, CheckRateLimitingExhaustive, dMode{RateLimited: true, Delegates: true}, rateLimitingAlphabet, rateLimitingDepth)},
		{Name: CheckRateLimitingCollaborators, Family: checkkit.FamilyModel,
			Guarantee: "a limiter that panics in When, Forget or NumRequeues has its panic reach the caller, AddRateLimited then adds nothing and the queue goes on working; When answering 0, a negative delay or math.MinInt64 queues the item before AddRateLimited returns, math.MaxInt64 never",
			Run:       collaborators(s)},
	}
}

// delegatesMode is ratelimiting/delegates' mode for s: the rate-limiting
// queue's metrics are compared there when s declares metrics.
func delegatesMode(s Subject) dMode {
	return dMode{RateLimited: true, Delegates: true, Metrics: s.Metrics}
}

// scriptedLimiter is a recording fake rate limiter: When returns the delays
// the machine scripted, in order (0 once the script is empty),
// NumRequeues the number the machine set for the item, and every call is
// counted.
type scriptedLimiter struct {
	mu     sync.Mutex
	delays []time.Duration
	num    map[string]int
	calls  limiterCalls
}

// limiterCalls counts the calls of a scriptedLimiter; last* are the items of
// the last call of each method.
type limiterCalls struct {
	when, forget, numRequeues             int
	lastWhen, lastForget, lastNumRequeues string
}

func newScriptedLimiter() *scriptedLimiter {
	return &scriptedLimiter{num: map[string]int{}}
}

func (l *scriptedLimiter) When(item string) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls.when++
	l.calls.lastWhen = item
	if len(l.delays) == 0 {
		return 0
	}
	d := l.delays[0]
	l.delays = l.delays[1:]
	return d
}

func (l *scriptedLimiter) Forget(item string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls.forget++
	l.calls.lastForget = item
}

func (l *scriptedLimiter) NumRequeues(item string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls.numRequeues++
	l.calls.lastNumRequeues = item
	return l.num[item]
}

// script makes d the answer of the next When, dropping answers that an
// earlier AddRateLimited did not ask for.
func (l *scriptedLimiter) script(d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.delays = append(l.delays[:0], d)
}

func (l *scriptedLimiter) setNum(item string, n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.num[item] = n
}

func (l *scriptedLimiter) snapshot() limiterCalls {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.calls
}

// expect checks that, since before, the limiter got exactly when, forget
// and numRequeues calls, each for item.
func (l *scriptedLimiter) expect(before limiterCalls, item string, when, forget, numRequeues int) error {
	now := l.snapshot()
	check := func(method string, got, want int, last string) error {
		switch {
		case got != want:
			return fmt.Errorf("the limiter's %s was called %d time(s), want %d", method, got, want)
		case want > 0 && last != item:
			return fmt.Errorf("the limiter's %s was called for %q, want %q", method, last, item)
		}
		return nil
	}
	if err := check("When", now.when-before.when, when, now.lastWhen); err != nil {
		return err
	}
	if err := check("Forget", now.forget-before.forget, forget, now.lastForget); err != nil {
		return err
	}
	return check("NumRequeues", now.numRequeues-before.numRequeues, numRequeues, now.lastNumRequeues)
}
