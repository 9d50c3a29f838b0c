//go:build !clientgo_before_v0_31

package upstream

import (
	"time"

	prl "github.com/kverify/kverify/props/ratelimit"
	"golang.org/x/time/rate"
	"k8s.io/client-go/util/workqueue"
)

// Limiters returns client-go's rate limiters as a subject. Its constructors
// cannot fail: they never return an error.
func Limiters() prl.Subject {
	return prl.Subject{
		Exponential: func(base, max time.Duration) (prl.Limiter, error) {
			return workqueue.NewTypedItemExponentialFailureRateLimiter[string](base, max), nil
		},
		FastSlow: func(fast, slow time.Duration, maxFast int) (prl.Limiter, error) {
			return workqueue.NewTypedItemFastSlowRateLimiter[string](fast, slow, maxFast), nil
		},
		Bucket: func(qps float64, burst int) (prl.Limiter, error) {
			return &workqueue.TypedBucketRateLimiter[string]{Limiter: rate.NewLimiter(rate.Limit(qps), burst)}, nil
		},
		MaxOf: func(ls ...prl.Limiter) (prl.Limiter, error) {
			parts := make([]workqueue.TypedRateLimiter[string], len(ls))
			for i, l := range ls {
				if l != nil {
					parts[i] = l
				}
			}
			return workqueue.NewTypedMaxOfRateLimiter(parts...), nil
		},
		MaxWait: func(l prl.Limiter, max time.Duration) (prl.Limiter, error) {
			var inner workqueue.TypedRateLimiter[string]
			if l != nil {
				inner = l
			}
			return workqueue.NewTypedWithMaxWaitRateLimiter(inner, max), nil
		},
		DefaultController: func() prl.Limiter { return workqueue.DefaultTypedControllerRateLimiter[string]() },
		DefaultItemBased:  func() prl.Limiter { return workqueue.DefaultTypedItemBasedRateLimiter[string]() },
	}
}
