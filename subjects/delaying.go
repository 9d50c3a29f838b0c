package subjects

import (
	prl "github.com/kverify/kverify/props/ratelimit"
	pwq "github.com/kverify/kverify/props/workqueue"
)

type prlLimiter = prl.Limiter

// oursDelaying returns our delaying queue factory.
func oursDelaying() func(pwq.Deps) pwq.Delaying { return nil }

// oursRateLimiting returns our rate-limiting queue factory.
func oursRateLimiting() func(pwq.Deps, prlLimiter) pwq.RateLimiting { return nil }
