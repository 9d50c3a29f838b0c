package subjects

import (
	"testing"

	wq "github.com/kverify/kverify/impl/workqueue"
	"github.com/kverify/kverify/props/checkkit"
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
		NewWithOrder: func(d pwq.Deps, o pwq.Order) pwq.Queue {
			return wq.New(wq.Config[string]{Clock: d.Clock, Order: o})
		},
		NewDelaying:     oursDelaying(),
		NewRateLimiting: oursRateLimiting(),
		Limiters:        OursLimiters(),
		Metrics:         true,
	}
}

// workqueueEntries bind the work queue family's three components (the
// plain queue, the delaying queue, the rate limiters with the rate-limiting
// queue) to ours and to client-go.
func workqueueEntries() []Entry {
	var es []Entry
	for _, c := range []struct {
		name   string
		checks func(pwq.Subject) []checkkit.Check
		divs   []checkkit.Divergence
	}{
		{pwq.Component, pwq.QueueChecks, upstream.QueueDivergences},
		{pwq.ComponentDelaying, pwq.DelayingChecks, upstream.DelayingDivergences},
		{pwq.ComponentRateLimit, pwq.RateLimitChecks, upstream.LimiterDivergences},
	} {
		es = append(es,
			Entry{Component: c.name, Subject: Ours, Checks: func() []checkkit.Check { return c.checks(OursWorkqueue()) }, Replay: replayWorkqueue(OursWorkqueue)},
			Entry{Component: c.name, Subject: Upstream, Checks: func() []checkkit.Check { return c.checks(upstream.Workqueue()) }, Divergences: c.divs, Replay: replayWorkqueue(upstream.Workqueue)})
	}
	return es
}

func replayWorkqueue(s func() pwq.Subject) func(*testing.T, *traces.Trace) error {
	return func(t *testing.T, tr *traces.Trace) error { return pwq.Replay(t, s(), tr) }
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
