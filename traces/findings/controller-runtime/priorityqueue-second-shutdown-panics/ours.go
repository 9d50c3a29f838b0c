//go:build kverify_ours

package main

import (
	"time"

	"github.com/kverify/kverify/impl/ratelimit"
	"github.com/kverify/kverify/impl/workqueue"
)

// newQueue makes kverify's rate-limiting queue with the priority queue's
// default limiter (per-item exponential, 5ms to 1000s).
func newQueue() queue {
	l, err := ratelimit.NewItemExponential[string](5*time.Millisecond, 1000*time.Second)
	if err != nil {
		panic(err)
	}
	q, err := workqueue.NewRateLimiting(workqueue.RateLimitingConfig[string]{Limiter: l})
	if err != nil {
		panic(err)
	}
	return q
}
