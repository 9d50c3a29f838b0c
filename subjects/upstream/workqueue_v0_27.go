//go:build clientgo_before_v0_31 && !clientgo_before_v0_27

package upstream

import (
	"time"

	"github.com/kverify/kverify/props/checkkit"
	prl "github.com/kverify/kverify/props/ratelimit"
	pwq "github.com/kverify/kverify/props/workqueue"
	"k8s.io/client-go/util/workqueue"
)

// Workqueue returns client-go's untyped workqueue (v0.27 to v0.30) as a
// subject: the queues are made with the *WithConfig constructors (first in
// v0.27), which take the clock and a metrics provider; the items are the
// suite's strings (workqueue_untyped.go). The queue takes no pluggable
// storage before v0.31 (QueueConfig.Queue).
func Workqueue() pwq.Subject {
	return pwq.Subject{
		New: func(d pwq.Deps) pwq.Queue {
			cfg := workqueue.QueueConfig{Clock: d.Clock}
			if m := d.MetricsRecorder(); m != nil {
				cfg.Name, cfg.MetricsProvider = "kverify", recProvider{m}
			}
			return strQueue{workqueue.NewWithConfig(cfg)}
		},
		NewDelaying: func(d pwq.Deps) pwq.Delaying {
			cfg := workqueue.DelayingQueueConfig{Clock: d.Clock}
			if m := d.MetricsRecorder(); m != nil {
				cfg.Name, cfg.MetricsProvider = "kverify", recProvider{m}
			}
			return newStrDelaying(workqueue.NewDelayingQueueWithConfig(cfg))
		},
		NewRateLimiting: func(d pwq.Deps, l prl.Limiter) pwq.RateLimiting {
			cfg := workqueue.RateLimitingQueueConfig{Clock: d.Clock}
			if m := d.MetricsRecorder(); m != nil {
				cfg.Name, cfg.MetricsProvider = "kverify", recProvider{m}
			}
			return newStrRateLimiting(workqueue.NewRateLimitingQueueWithConfig(untyped(l), cfg))
		},
		Limiters: Limiters(),
		Metrics:  true,
	}
}

func shutDownWithDrain(q workqueue.Interface) { q.ShutDownWithDrain() }

func maxWait() func(prl.Limiter, time.Duration) (prl.Limiter, error) {
	return func(l prl.Limiter, max time.Duration) (prl.Limiter, error) {
		return strLimiter{workqueue.NewWithMaxWaitRateLimiter(untyped(l), max)}, nil
	}
}

func eraChecks(cs []checkkit.Check) []checkkit.Check { return cs }
