// Package knative puts knative.dev/pkg's controller work queue (the
// two-lane queue every controller.Impl runs on) behind the workqueue
// suite's subject interfaces, and controller.Impl itself, with a client-go
// SharedIndexInformer as knative's injection informers are, behind the
// controller component's (controller.go).
//
// The two-lane queue is three client-go queues joined by goroutines: a
// fast lane (the queue's own Add, AddAfter, AddRateLimited), a slow lane
// (Impl.EnqueueSlow, global resyncs), and a consumer queue that a
// goroutine fills from both, preferring the fast lane; Get and Done are
// the consumer queue's. It is unexported: the adapter reaches it, as a
// controller does, through controller.NewContext(...).WorkQueue().
//
// It is a module of its own: knative.dev/pkg brings zap, OpenCensus and
// its own client-go into the build, which the main module does not need.
// Run its suite from this directory (go test ./...) or with kverify verify
// --subject knative.
package knative

//lint:file-ignore SA1019 knative's Impl.WorkQueue is client-go's untyped RateLimitingInterface

import (
	"context"
	"time"

	prl "github.com/kverify/kverify/props/ratelimit"
	pwq "github.com/kverify/kverify/props/workqueue"
	wq "github.com/kverify/kverify/spec/workqueue"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"knative.dev/pkg/controller"
	"knative.dev/pkg/logging"
)

// Name is the subject's name in kverify's registry.
const Name = "knative"

// Version is the knative.dev/pkg version under test: the newest the Go
// module proxy resolves (knative tags its releases knative-vX.Y.Z, which
// are not module versions; @latest is this pseudo-version).
const Version = "knative.dev/pkg@v0.0.0-20230612155445-74c4be5e935e"

// Subject returns the two-lane queue as a workqueue subject. Every queue
// kind is the Impl's WorkQueue (a RateLimitingInterface: its Add,
// AddAfter and AddRateLimited go to the fast lane). The queue takes no
// clock (client-go's default real clock); inside a synctest bubble it is
// the bubble's.
func Subject() pwq.Subject {
	return pwq.Subject{
		New:         func(d pwq.Deps) pwq.Queue { return newQueue(nil) },
		NewDelaying: func(d pwq.Deps) pwq.Delaying { return newQueue(nil) },
		NewRateLimiting: func(d pwq.Deps, l prl.Limiter) pwq.RateLimiting {
			return newQueue(l)
		},
		NoClock: true,
		Profile: wq.Knative,
	}
}

// nop is a reconciler that is never called: the suite drives the queue,
// not the Impl's workers.
type nop struct{}

func (nop) Reconcile(context.Context, string) error { return nil }

// newQueue makes an Impl with the suite's rate limiter (else the one
// NewContext picks, client-go's DefaultControllerRateLimiter) and returns
// its work queue.
func newQueue(l prl.Limiter) queue {
	// A reporter of its own: knative's default (MustNewStatsReporter)
	// registers OpenCensus views and talks to a package-level goroutine
	// that the metrics package starts at init, outside any synctest bubble.
	opts := controller.ControllerOptions{WorkQueueName: "kverify", Logger: logging.FromContext(context.Background()), Reporter: noReports{}}
	if l != nil {
		opts.RateLimiter = limiter{l}
	}
	impl := controller.NewContext(context.Background(), nop{}, opts)
	return queue{impl.WorkQueue()}
}

// noReports is a StatsReporter that reports nothing.
type noReports struct{}

func (noReports) ReportQueueDepth(int64) error { return nil }
func (noReports) ReportReconcile(time.Duration, string, types.NamespacedName) error {
	return nil
}

// limiter is the suite's string limiter as client-go's untyped one.
type limiter struct{ l prl.Limiter }

func (r limiter) When(item interface{}) time.Duration { return r.l.When(item.(string)) }
func (r limiter) Forget(item interface{})             { r.l.Forget(item.(string)) }
func (r limiter) NumRequeues(item interface{}) int    { return r.l.NumRequeues(item.(string)) }

// queue is the two-lane queue with string items.
type queue struct {
	q workqueue.RateLimitingInterface
}

func (q queue) Add(item string)                       { q.q.Add(item) }
func (q queue) AddAfter(item string, d time.Duration) { q.q.AddAfter(item, d) }
func (q queue) AddRateLimited(item string)            { q.q.AddRateLimited(item) }
func (q queue) Forget(item string)                    { q.q.Forget(item) }
func (q queue) NumRequeues(item string) int           { return q.q.NumRequeues(item) }
func (q queue) Done(item string)                      { q.q.Done(item) }
func (q queue) Len() int                              { return q.q.Len() }
func (q queue) ShutDown()                             { q.q.ShutDown() }
func (q queue) ShutDownWithDrain()                    { q.q.ShutDownWithDrain() }
func (q queue) ShuttingDown() bool                    { return q.q.ShuttingDown() }

func (q queue) Get() (string, bool) {
	item, shutdown := q.q.Get()
	s, _ := item.(string)
	return s, shutdown
}
