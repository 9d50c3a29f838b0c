package upstream

import (
	prl "github.com/kverify/kverify/props/ratelimit"
	pwq "github.com/kverify/kverify/props/workqueue"
)

// delaying returns client-go's delaying queue factory.
func delaying() func(pwq.Deps) pwq.Delaying { return nil }

// rateLimiting returns client-go's rate-limiting queue factory.
func rateLimiting() func(pwq.Deps, prl.Limiter) pwq.RateLimiting { return nil }
