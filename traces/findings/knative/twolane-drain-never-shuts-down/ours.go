//go:build kverify_ours

package main

import (
	"github.com/kverify/kverify/impl/ratelimit"
	"github.com/kverify/kverify/impl/workqueue"
)

// newQueue is kverify's rate-limiting queue with the default controller
// limiter, the kind a controller runs on.
func newQueue() queue {
	q, err := workqueue.NewRateLimiting(workqueue.RateLimitingConfig[any]{Limiter: ratelimit.DefaultController[any]()})
	if err != nil {
		panic(err)
	}
	return q
}
