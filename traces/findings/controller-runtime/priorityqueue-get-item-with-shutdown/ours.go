//go:build kverify_ours

package main

import (
	"time"

	"github.com/kverify/kverify/impl/ratelimit"
	"github.com/kverify/kverify/impl/workqueue"
)

// provider hands out the program's metrics as kverify's metric types.
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

// newQueue makes kverify's rate-limiting queue, named and with the
// program's metrics, and the priority queue's default limiter.
func newQueue(depth *depthGauge) queue {
	l, err := ratelimit.NewItemExponential[string](5*time.Millisecond, 1000*time.Second)
	if err != nil {
		panic(err)
	}
	cfg := workqueue.RateLimitingConfig[string]{Limiter: l}
	cfg.Name, cfg.Metrics = "q", provider{depth}
	q, err := workqueue.NewRateLimiting(cfg)
	if err != nil {
		panic(err)
	}
	return q
}
