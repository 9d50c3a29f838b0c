package upstream

import (
	"time"

	"github.com/kverify/kverify/props/checkkit"
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

// LimiterDivergences are client-go's known differences from the rate
// limiter contract.
var LimiterDivergences = []checkkit.Divergence{
	{
		Check:      prl.CheckExponentialOverflow,
		Guarantees: []string{prl.GNegative, prl.GExponential},
		Shape:      `^(never negative: When\(\w+\) (after \d+ retries )?returned -2562047h47m16\.854775808s \(-9223372036854775808ns\)|exponential: delay min\(base\*2\^n, max\): When\(\w+\) after \d+ retries returned \S+ \(\d{16,}ns\), want \S+ \(\d{16,}ns\)$)`,
		Reason:     "ItemExponential computes baseDelay*2^failures in float64 and guards only backoff > math.MaxInt64; a product of exactly 2^63 (1ns base on the 64th When, 2^62ns base on the 2nd, any base that float64 rounds to 2^63 on the 1st) passes the guard and time.Duration(backoff) gives math.MinInt64, a negative delay; bases above 2^53ns are also rounded by the float64 conversion",
		Upstream:   Version + "/util/workqueue/default_rate_limiters.go:116-135",
	},
	{
		Check:      prl.CheckBadInput,
		Guarantees: []string{prl.GNegative, prl.GBadInputNoPanic, prl.GRejected},
		Shape:      `^(invalid parameters rejected: .* was accepted$|never negative: .* accepted, then When\(a\) #\d+ = -|no panic: (MaxOf|MaxWait)\(.*nil.*\) accepted, then When\(a\) #\d+: panic: runtime error: invalid memory address or nil pointer dereference)`,
		Reason:     "the constructors cannot reject anything: a negative base (or max, fast, slow, MaxWait max) gives negative delays, and a nil limiter in MaxOf or MaxWait makes When panic with a nil dereference",
		Upstream:   Version + "/util/workqueue/default_rate_limiters.go:99-105,116-135,172-192,222-241,276-287",
	},
	{
		Check: prl.CheckBucket,
		Reason: "a qps of +Inf reaches golang.org/x/time/rate as rate.Limit(+Inf), which is not rate.Inf (math.MaxFloat64): the limiter takes the token-bucket path, and with burst 0 no reservation is ever ok, so When is rate.InfDuration (never) where an infinite rate never delays; " +
			"read in x/time/rate v0.15.0 rate.go:337-381 (only lim.limit == Inf skips the bucket; n <= lim.burst fails for burst 0), and with burst > 0 the tokens become NaN but every delay is 0, as the model's",
		Upstream:   Version + "/util/workqueue/default_rate_limiters.go:68-70",
		Guarantees: []string{prl.GBucket},
		Shape:      `^bucket: token bucket delays: When\([a-c]\) = 2562047h47m16\.854775807s \(9223372036854775807ns\), want 0s `,
	},
}
