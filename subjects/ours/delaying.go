package ours

import (
	wq "github.com/kverify/kverify/impl/workqueue"
	prl "github.com/kverify/kverify/props/ratelimit"
	pwq "github.com/kverify/kverify/props/workqueue"
)

type prlLimiter = prl.Limiter

// delayingConfig is our delaying queue's config for the suite's deps: the
// given clock and, with Deps.Metrics, a named queue with a provider (so that
// the metrics goroutine runs and the leak checks cover it).
func delayingConfig(d pwq.Deps) wq.DelayingConfig[string] {
	cfg := wq.DelayingConfig[string]{Config: wq.Config[string]{Clock: d.Clock}}
	if m := d.MetricsRecorder(); m != nil {
		cfg.Name, cfg.Metrics = "kverify", recProvider{m}
	}
	return cfg
}

// oursDelaying returns our delaying queue factory.
func oursDelaying() func(pwq.Deps) pwq.Delaying {
	return func(d pwq.Deps) pwq.Delaying { return wq.NewDelaying(delayingConfig(d)) }
}

// oursRateLimiting returns our rate-limiting queue factory. The suite's
// limiter (props/ratelimit.Limiter) has the method set of our
// ratelimit.Limiter[string], so it is passed as it is.
func oursRateLimiting() func(pwq.Deps, prlLimiter) pwq.RateLimiting {
	return func(d pwq.Deps, l prlLimiter) pwq.RateLimiting {
		q, err := wq.NewRateLimiting(wq.RateLimitingConfig[string]{DelayingConfig: delayingConfig(d), Limiter: l})
		if err != nil {
			// Only a nil limiter fails, and the suite always passes one.
			panic(err)
		}
		return q
	}
}
