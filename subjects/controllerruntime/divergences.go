package controllerruntime

import (
	"github.com/kverify/kverify/props/checkkit"
	pwq "github.com/kverify/kverify/props/workqueue"
)

// doubleClose declares, for a lifecycle check, that a second ShutDown
// panics.
func doubleClose(check string) checkkit.Divergence {
	return checkkit.Divergence{
		Check:    check,
		Reason:   "a second ShutDown (or ShutDownWithDrain, which is ShutDown) closes the done channel again and panics: close of closed channel",
		Upstream: Version + "/pkg/controller/priorityqueue/priorityqueue.go:500-510",
		Class:    checkkit.ClassDefect,
		Evidence: "PriorityQueue implements client-go's TypedRateLimitingInterface (" + Version + "/pkg/controller/priorityqueue/priorityqueue.go:55-56), whose delaying ShutDown \"may be invoked more than once\" " +
			"(k8s.io/client-go@v0.37.2/util/workqueue/delaying_queue.go:238-239; https://github.com/kubernetes/kubernetes/pull/77170: \"All queue ShutDown() calls should be able to be invoked multiple times\"); no controller-runtime issue found",
		Guarantees: []string{pwq.GNoPanic},
		Shape:      `^No panic: .*close of closed channel$`,
	}
}

// QueueDivergences are the priority queue's defects under its own profile
// (spec/workqueue.ControllerRuntime): what the profile declares as
// deliberate passes; these are not in any profile.
var QueueDivergences = []checkkit.Divergence{
	doubleClose(pwq.CheckLifecycle),
	{
		Check:    pwq.CheckRace,
		Releases: ">=v0.22.0",
		Reason:   "a Get in flight when ShutDown is called can return an item together with shutdown=true (GetWithPriority returns w.shutdown.Load() beside the item it received); a caller that sees shutdown drops the item without Done, so its key stays locked",
		Upstream: Version + "/pkg/controller/priorityqueue/priorityqueue.go:449-473",
		Class:    checkkit.ClassDefect,
		Evidence: "PriorityQueue implements client-go's TypedRateLimitingInterface (" + Version + "/pkg/controller/priorityqueue/priorityqueue.go:55-56), whose Get says \"If shutdown = true, the caller should end their goroutine. You must call Done with item\" " +
			"(k8s.io/client-go@v0.37.2/util/workqueue/queue.go:262-264), so an item returned beside shutdown=true (priorityqueue.go:471) is dropped without Done; related shutdown races were fixed as bugs " +
			"(https://github.com/kubernetes-sigs/controller-runtime/issues/3239, #3538, closed), none covers this one",
		// Narrowed: the "no progress for 5s" once seen in the drain after
		// a round, with no queue goroutine alive, was the check's own
		// porcupine search on a loaded machine, which the watchdog now
		// leaves alone (checkkit.Progress.Analyse).
		Guarantees: []string{pwq.GAtomic},
		Shape:      `^Atomic calls: race ShutDown/Get[^:]*: the history has no linearization`,
	},
	{
		Check:        pwq.CheckLinearFIFO,
		Releases:     ">=v0.22.0",
		Reason:       "the Get that returns an item with shutdown=true (see queue/race) makes the history unlinearizable when a Get is in flight at the workload's ShutDown",
		Upstream:     Version + "/pkg/controller/priorityqueue/priorityqueue.go:449-473",
		Class:        checkkit.ClassDefect,
		Evidence:     "the queue/race defect: client-go's Get contract (k8s.io/client-go@v0.37.2/util/workqueue/queue.go:262-264), which PriorityQueue implements, has the caller end on shutdown=true, so an item returned with it is never processed",
		Intermittent: true,
		Guarantees:   []string{pwq.GLinearizability},
		Shape:        `^Linearizability: (whole-queue \(FIFO\)|per-key)[^:]* history of \d+ operations .* has no linearization`,
	},
	{
		Check:        pwq.CheckLinearPerKey,
		Releases:     ">=v0.22.0",
		Reason:       "the same Get that returns an item with shutdown=true, seen per key",
		Upstream:     Version + "/pkg/controller/priorityqueue/priorityqueue.go:449-473",
		Class:        checkkit.ClassDefect,
		Evidence:     "the queue/race defect: client-go's Get contract (k8s.io/client-go@v0.37.2/util/workqueue/queue.go:262-264), which PriorityQueue implements, has the caller end on shutdown=true, so an item returned with it is never processed",
		Intermittent: true,
		Guarantees:   []string{pwq.GLinearizability},
		Shape:        `^Linearizability: (whole-queue \(FIFO\)|per-key)[^:]* history of \d+ operations .* has no linearization`,
	},
}

// orderGuarantees are the guarantees the add-of-waiting defect breaks in
// the delaying machines: the order of what Gets hand out.
var orderGuarantees = []string{pwq.GFair, pwq.GReadyOrder, pwq.GTieOrder}

// orderShape is what the add-of-waiting defect looks like: a Get hands out
// an item other than the model's head.
const orderShape = `^(Fair|ReadyAt order|Tie order): (in \w+:Drain\(\d+\), Get \d+|Gets) returned \S+, the model's FIFO head is \S+`

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
		Class:      checkkit.ClassDefect,
		Evidence:   "no doc allows it: ShutDown (" + Version + "/pkg/controller/priorityqueue/priorityqueue.go:500-503) only sets the flag and closes done, and nothing documents that items no Get can return stay referenced; no upstream issue found",
		Guarantees: []string{pwq.GNoRetention},
		Shape:      `^No retention: \d+ of \d+ items the queue no longer needs are still referenced by it; the first: .* when ShutDown is called`,
	},
	{Check: pwq.CheckDelayingModel, Releases: ">=v0.23.0", Reason: addOfWaiting, Upstream: Version + "/pkg/controller/priorityqueue/priorityqueue.go:236-270", Guarantees: orderGuarantees, Shape: orderShape,
		Class: checkkit.ClassDefect, Evidence: Version + "/pkg/controller/priorityqueue/priorityqueue.go:49-52: an item re-enqueued at a higher priority \"will be placed at the end among items of the new priority, in order to preserve FIFO semantics within each priority level\"; " +
			"a waiting item made ready by Add keeps its first-add counter and is handed out ahead of items ready before it, breaking that FIFO; no upstream issue found"},
	{Check: pwq.CheckDelayingMetrics, Releases: ">=v0.23.0", Reason: "the same machine as delaying/model with metrics on: " + addOfWaiting, Upstream: Version + "/pkg/controller/priorityqueue/priorityqueue.go:236-270", Guarantees: orderGuarantees, Shape: orderShape,
		Class: checkkit.ClassDefect, Evidence: Version + "/pkg/controller/priorityqueue/priorityqueue.go:49-52 promises \"FIFO semantics within each priority level\", which the add-of-waiting defect breaks (see delaying/model)"},
	{Check: pwq.CheckDelayingTies, Releases: ">=v0.23.0", Reason: "the same machine with equal ready times: " + addOfWaiting, Upstream: Version + "/pkg/controller/priorityqueue/priorityqueue.go:236-270", Guarantees: orderGuarantees, Shape: orderShape,
		Class: checkkit.ClassDefect, Evidence: Version + "/pkg/controller/priorityqueue/priorityqueue.go:49-52 promises \"FIFO semantics within each priority level\", which the add-of-waiting defect breaks (see delaying/model)"},
}

// RateLimitDivergences are the priority queue's defects as a rate-limiting
// queue: the delaying machine's, with AddRateLimited.
var RateLimitDivergences = []checkkit.Divergence{
	{
		Check:    pwq.CheckRateLimitingCollaborators,
		Releases: ">=v0.23.0", // the add buffer (pull 3415) arrived in v0.23.0
		Reason:   "AddRateLimited only appends to an add buffer; the queue's own goroutine (started by New) later calls the limiter's When, under the queue's lock, so a limiter that panics crashes the process instead of the caller's AddRateLimited (client-go calls When within AddRateLimited, rate_limiting_queue.go:60-62), and the panic would leave the lock held",
		Upstream: Version + "/pkg/controller/priorityqueue/priorityqueue.go:114,169-183,188-224",
		Class:    checkkit.ClassDesign,
		Evidence: "deliberate: https://github.com/kubernetes-sigs/controller-runtime/pull/3415 (merged, \"Use a buffer to optimize priority queue AddWithOpts performance\") made AddWithOpts only append to a buffer that the queue's goroutine flushes under its lock, " +
			"so the limiter's When runs there (" + Version + "/pkg/controller/priorityqueue/priorityqueue.go:169-183,224)",
		Guarantees: []string{pwq.GLimiterFault},
		Shape:      `^a faulty limiter has client-go's outcome: .*the queue called the limiter's When\(\w+\) on a goroutine of its own, not within the call`,
	},
	{Check: pwq.CheckRateLimitingModel, Releases: ">=v0.23.0", Reason: addOfWaiting, Upstream: Version + "/pkg/controller/priorityqueue/priorityqueue.go:236-270", Guarantees: orderGuarantees, Shape: orderShape,
		Class: checkkit.ClassDefect, Evidence: Version + "/pkg/controller/priorityqueue/priorityqueue.go:49-52 promises \"FIFO semantics within each priority level\", which the add-of-waiting defect breaks (see delaying/model)"},
	{Check: pwq.CheckRateLimitingDelegate, Releases: ">=v0.23.0", Reason: "the delegation machine mixes in AddAfter and Gets: " + addOfWaiting, Upstream: Version + "/pkg/controller/priorityqueue/priorityqueue.go:236-270", Guarantees: orderGuarantees, Shape: orderShape,
		Class: checkkit.ClassDefect, Evidence: Version + "/pkg/controller/priorityqueue/priorityqueue.go:49-52 promises \"FIFO semantics within each priority level\", which the add-of-waiting defect breaks (see delaying/model)"},
}
