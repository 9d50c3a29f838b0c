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
			if d.Metrics {
				cfg.Name, cfg.Metrics = "kverify", nopProvider{}
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

type nopProvider struct{}

type nopMetric struct{}

func (nopMetric) Inc()            {}
func (nopMetric) Dec()            {}
func (nopMetric) Set(float64)     {}
func (nopMetric) Observe(float64) {}

func (nopProvider) NewDepthMetric(string) wq.GaugeMetric            { return nopMetric{} }
func (nopProvider) NewAddsMetric(string) wq.CounterMetric           { return nopMetric{} }
func (nopProvider) NewLatencyMetric(string) wq.HistogramMetric      { return nopMetric{} }
func (nopProvider) NewWorkDurationMetric(string) wq.HistogramMetric { return nopMetric{} }
func (nopProvider) NewUnfinishedWorkSecondsMetric(string) wq.SettableGaugeMetric {
	return nopMetric{}
}
func (nopProvider) NewLongestRunningProcessorSecondsMetric(string) wq.SettableGaugeMetric {
	return nopMetric{}
}
func (nopProvider) NewRetriesMetric(string) wq.CounterMetric { return nopMetric{} }
