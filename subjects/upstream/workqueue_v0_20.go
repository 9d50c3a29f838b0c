//go:build ignore && clientgo_before_v0_23 && !clientgo_before_v0_20

// ignore: this file imports k8s.io/apimachinery/pkg/util/clock, which the
// pinned apimachinery no longer has, so go mod tidy must skip it; the
// module kverify generates for v0.20 to v0.22 builds it (subjects/releases).

package upstream

import (
	"time"

	"github.com/kverify/kverify/props/checkkit"
	prl "github.com/kverify/kverify/props/ratelimit"
	pwq "github.com/kverify/kverify/props/workqueue"
	wq "github.com/kverify/kverify/spec/workqueue"
	apiclock "k8s.io/apimachinery/pkg/util/clock"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
)

// Workqueue returns client-go's untyped workqueue (v0.20 to v0.22) as a
// subject. As in v0.23 to v0.26 (workqueue_v0_23.go) only the delaying
// queue takes a clock, here k8s.io/apimachinery's (apiClock adapts the
// suite's k8s.io/utils clock), and metrics go through the process-wide
// provider. ShutDownWithDrain arrived in v0.23: the subject's
// ShutDownWithDrain is a ShutDown, declared in the profile
// (DrainIsShutDown), and the checks of the drain itself are not offered
// (eraChecks).
func Workqueue() pwq.Subject {
	return pwq.Subject{
		New: func(d pwq.Deps) pwq.Queue {
			return strQueue{workqueue.NewNamed(queueName(d))}
		},
		NewDelaying: func(d pwq.Deps) pwq.Delaying {
			return newStrDelaying(workqueue.NewDelayingQueueWithCustomClock(apiClock{d.Clock}, queueName(d)))
		},
		NewRateLimiting: func(d pwq.Deps, l prl.Limiter) pwq.RateLimiting {
			return newStrRateLimiting(workqueue.NewNamedRateLimitingQueue(untyped(l), queueName(d)))
		},
		Limiters: Limiters(),
		Profile:  wq.Profile{Name: "client-go before v0.23 (no ShutDownWithDrain: the adapter's is ShutDown)", DrainIsShutDown: true},
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

// noDrain is why the checks of ShutDownWithDrain itself are not offered.
const noDrain = "the queue has no ShutDownWithDrain (first in v0.23.0): the adapter makes it a ShutDown (Profile.DrainIsShutDown)"

func shutDownWithDrain(q workqueue.Interface) { q.ShutDown() }

// maxWait: NewWithMaxWaitRateLimiter arrived in v0.23; without it the
// MaxWait checks (and the bad-input check, which needs every constructor)
// are not offered.
func maxWait() func(prl.Limiter, time.Duration) (prl.Limiter, error) { return nil }

// eraChecks makes the checks of the drain itself not offered.
func eraChecks(cs []checkkit.Check) []checkkit.Check {
	for i, c := range cs {
		if c.Name == pwq.CheckDrain || c.Name == pwq.CheckDelayingRelease {
			cs[i].NotOffered = noDrain
		}
	}
	return cs
}

// apiClock is a k8s.io/utils clock as the k8s.io/apimachinery clock the
// delaying queue takes before v0.23.
type apiClock struct{ c clock.WithTicker }

func (a apiClock) Now() time.Time                         { return a.c.Now() }
func (a apiClock) Since(t time.Time) time.Duration        { return a.c.Since(t) }
func (a apiClock) After(d time.Duration) <-chan time.Time { return a.c.After(d) }
func (a apiClock) NewTimer(d time.Duration) apiclock.Timer {
	return a.c.NewTimer(d)
}

// AfterFunc is in apimachinery's Clock from v0.21; the delaying queue
// never calls it, and the k8s.io/utils clock built beside v0.20 lacks it.
func (a apiClock) AfterFunc(d time.Duration, f func()) apiclock.Timer {
	if c, ok := a.c.(interface {
		AfterFunc(time.Duration, func()) clock.Timer
	}); ok {
		return c.AfterFunc(d, f)
	}
	panic("kverify: AfterFunc: the suite's clock has none")
}
func (a apiClock) Sleep(d time.Duration) { a.c.Sleep(d) }
func (a apiClock) NewTicker(d time.Duration) apiclock.Ticker {
	return a.c.NewTicker(d)
}
func (a apiClock) Tick(d time.Duration) <-chan time.Time { return a.c.Tick(d) }
