package upstream

import (
	"slices"

	"github.com/kverify/kverify/props"
	pwq "github.com/kverify/kverify/props/workqueue"
	"k8s.io/client-go/util/workqueue"
)

// Workqueue returns client-go's workqueue as a subject. *workqueue.Typed
// satisfies the subject's Queue as it is.
func Workqueue() pwq.Subject {
	return pwq.Subject{
		New: func(d pwq.Deps) pwq.Queue {
			cfg := workqueue.TypedQueueConfig[string]{Clock: d.Clock}
			if d.Metrics {
				cfg.Name, cfg.MetricsProvider = "kverify", nopProvider{}
			}
			return workqueue.NewTypedWithConfig(cfg)
		},
		NewDelaying:     delaying(),
		NewRateLimiting: rateLimiting(),
		Limiters:        Limiters(),
	}
}

// WorkqueueDivergences are client-go's known differences from the
// workqueue family's contract: queue, delaying queue and rate limiters.
var WorkqueueDivergences = slices.Concat(queueDivergences, DelayingDivergences, LimiterDivergences)

var queueDivergences = []props.Divergence{
	{
		Check:    pwq.CheckDrain,
		Reason:   "ShutDownWithDrain waits only while the processing set is non-empty; items still queued are not waited for, although its doc says it \"waits until all items in the queue have been processed\"",
		Upstream: Version + "/util/workqueue/queue.go:321-342",
	},
	{
		Check:    pwq.CheckDoneUnheld,
		Reason:   "Done re-queues a dirty item without checking that it was being processed, so Add(x); Done(x) holds x twice in the FIFO (Len 2) and hands it out twice",
		Upstream: Version + "/util/workqueue/queue.go:289-302",
	},
}

// nopProvider is a metrics provider that is not client-go's internal noop,
// so that a named queue starts its metrics goroutine (queue.go:175-179).
type nopProvider struct{}

type nopMetric struct{}

func (nopMetric) Inc()            {}
func (nopMetric) Dec()            {}
func (nopMetric) Set(float64)     {}
func (nopMetric) Observe(float64) {}

func (nopProvider) NewDepthMetric(string) workqueue.GaugeMetric       { return nopMetric{} }
func (nopProvider) NewAddsMetric(string) workqueue.CounterMetric      { return nopMetric{} }
func (nopProvider) NewLatencyMetric(string) workqueue.HistogramMetric { return nopMetric{} }
func (nopProvider) NewWorkDurationMetric(string) workqueue.HistogramMetric {
	return nopMetric{}
}
func (nopProvider) NewUnfinishedWorkSecondsMetric(string) workqueue.SettableGaugeMetric {
	return nopMetric{}
}
func (nopProvider) NewLongestRunningProcessorSecondsMetric(string) workqueue.SettableGaugeMetric {
	return nopMetric{}
}
func (nopProvider) NewRetriesMetric(string) workqueue.CounterMetric { return nopMetric{} }
