//go:build !controllerruntime_before_v0_20

// Package controllerruntime puts controller-runtime's priority queue
// (sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue, the default
// queue of controller-runtime's controllers) behind the workqueue suite's
// subject interfaces.
//
// It is a module of its own: controller-runtime brings Prometheus, zap and
// more into the build, which the main module does not need. Run its suite
// from this directory (go test ./...) or with kverify verify --subject
// controller-runtime.
package controllerruntime

import (
	"time"

	prl "github.com/kverify/kverify/props/ratelimit"
	pwq "github.com/kverify/kverify/props/workqueue"
	wq "github.com/kverify/kverify/spec/workqueue"
	"github.com/kverify/kverify/subjects/suite"
	"github.com/kverify/kverify/subjects/upstream"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
)

// Subject returns the priority queue as a workqueue subject: every queue
// kind is a priorityqueue.PriorityQueue[string], which implements client-go's
// TypedRateLimitingInterface. The queue takes no clock (it reads time.Now),
// so checks that inject a fake clock see it ignored; inside a synctest
// bubble the real clock is the bubble's.
func Subject() pwq.Subject {
	return pwq.Subject{
		New:         func(d pwq.Deps) pwq.Queue { return newQueue(d, nil) },
		NewDelaying: func(d pwq.Deps) pwq.Delaying { return newQueue(d, nil) },
		NewRateLimiting: func(d pwq.Deps, l prl.Limiter) pwq.RateLimiting {
			return newQueue(d, l)
		},
		NewPrioritized: func(d pwq.Deps) pwq.Prioritized { return prioritized{newQueue(d, d.Limiter)} },
		Profile:        wq.ControllerRuntime,
		NoClock:        true,
		Metrics:        true,
	}
}

// newQueue makes a priority queue, with the suite's metrics recorder when
// asked for one and the suite's rate limiter when l is not nil (else the
// queue's default, ItemExponentialFailureRateLimiter(5ms, 1000s)).
func newQueue(d pwq.Deps, l prl.Limiter) priorityqueue.PriorityQueue[string] {
	name := "" // no name: no metrics, as the queue decides
	var opts []priorityqueue.Opt[string]
	if m := d.MetricsRecorder(); m != nil {
		name = "kverify"
		opts = append(opts, func(o *priorityqueue.Opts[string]) { o.MetricProvider = upstream.MetricsProvider(m) })
	}
	if l != nil {
		var rl workqueue.TypedRateLimiter[string] = l
		opts = append(opts, func(o *priorityqueue.Opts[string]) { o.RateLimiter = rl })
	}
	return priorityqueue.New(name, opts...)
}

// prioritized is the priority queue as a Prioritized subject:
// AddWithPriority is AddWithOpts with the priority.
type prioritized struct {
	priorityqueue.PriorityQueue[string]
}

func (p prioritized) AddWithPriority(item string, priority int) {
	p.AddWithOpts(addOpts(priority, 0, false), item)
}

func (p prioritized) AddAfterWithPriority(item string, priority int, d time.Duration) {
	p.AddWithOpts(addOpts(priority, d, false), item)
}

func (p prioritized) AddRateLimitedAfter(item string, priority int, after time.Duration) {
	p.AddWithOpts(addOpts(priority, after, true), item)
}

// queueEntries bind the work queue family's checks to the priority queue.
func queueEntries() []suite.Entry {
	return suite.WorkqueueFamily(Name, Subject(), forRelease(QueueDivergences, historyQueue), forRelease(DelayingDivergences, historyDelaying), forRelease(RateLimitDivergences, historyRateLimit))
}
