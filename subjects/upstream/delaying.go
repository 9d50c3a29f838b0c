package upstream

import (
	"github.com/kverify/kverify/props/checkkit"
	prl "github.com/kverify/kverify/props/ratelimit"
	pwq "github.com/kverify/kverify/props/workqueue"
	"k8s.io/client-go/util/workqueue"
)

// delaying returns client-go's delaying queue factory. With Deps.Metrics the
// queue is named and gets a provider that is not client-go's noop, so that
// its metrics goroutine runs.
func delaying() func(pwq.Deps) pwq.Delaying {
	return func(d pwq.Deps) pwq.Delaying {
		cfg := workqueue.TypedDelayingQueueConfig[string]{Clock: d.Clock}
		if m := d.MetricsRecorder(); m != nil {
			cfg.Name, cfg.MetricsProvider = "kverify", recProvider{m}
		}
		return workqueue.NewTypedDelayingQueueWithConfig(cfg)
	}
}

// rateLimiting returns client-go's rate-limiting queue factory. The suite's
// limiter has the method set of workqueue.TypedRateLimiter[string].
func rateLimiting() func(pwq.Deps, prl.Limiter) pwq.RateLimiting {
	return func(d pwq.Deps, l prl.Limiter) pwq.RateLimiting {
		cfg := workqueue.TypedRateLimitingQueueConfig[string]{Clock: d.Clock}
		if m := d.MetricsRecorder(); m != nil {
			cfg.Name, cfg.MetricsProvider = "kverify", recProvider{m}
		}
		return workqueue.NewTypedRateLimitingQueueWithConfig[string](l, cfg)
	}
}

// DelayingDivergences are client-go's known differences from the delaying
// queue contract (component delaying); they are part of
// WorkqueueDivergences.
var DelayingDivergences = []checkkit.Divergence{
	{
		Check:      pwq.CheckDelayingTies,
		Guarantees: []string{pwq.GTieOrder},
		Shape:      `^Tie order: Gets returned \[\w+\], the model\'s FIFO head is \[\w+\] \(queue \[[\w ]+\], ready times \[[\w@. ]+\]\)$`,
		Reason:     "the waiting heap orders entries by readyAt only (Less is readyAt.Before) and container/heap is not stable, so items set for the same time come out in heap order: a, b, c all set for +1s are handed out a, c, b",
		Upstream:   Version + "/util/workqueue/delaying_queue.go:204-206",
	},
	{
		Check:      pwq.CheckDelayingRelease,
		Guarantees: []string{pwq.GReleasesDrain},
		Shape:      `^ShutDown releases drain: ShutDownWithDrain, begun after ShutDown while "\w+" was being processed, was still waiting after a second ShutDown`,
		Reason:     "ShutDown runs the inner queue's ShutDown only once (stopOnce), so a second ShutDown does not release a ShutDownWithDrain begun after the first; the drain waits for Done",
		Upstream:   Version + "/util/workqueue/delaying_queue.go:240-246",
	},
	{
		Check:      pwq.CheckDelayingLeak,
		Guarantees: []string{pwq.GNoLeak},
		Shape:      `^No leak: after ShutDownWithDrain returned: found unexpected goroutines:(?s:.*)delaying_queue\.go`,
		Reason:     "ShutDownWithDrain is the inner queue's (delayingType does not override it): stopCh is not closed nor the heartbeat stopped, so waitingLoop runs on until its next wake-up (the 10s heartbeat, a timer or an AddAfter) finds the queue shutting down",
		Upstream:   Version + "/util/workqueue/delaying_queue.go:240-246,290-293,320-324",
	},
	{
		Check:      pwq.CheckDelayingRetention,
		Guarantees: []string{pwq.GNoRetention},
		Shape:      `^No retention: \d+ of \d+ items the queue no longer needs are still referenced by it; the first: AddAfter\(`,
		Reason:     "the waiting heap's Pop shortens the slice without clearing the vacated slot, so every entry moved to the queue (with its item) stays referenced by the heap's backing array until a later push overwrites the slot: after a burst of 300 waiting items became ready and were marked Done, all 300 are still held",
		Upstream:   Version + "/util/workqueue/delaying_queue.go:224-230",
	},
	{
		Check:      pwq.CheckDelayingOneTimer,
		Guarantees: []string{pwq.GOneTimer},
		Shape:      `^At most one timer: (after|before|while)[^:]*: \d+ live timers \((ticker every 10s made at [\d:.]+(; )?|timer due in [^;)]+ made at [\d:.]+(; )?)+\)$`,
		Reason:     "besides the timer for the heap's head, every delaying queue holds a 10s heartbeat ticker from creation to ShutDown; and waitingLoop returns on stopCh without stopping its timer, which stays armed after ShutDown (with ShutDownWithDrain the ticker stays too)",
		Upstream:   Version + "/util/workqueue/delaying_queue.go:151,244,311-324",
	},
}
