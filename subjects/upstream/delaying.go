//go:build !clientgo_before_v0_31

package upstream

import (
	prl "github.com/kverify/kverify/props/ratelimit"
	pwq "github.com/kverify/kverify/props/workqueue"
	"k8s.io/client-go/util/workqueue"
)

// delaying returns client-go's delaying queue factory. With Deps.Metrics the
// queue is named and gets a provider that is not client-go's noop, so that
// its metrics goroutine runs.
func delaying() func(pwq.Deps) pwq.Delaying {
	return func(d pwq.Deps) pwq.Delaying {
		cfg := workqueue.TypedDelayingQueueConfig[string]{Clock: d.Clock}
		if m := d.MetricsRecorder(); m != nil {
			cfg.Name, cfg.MetricsProvider = "kverify", recProvider{m}
		}
		return workqueue.NewTypedDelayingQueueWithConfig(cfg)
	}
}

// rateLimiting returns client-go's rate-limiting queue factory. The suite's
// limiter has the method set of workqueue.TypedRateLimiter[string].
func rateLimiting() func(pwq.Deps, prl.Limiter) pwq.RateLimiting {
	return func(d pwq.Deps, l prl.Limiter) pwq.RateLimiting {
		cfg := workqueue.TypedRateLimitingQueueConfig[string]{Clock: d.Clock}
		if m := d.MetricsRecorder(); m != nil {
			cfg.Name, cfg.MetricsProvider = "kverify", recProvider{m}
		}
		return workqueue.NewTypedRateLimitingQueueWithConfig[string](l, cfg)
	}
}
