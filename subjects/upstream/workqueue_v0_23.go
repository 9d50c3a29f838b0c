//go:build clientgo_before_v0_27 && !clientgo_before_v0_23

package upstream

import (
	"time"

	"github.com/kverify/kverify/props/checkkit"
	prl "github.com/kverify/kverify/props/ratelimit"
	pwq "github.com/kverify/kverify/props/workqueue"
	"k8s.io/client-go/util/workqueue"
)

// Workqueue returns client-go's untyped workqueue (v0.23 to v0.26) as a
// subject. The *WithConfig constructors arrived in v0.27: the plain queue
// (New, NewNamed) takes no clock, which it reads only for its metrics; the
// delaying queue takes a k8s.io/utils clock (NewDelayingQueueWithCustomClock,
// on k8s.io/utils/clock since v0.23); the rate-limiting queue
// (NewNamedRateLimitingQueue) takes none, and the suite gives it the real
// clock only (in a synctest bubble). Metrics go through client-go's
// process-wide provider (SetProvider, once), not one per queue: the
// metrics checks are not offered; a queue asked for metrics is named.
func Workqueue() pwq.Subject {
	return pwq.Subject{
		New: func(d pwq.Deps) pwq.Queue {
			return strQueue{workqueue.NewNamed(queueName(d))}
		},
		NewDelaying: func(d pwq.Deps) pwq.Delaying {
			return newStrDelaying(workqueue.NewDelayingQueueWithCustomClock(d.Clock, queueName(d)))
		},
		NewRateLimiting: func(d pwq.Deps, l prl.Limiter) pwq.RateLimiting {
			return newStrRateLimiting(workqueue.NewNamedRateLimitingQueue(untyped(l), queueName(d)))
		},
		Limiters: Limiters(),
	}
}

// queueName is the name of a queue asked for metrics; "" (unnamed, no
// metrics) otherwise.
func queueName(d pwq.Deps) string {
	if d.Metrics || d.Recorder != nil {
		return "kverify"
	}
	return ""
}

func shutDownWithDrain(q workqueue.Interface) { q.ShutDownWithDrain() }

// maxWait: NewWithMaxWaitRateLimiter arrived in v0.23.
func maxWait() func(prl.Limiter, time.Duration) (prl.Limiter, error) {
	return func(l prl.Limiter, max time.Duration) (prl.Limiter, error) {
		return strLimiter{workqueue.NewWithMaxWaitRateLimiter(untyped(l), max)}, nil
	}
}

func eraChecks(cs []checkkit.Check) []checkkit.Check { return cs }
