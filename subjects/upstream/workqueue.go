package upstream

import (
	"slices"

	"github.com/kverify/kverify/props/checkkit"
	pwq "github.com/kverify/kverify/props/workqueue"
	"k8s.io/client-go/util/workqueue"
)

// Workqueue returns client-go's workqueue as a subject. *workqueue.Typed
// satisfies the subject's Queue as it is.
func Workqueue() pwq.Subject {
	return pwq.Subject{
		New: func(d pwq.Deps) pwq.Queue {
			cfg := workqueue.TypedQueueConfig[string]{Clock: d.Clock}
			if m := d.MetricsRecorder(); m != nil {
				cfg.Name, cfg.MetricsProvider = "kverify", recProvider{m}
			}
			return workqueue.NewTypedWithConfig(cfg)
		},
		NewWithOrder: func(d pwq.Deps, o pwq.Order) pwq.Queue {
			return workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[string]{Clock: d.Clock, Queue: o})
		},
		NewDelaying:     delaying(),
		NewRateLimiting: rateLimiting(),
		Limiters:        Limiters(),
		Metrics:         true,
	}
}

// WorkqueueDivergences are client-go's known differences from the
// workqueue family's contract: queue, delaying queue and rate limiters.
var WorkqueueDivergences = slices.Concat(QueueDivergences, DelayingDivergences, LimiterDivergences)

// QueueDivergences are client-go's known differences from the plain
// queue's contract.
var QueueDivergences = []checkkit.Divergence{
	{
		Check:      pwq.CheckDrain,
		Guarantees: []string{pwq.GDrain},
		Shape:      `^Drain: ShutDownWithDrain returned with items queued \[[^\]]+\] or processing \[\]`,
		Reason:     "ShutDownWithDrain waits only while the processing set is non-empty; items still queued are not waited for, although its doc says it \"waits until all items in the queue have been processed\"",
		Upstream:   Version + "/util/workqueue/queue.go:321-342",
	},
	{
		Check:      pwq.CheckDoneUnheld,
		Guarantees: []string{pwq.GLenLaw},
		Shape:      `^Len law: Len\(\) = \d+, model \d+ \(\d+ more;`,
		Reason:     "Done re-queues a dirty item without checking that it was being processed, so Add(x); Done(x) holds x twice in the FIFO (Len 2) and hands it out twice",
		Upstream:   Version + "/util/workqueue/queue.go:289-302",
	},
}

// MetricsProvider returns a client-go metrics provider that hands out m's
// metrics: other implementations built on client-go's metric interfaces
// (controller-runtime's priority queue) record into the suite with it.
func MetricsProvider(m *pwq.Metrics) workqueue.MetricsProvider { return recProvider{m} }

// recProvider hands out a props Metrics recorder's metrics as client-go's
// metric types. It is not client-go's internal noop provider, so a named
// queue starts its metrics goroutine (queue.go:175-179).
type recProvider struct{ m *pwq.Metrics }

func (p recProvider) NewDepthMetric(string) workqueue.GaugeMetric       { return &p.m.DepthGauge }
func (p recProvider) NewAddsMetric(string) workqueue.CounterMetric      { return &p.m.AddsCounter }
func (p recProvider) NewLatencyMetric(string) workqueue.HistogramMetric { return &p.m.Latency }
func (p recProvider) NewWorkDurationMetric(string) workqueue.HistogramMetric {
	return &p.m.WorkDuration
}
func (p recProvider) NewUnfinishedWorkSecondsMetric(string) workqueue.SettableGaugeMetric {
	return &p.m.UnfinishedWork
}
func (p recProvider) NewLongestRunningProcessorSecondsMetric(string) workqueue.SettableGaugeMetric {
	return &p.m.LongestRunning
}
func (p recProvider) NewRetriesMetric(string) workqueue.CounterMetric { return &p.m.RetriesCounter }
