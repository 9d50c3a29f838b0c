package knative

import (
	_ "unsafe" // go:linkname

	"k8s.io/client-go/util/workqueue"
)

// globalMetricsProvider is client-go's process-wide work queue metrics
// provider (util/workqueue/metrics.go:213), which SetProvider sets once.
//
//go:linkname globalMetricsProvider k8s.io/client-go/util/workqueue.globalMetricsProvider
var globalMetricsProvider workqueue.MetricsProvider

// knativeProvider is the provider knative.dev/pkg/controller installed at
// init (stats_reporter.go:95): every metric it records goes through
// knative's metrics worker, a goroutine the metrics package starts at init
// (metrics/exporter.go:37-40) and that answers each record on a channel
// the caller makes. Inside a synctest bubble that answer is a send from
// outside the bubble, which the runtime refuses (fatal error), so every
// check would crash. The adapter takes the provider out while it makes a
// queue (withoutKnativeMetrics): the two-lane queue's metrics are not
// judged (Subject.Metrics is false), its behaviour is.
var knativeProvider = globalMetricsProvider

// noMetrics is a provider whose metrics record nothing.
type noMetrics struct{}

type noMetric struct{}

func (noMetric) Inc()            {}
func (noMetric) Dec()            {}
func (noMetric) Set(float64)     {}
func (noMetric) Observe(float64) {}

func (noMetrics) NewDepthMetric(string) workqueue.GaugeMetric            { return noMetric{} }
func (noMetrics) NewAddsMetric(string) workqueue.CounterMetric           { return noMetric{} }
func (noMetrics) NewLatencyMetric(string) workqueue.HistogramMetric      { return noMetric{} }
func (noMetrics) NewWorkDurationMetric(string) workqueue.HistogramMetric { return noMetric{} }
func (noMetrics) NewUnfinishedWorkSecondsMetric(string) workqueue.SettableGaugeMetric {
	return noMetric{}
}
func (noMetrics) NewLongestRunningProcessorSecondsMetric(string) workqueue.SettableGaugeMetric {
	return noMetric{}
}
func (noMetrics) NewRetriesMetric(string) workqueue.CounterMetric { return noMetric{} }

func init() { globalMetricsProvider = noMetrics{} }
