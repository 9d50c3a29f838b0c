package controllerruntime

import (
	"github.com/kverify/kverify/props/checkkit"
	pwq "github.com/kverify/kverify/props/workqueue"
)

// doubleClose declares, for a lifecycle check, that a second ShutDown
// panics.
func doubleClose(check string) checkkit.Divergence {
	return checkkit.Divergence{
		Check:      check,
		Reason:     "a second ShutDown (or ShutDownWithDrain, which is ShutDown) closes the done channel again and panics: close of closed channel",
		Upstream:   Version + "/pkg/controller/priorityqueue/priorityqueue.go:500-510",
		Guarantees: []string{pwq.GNoPanic},
	}
}

// QueueDivergences are the priority queue's defects under its own profile
// (spec/workqueue.ControllerRuntime): what the profile declares as
// deliberate passes; these are not in any profile.
var QueueDivergences = []checkkit.Divergence{
	doubleClose(pwq.CheckLifecycle),
	{
		Check:    pwq.CheckRace,
		Reason:   "a Get in flight when ShutDown is called can return an item together with shutdown=true (GetWithPriority returns w.shutdown.Load() beside the item it received); a caller that sees shutdown drops the item without Done, so its key stays locked",
		Upstream: Version + "/pkg/controller/priorityqueue/priorityqueue.go:449-473",
		// Narrowed: the "no progress for 5s" once seen in the drain after
		// a round, with no queue goroutine alive, was the check's own
		// porcupine search on a loaded machine, which the watchdog now
		// leaves alone (checkkit.Progress.Analyse).
		Guarantees: []string{pwq.GAtomic},
	},
	{
		Check:        pwq.CheckLinearFIFO,
		Reason:       "the Get that returns an item with shutdown=true (see queue/race) makes the history unlinearizable when a Get is in flight at the workload's ShutDown",
		Upstream:     Version + "/pkg/controller/priorityqueue/priorityqueue.go:449-473",
		Intermittent: true,
		Guarantees:   []string{pwq.GLinearizability},
	},
	{
		Check:        pwq.CheckLinearPerKey,
		Reason:       "the same Get that returns an item with shutdown=true, seen per key",
		Upstream:     Version + "/pkg/controller/priorityqueue/priorityqueue.go:449-473",
		Intermittent: true,
		Guarantees:   []string{pwq.GLinearizability},
	},
}

// orderGuarantees are the guarantees the add-of-waiting defect breaks in
// the delaying machines: the order of what Gets hand out.
var orderGuarantees = []string{pwq.GFair, pwq.GReadyOrder, pwq.GTieOrder}

// addOfWaiting is the defect behind most delaying findings.
const addOfWaiting = "Add (or AddAfter(x, 0), or AddRateLimited with a zero delay) of an item waiting for a delay moves it to the ready set with the added counter of its first add (priorityqueue.go:236-270 bumps it only for a higher priority), so it is handed out ahead of items that became ready before it; the waiting loop bumps the counter of what it moves (:359-364), and the queue promises FIFO inside a priority level"

// DelayingDivergences are the priority queue's defects as a delaying queue,
// under its profile.
var DelayingDivergences = []checkkit.Divergence{
	doubleClose(pwq.CheckDelayingLifecycle),
	{
		Check:      pwq.CheckDelayingRetention,
		Reason:     "ShutDown only sets the flag and closes the done channel: every item still waiting (or ready) stays referenced by the items map and the B-trees for as long as the queue is",
		Upstream:   Version + "/pkg/controller/priorityqueue/priorityqueue.go:500-503",
		Guarantees: []string{pwq.GNoRetention},
	},
	{Check: pwq.CheckDelayingModel, Reason: addOfWaiting, Upstream: Version + "/pkg/controller/priorityqueue/priorityqueue.go:236-270", Guarantees: orderGuarantees},
	{Check: pwq.CheckDelayingMetrics, Reason: "the same machine as delaying/model with metrics on: " + addOfWaiting, Upstream: Version + "/pkg/controller/priorityqueue/priorityqueue.go:236-270", Guarantees: orderGuarantees},
	{Check: pwq.CheckDelayingTies, Reason: "the same machine with equal ready times: " + addOfWaiting, Upstream: Version + "/pkg/controller/priorityqueue/priorityqueue.go:236-270", Guarantees: orderGuarantees},
}

// RateLimitDivergences are the priority queue's defects as a rate-limiting
// queue: the delaying machine's, with AddRateLimited.
var RateLimitDivergences = []checkkit.Divergence{
	{Check: pwq.CheckRateLimitingModel, Reason: addOfWaiting, Upstream: Version + "/pkg/controller/priorityqueue/priorityqueue.go:236-270", Guarantees: orderGuarantees},
	{Check: pwq.CheckRateLimitingDelegate, Reason: "the delegation machine mixes in AddAfter and Gets: " + addOfWaiting, Upstream: Version + "/pkg/controller/priorityqueue/priorityqueue.go:236-270", Guarantees: orderGuarantees},
}
