package ours

import (
	wq "github.com/kverify/kverify/impl/workqueue"
	pwq "github.com/kverify/kverify/props/workqueue"
)

// Workqueue is our workqueue family as a subject.
func Workqueue() pwq.Subject {
	return pwq.Subject{
		New: func(d pwq.Deps) pwq.Queue {
			cfg := wq.Config[string]{Clock: d.Clock}
			if m := d.MetricsRecorder(); m != nil {
				cfg.Name, cfg.Metrics = "kverify", recProvider{m}
			}
			return wq.New(cfg)
		},
		NewWithOrder: func(d pwq.Deps, o pwq.Order) pwq.Queue {
			return wq.New(wq.Config[string]{Clock: d.Clock, Order: o})
		},
		NewDelaying:     oursDelaying(),
		NewRateLimiting: oursRateLimiting(),
		Limiters:        Limiters(),
		Metrics:         true,
	}
}

// recProvider hands out a props Metrics recorder's metrics as wq's
// metric types.
type recProvider struct{ m *pwq.Metrics }

func (p recProvider) NewDepthMetric(string) wq.GaugeMetric       { return &p.m.DepthGauge }
func (p recProvider) NewAddsMetric(string) wq.CounterMetric      { return &p.m.AddsCounter }
func (p recProvider) NewLatencyMetric(string) wq.HistogramMetric { return &p.m.Latency }
func (p recProvider) NewWorkDurationMetric(string) wq.HistogramMetric {
	return &p.m.WorkDuration
}
func (p recProvider) NewUnfinishedWorkSecondsMetric(string) wq.SettableGaugeMetric {
	return &p.m.UnfinishedWork
}
func (p recProvider) NewLongestRunningProcessorSecondsMetric(string) wq.SettableGaugeMetric {
	return &p.m.LongestRunning
}
func (p recProvider) NewRetriesMetric(string) wq.CounterMetric { return &p.m.RetriesCounter }
