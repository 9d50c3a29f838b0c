//go:build !clientgo_before_v0_31

package upstream

import (
	"testing"

	"github.com/kverify/kverify/props/checkkit"
	pwq "github.com/kverify/kverify/props/workqueue"
	"github.com/kverify/kverify/subjects/suite"
	"github.com/kverify/kverify/traces"
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

// workqueueEntries binds the work queue, the delaying queue and the rate
// limiters (typed work queues: v0.31 and later).
func workqueueEntries() []suite.Entry {
	replay := func(t *testing.T, tr *traces.Trace) error { return pwq.Replay(t, Workqueue(), tr) }
	return []suite.Entry{
		entry(pwq.Component, func() []checkkit.Check { return pwq.QueueChecks(Workqueue()) }, QueueDivergences, replay),
		entry(pwq.ComponentDelaying, func() []checkkit.Check { return pwq.DelayingChecks(Workqueue()) }, DelayingDivergences, replay),
		entry(pwq.ComponentRateLimit, func() []checkkit.Check { return pwq.RateLimitChecks(Workqueue()) }, LimiterDivergences, replay),
	}
}
