package subjects

import (
	"testing"

	wq "github.com/kverify/kverify/impl/workqueue"
	"github.com/kverify/kverify/props"
	pwq "github.com/kverify/kverify/props/workqueue"
	"github.com/kverify/kverify/traces"
	"github.com/kverify/kverify/upstream"
)

// OursWorkqueue is our workqueue family as a subject.
func OursWorkqueue() pwq.Subject {
	return pwq.Subject{
		New: func(d pwq.Deps) pwq.Queue {
			cfg := wq.Config[string]{Clock: d.Clock}
			if m := d.MetricsRecorder(); m != nil {
				cfg.Name, cfg.Metrics = "kverify", recProvider{m}
			}
			return wq.New(cfg)
		},
		NewDelaying:     oursDelaying(),
		NewRateLimiting: oursRateLimiting(),
		Limiters:        OursLimiters(),
	}
}

func replayWorkqueue(s func() pwq.Subject) func(*testing.T, *traces.Trace) error {
	return func(t *testing.T, tr *traces.Trace) error { return pwq.Replay(t, s(), tr) }
}

func oursWorkqueue() []props.Check     { return pwq.Checks(OursWorkqueue()) }
func upstreamWorkqueue() []props.Check { return pwq.Checks(upstream.Workqueue()) }

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
