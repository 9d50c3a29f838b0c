package knative

import (
	"slices"

	"github.com/kverify/kverify/props/checkkit"
	pwq "github.com/kverify/kverify/props/workqueue"
	"github.com/kverify/kverify/subjects/upstream"
)

// twoLane is the source the declarations cite.
const twoLane = Version + "/controller/two_lane_queue.go"

// drainSpins is the two-lane queue's ShutDownWithDrain: the fast lane's
// alone, promoted from the embedded queue, so the slow lane and the
// consumer never shut down; and once the fast lane's channel is closed the
// consumer loop spins on it. In a synctest bubble the spin shows as a
// bubble that cannot become quiescent.
var drainSpins = checkkit.Divergence{
	Guarantees: []string{checkkit.GTermination},
	Shape:      `^Termination: no progress while the process was given .*the subject spins (or polls )?instead of blocking`,
	Reason: "ShutDownWithDrain is not overridden: it is the fast lane's, promoted from the embedded RateLimitingInterface, so the slow lane stays open, the consumer goroutine never ends and Get never returns shutdown; " +
		"and runConsumer's second select keeps receiving from the fast lane's closed channel, so from the fast lane's end to the slow lane's (for good after ShutDownWithDrain) the consumer spins a CPU",
	Upstream: twoLane + ":25-37,77-131",
	Class:    checkkit.ClassDefect,
	Evidence: "the interface Impl.WorkQueue() returns promises that ShutDownWithDrain lets the workers drain the queue and then tells them to exit (k8s.io/client-go util/workqueue queue.go); the two-lane queue's own ShutDown shuts both lanes (two_lane_queue.go:125-131); " +
		"reproducer traces/findings/knative/twolane-drain-never-shuts-down (Get blocks, 660ms of CPU in 1s); knative/pkg#3206 (2025-07, after the pin) drains both lanes, but its drain still does not wait for the items workers hold",
}

// lenCounts is the two-lane queue's Len: the sum of its three queues'.
var lenCounts = checkkit.Divergence{
	Guarantees: []string{pwq.GImmediate},
	Shape:      `^Immediate: Len\(\) = \d+ right after (AddRateLimited|AddAfter|Add)\([a-z]+,(0s|-[0-9hmsµn.]+)\) returned, want \d+: the item was not added before the call returned`,
	Reason:     "Len is the sum of the fast lane's, the slow lane's and the consumer queue's lengths, read one after the other, so an item added to the fast lane while the consumer queue holds it counts twice until the lane's goroutine hands it over (the consumer queue then keeps one), and an item the goroutine holds between the two counts not at all",
	Upstream:   twoLane + ":148-152",
	Class:      checkkit.ClassDesign,
	Evidence:   "two_lane_queue.go:148-149: \"Len returns the sum of lengths. NB: actual _number_ of unique object might be less than this sum.\"",
}

// QueueDivergences are the two-lane queue's declared differences from the
// plain queue's contract.
var QueueDivergences = []checkkit.Divergence{
	with(drainSpins, pwq.CheckDrain), with(drainSpins, pwq.CheckDoneUnheld), with(drainSpins, pwq.CheckModel),
	with(drainSpins, pwq.CheckExhaustive), with(drainSpins, pwq.CheckLeak), with(drainSpins, pwq.CheckLifecycle),
	with(drainSpins, pwq.CheckRace),
}

// DelayingDivergences are its declared differences from the delaying
// queue's.
var DelayingDivergences = []checkkit.Divergence{
	with(drainSpins, pwq.CheckDelayingLeak), with(drainSpins, pwq.CheckDelayingLifecycle),
	with(drainSpins, pwq.CheckDelayingRetention), with(drainSpins, pwq.CheckDelayingShutdown),
	with(lenCounts.Or(drainSpins), pwq.CheckDelayingModel),
	clientGo(upstream.DelayingDivergences, pwq.CheckDelayingTies),
}

// clientGo is client-go's declaration of check, which the two-lane queue
// inherits: its lanes are client-go's rate-limiting queues (its fast lane
// is where Add, AddAfter and AddRateLimited go).
func clientGo(ds []checkkit.Divergence, check string) checkkit.Divergence {
	i := slices.IndexFunc(ds, func(d checkkit.Divergence) bool { return d.Check == check })
	if i < 0 {
		panic("knative: client-go declares nothing for " + check)
	}
	d := ds[i]
	d.Reason = "the fast lane is client-go's delaying queue: " + d.Reason
	return d
}

// RateLimitDivergences are its declared differences from the
// rate-limiting queue's.
var RateLimitDivergences = []checkkit.Divergence{
	with(lenCounts.Or(drainSpins), pwq.CheckRateLimitingModel),
	with(lenCounts.Or(drainSpins), pwq.CheckRateLimitingDelegate),
	with(lenCounts.Or(drainSpins), pwq.CheckRateLimitingExhaustive),
}

// with returns d declared for check.
func with(d checkkit.Divergence, check string) checkkit.Divergence {
	d.Check = check
	return d
}
