//go:build !clientgo_before_v0_27

package upstream

import (
	pwq "github.com/kverify/kverify/props/workqueue"
	"k8s.io/client-go/util/workqueue"
)

// The work queue's per-queue metrics provider (QueueConfig.MetricsProvider,
// v0.27 and later), shared by the typed adapters (workqueue.go) and the
// untyped ones of v0.27 to v0.30 (workqueue_v0_27.go).

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
