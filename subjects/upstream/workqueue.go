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
