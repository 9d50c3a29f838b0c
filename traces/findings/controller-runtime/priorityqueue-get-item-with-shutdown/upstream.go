//go:build !kverify_ours

package main

import (
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
)

// provider hands out the program's metrics as client-go's metric types.
type provider struct{ depth *depthGauge }

func (p provider) NewDepthMetric(string) workqueue.GaugeMetric                       { return p.depth }
func (provider) NewAddsMetric(string) workqueue.CounterMetric                        { return noop{} }
func (provider) NewLatencyMetric(string) workqueue.HistogramMetric                   { return noop{} }
func (provider) NewWorkDurationMetric(string) workqueue.HistogramMetric              { return noop{} }
func (provider) NewUnfinishedWorkSecondsMetric(string) workqueue.SettableGaugeMetric { return noop{} }
func (provider) NewLongestRunningProcessorSecondsMetric(string) workqueue.SettableGaugeMetric {
	return noop{}
}
func (provider) NewRetriesMetric(string) workqueue.CounterMetric { return noop{} }

func newQueue(depth *depthGauge) queue {
	return priorityqueue.New[string]("q", func(o *priorityqueue.Opts[string]) {
		o.MetricProvider = provider{depth}
	})
}
