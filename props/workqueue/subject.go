// Package workqueue is the conformance suite for work queues: a plain queue,
// a delaying queue and a rate-limiting queue, checked against the models in
// spec/workqueue and spec/delaying.
//
// Give Checks a Subject (factories for the queue kinds the implementation
// has) and run the result with props.Run:
//
//	props.Run(t, workqueue.Checks(subject))
//
// Items are strings. Every factory receives its dependencies explicitly.
package workqueue

import (
	"time"

	"github.com/kverify/kverify/props/ratelimit"
	wq "github.com/kverify/kverify/spec/workqueue"
	"k8s.io/utils/clock"
)

// Queue is the method set of a work queue (client-go's TypedInterface[string]).
type Queue interface {
	Add(item string)
	Get() (item string, shutdown bool)
	Done(item string)
	Len() int
	ShutDown()
	ShutDownWithDrain()
	ShuttingDown() bool
}

// Delaying is a Queue that can add an item later.
type Delaying interface {
	Queue
	AddAfter(item string, d time.Duration)
}

// RateLimiting is a Delaying queue that asks a rate limiter for the delay.
type RateLimiting interface {
	Delaying
	AddRateLimited(item string)
	Forget(item string)
	NumRequeues(item string) int
}

// Deps are a factory's explicit dependencies.
type Deps struct {
	// Clock is the clock to use; checks that run in a synctest bubble pass
	// the real clock, which the bubble fakes.
	Clock clock.WithTicker
	// Metrics asks for a queue with metrics on (named, with a provider), so
	// that leak checks cover the goroutines metrics start.
	Metrics bool
	// Recorder, when set, asks for metrics on with a provider whose
	// metrics are Recorder's (depth, adds, latency, work duration,
	// unfinished work, longest running, retries).
	Recorder *Metrics
	// Limiter, when set, is the rate limiter a queue with priorities asks
	// (NewPrioritized; queue/priority's composed adds script it).
	Limiter ratelimit.Limiter
}

// MetricsRecorder is the recorder a factory wires into the queue's metrics
// provider: Recorder, or a throwaway one when only Metrics is asked for;
// nil means metrics off.
func (d Deps) MetricsRecorder() *Metrics {
	if d.Recorder != nil {
		return d.Recorder
	}
	if d.Metrics {
		return new(Metrics)
	}
	return nil
}

// Subject is an implementation under test. New is required; a nil
// NewDelaying or NewRateLimiting skips the checks that need it.
type Subject struct {
	New             func(Deps) Queue
	NewDelaying     func(Deps) Delaying
	NewRateLimiting func(Deps, ratelimit.Limiter) RateLimiting
	// NewWithOrder, if the queue takes pluggable storage, makes a queue
	// that keeps its waiting items in order (see Order); nil skips
	// queue/order.
	NewWithOrder func(Deps, Order) Queue
	// NewPrioritized, if the queue has priorities, makes one (see
	// Prioritized); nil skips queue/priority. Declare Profile.Priorities
	// with it.
	NewPrioritized func(Deps) Prioritized
	// Limiters are the rate limiters that come with the queue.
	Limiters ratelimit.Subject
	// Metrics says the factories honour Deps.Recorder: a queue asked for
	// one reports its metrics (depth, adds, latency, work duration,
	// retries) to it through its metrics provider. Without it the metrics
	// checks are not offered.
	Metrics bool
	// NoClock says the queue takes no clock (it reads time.Now): the
	// checks that inject a fake clock are not offered; those that run in a
	// synctest bubble still apply, as the bubble fakes time.Now.
	NoClock bool
	// Profile is the semantics the implementation declares where work
	// queues differ on purpose (spec/workqueue.Profile); the zero value is
	// client-go's. The models the checks hold the subject to follow it.
	Profile wq.Profile
}
