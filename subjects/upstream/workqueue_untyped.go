//go:build clientgo_before_v0_31

package upstream

import (
	"testing"
	"time"

	"github.com/kverify/kverify/props/checkkit"
	prl "github.com/kverify/kverify/props/ratelimit"
	pwq "github.com/kverify/kverify/props/workqueue"
	"github.com/kverify/kverify/subjects/suite"
	"github.com/kverify/kverify/traces"
	"golang.org/x/time/rate"
	"k8s.io/client-go/util/workqueue"
)

// Before v0.31 client-go's work queues and rate limiters are untyped: they
// hold interface{} items. The adapters of those eras (workqueue_v0_*.go)
// put them behind the subject's string interfaces with the wrappers below;
// the items the suite adds are strings, so every item a queue hands back
// is one. Each era file defines Workqueue(), shutDownWithDrain, maxWait
// and eraChecks.

// strQueue is an untyped queue on strings.
type strQueue struct{ q workqueue.Interface }

func (w strQueue) Add(item string) { w.q.Add(item) }
func (w strQueue) Get() (string, bool) {
	item, shutdown := w.q.Get()
	s, _ := item.(string)
	return s, shutdown
}
func (w strQueue) Done(item string)   { w.q.Done(item) }
func (w strQueue) Len() int           { return w.q.Len() }
func (w strQueue) ShutDown()          { w.q.ShutDown() }
func (w strQueue) ShutDownWithDrain() { shutDownWithDrain(w.q) }
func (w strQueue) ShuttingDown() bool { return w.q.ShuttingDown() }
func newStrDelaying(d workqueue.DelayingInterface) strDelaying {
	return strDelaying{strQueue{d}, d}
}

// strDelaying is an untyped delaying queue on strings.
type strDelaying struct {
	strQueue
	d workqueue.DelayingInterface
}

func (w strDelaying) AddAfter(item string, d time.Duration) { w.d.AddAfter(item, d) }

// strRateLimiting is an untyped rate-limiting queue on strings.
type strRateLimiting struct {
	strDelaying
	r workqueue.RateLimitingInterface
}

func newStrRateLimiting(r workqueue.RateLimitingInterface) strRateLimiting {
	return strRateLimiting{newStrDelaying(r), r}
}

func (w strRateLimiting) AddRateLimited(item string) { w.r.AddRateLimited(item) }
func (w strRateLimiting) Forget(item string)         { w.r.Forget(item) }
func (w strRateLimiting) NumRequeues(item string) int {
	return w.r.NumRequeues(item)
}

// strLimiter is an untyped client-go rate limiter on strings.
type strLimiter struct{ l workqueue.RateLimiter }

func (s strLimiter) When(item string) time.Duration { return s.l.When(item) }
func (s strLimiter) Forget(item string)             { s.l.Forget(item) }
func (s strLimiter) NumRequeues(item string) int    { return s.l.NumRequeues(item) }

// anyLimiter is a suite limiter as an untyped client-go one: the queue and
// the combinators only ever pass it the strings they were given.
type anyLimiter struct{ l prl.Limiter }

func (a anyLimiter) When(item interface{}) time.Duration { return a.l.When(item.(string)) }
func (a anyLimiter) Forget(item interface{})             { a.l.Forget(item.(string)) }
func (a anyLimiter) NumRequeues(item interface{}) int    { return a.l.NumRequeues(item.(string)) }

// untyped is l as client-go takes it: nil stays a nil interface (as the
// typed adapter passes it), one of client-go's own limiters is unwrapped.
func untyped(l prl.Limiter) workqueue.RateLimiter {
	switch l := l.(type) {
	case nil:
		return nil
	case strLimiter:
		return l.l
	}
	return anyLimiter{l}
}

// Limiters returns client-go's untyped rate limiters as a subject. Its
// constructors cannot fail: they never return an error. MaxWait is nil
// before v0.23 (NewWithMaxWaitRateLimiter arrived then).
func Limiters() prl.Subject {
	return prl.Subject{
		Exponential: func(base, max time.Duration) (prl.Limiter, error) {
			return strLimiter{workqueue.NewItemExponentialFailureRateLimiter(base, max)}, nil
		},
		FastSlow: func(fast, slow time.Duration, maxFast int) (prl.Limiter, error) {
			return strLimiter{workqueue.NewItemFastSlowRateLimiter(fast, slow, maxFast)}, nil
		},
		Bucket: func(qps float64, burst int) (prl.Limiter, error) {
			return strLimiter{&workqueue.BucketRateLimiter{Limiter: rate.NewLimiter(rate.Limit(qps), burst)}}, nil
		},
		MaxOf: func(ls ...prl.Limiter) (prl.Limiter, error) {
			return strLimiter{maxOf(workqueue.NewMaxOfRateLimiter, ls)}, nil
		},
		MaxWait:           maxWait(),
		DefaultController: func() prl.Limiter { return strLimiter{workqueue.DefaultControllerRateLimiter()} },
		DefaultItemBased:  func() prl.Limiter { return strLimiter{workqueue.DefaultItemBasedRateLimiter()} },
	}
}

// workqueueEntries binds the untyped work queue, delaying queue and rate
// limiters (before v0.31), with the era's changes to the check lists
// (eraChecks); the declarations' release ranges say which apply to it.
func workqueueEntries() []suite.Entry {
	replay := func(t *testing.T, tr *traces.Trace) error { return pwq.Replay(t, Workqueue(), tr) }
	return []suite.Entry{
		entry(pwq.Component, func() []checkkit.Check { return eraChecks(pwq.QueueChecks(Workqueue())) }, QueueDivergences, replay),
		entry(pwq.ComponentDelaying, func() []checkkit.Check { return eraChecks(pwq.DelayingChecks(Workqueue())) }, DelayingDivergences, replay),
		entry(pwq.ComponentRateLimit, func() []checkkit.Check { return eraChecks(pwq.RateLimitChecks(Workqueue())) }, LimiterDivergences, replay),
	}
}

// maxOf calls client-go's NewMaxOfRateLimiter on ls. Its parameter is
// ...RateLimiter before v0.31 and ...TypedRateLimiter[any] since (where
// this file builds only for go vet): T is whichever the release has, and a
// nil limiter stays a nil interface.
func maxOf[T any](ctor func(...T) workqueue.RateLimiter, ls []prl.Limiter) workqueue.RateLimiter {
	parts := make([]T, len(ls))
	for i, l := range ls {
		if u := untyped(l); u != nil {
			parts[i] = any(u).(T)
		}
	}
	return ctor(parts...)
}
