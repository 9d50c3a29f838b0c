//go:build !kverify_ours

package main

import (
	"time"

	"k8s.io/client-go/util/workqueue"
)

func newLimiter(base, max time.Duration) limiter {
	return workqueue.NewItemExponentialFailureRateLimiter(base, max)
}
