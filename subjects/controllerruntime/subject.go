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
	"github.com/kverify/kverify/subjects/upstream"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
)

// Name is the subject's name in kverify's registry.
const Name = "controller-runtime"

// Version is the controller-runtime version under test.
const Version = "sigs.k8s.io/controller-runtime@v0.25.3"

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
	p.AddWithOpts(priorityqueue.AddOpts{Priority: &priority}, item)
}

func (p prioritized) AddAfterWithPriority(item string, priority int, d time.Duration) {
	p.AddWithOpts(priorityqueue.AddOpts{Priority: &priority, After: d}, item)
}

func (p prioritized) AddRateLimitedAfter(item string, priority int, after time.Duration) {
	p.AddWithOpts(priorityqueue.AddOpts{Priority: &priority, After: after, RateLimited: true}, item)
}
