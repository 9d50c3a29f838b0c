package controllerruntime

import (
	"slices"

	"github.com/kverify/kverify/props/checkkit"
	pwq "github.com/kverify/kverify/props/workqueue"
)

// The priority queue's defects of earlier releases (v0.20 to v0.22), found
// by controller-runtime's behaviour matrix (kverify matrix --subjects
// controller-runtime@matrix, docs/matrix-controller-runtime.md) and
// declared for the releases that have them (Releases: a range of
// controller-runtime releases). Each was fixed upstream; the declarations
// quote the release they were read in.

const (
	v020 = "sigs.k8s.io/controller-runtime@v0.20.4"
	v022 = "sigs.k8s.io/controller-runtime@v0.22.5"
)

// getBlocksAfterShutdown: before v0.22 a Get waits on the hand-out
// channel alone, so ShutDown wakes no Get and a Get after it blocks for
// ever.
func getBlocksAfterShutdown(check string, guarantees []string, shape string) checkkit.Divergence {
	return checkkit.Divergence{Check: check, Releases: "<v0.22.0", Guarantees: guarantees, Shape: shape,
		Reason: "GetWithPriority waits on w.get alone (item := <-w.get); ShutDown only sets the flag and closes done, and the queue's goroutine stops handing out items, so a Get blocked at ShutDown, or called after it, never returns: " +
			"a worker loop never sees shutdown=true, and a controller's Start waits for its workers for ever; items added after ShutDown are still stored and counted",
		Upstream: v020 + "/pkg/controller/priorityqueue/priorityqueue.go:272-279,306-309",
		Class:    checkkit.ClassDefect,
		Evidence: "reported as https://github.com/kubernetes-sigs/controller-runtime/issues/3239 (\"Get from priority queue might get stuck when the priority queue is shut down\", kind/bug); " +
			"fixed by https://github.com/kubernetes-sigs/controller-runtime/pull/3243 and #3250 (\"The PQ still stores new items when shutdown\"), cherry-picked to release-0.21 in patches the Go module proxy does not serve here, and by #3337 (\"Don't block on Get when queue is shutdown (2nd try)\", release-0.22: #3339); v0.22.5 and later return at once (v0.22.5 priorityqueue.go:313-336)"}
}

// Shapes of a Get that ShutDown does not wake, as each check words it.
const (
	shapeGetsStillBlocked = `^Shutdown wakes Gets: \d+ Get\(s\) still blocked on a shut-down queue`
	shapeBubbleDeadlock   = `^No panic: deadlock: all goroutines in bubble are blocked`
	shapeNoProgress       = `^Termination: no progress `
	shapeLivenessShutdown = `^Liveness: \d+ Get\(s\) still blocked with \d+ item\(s\) queued .*\(shutting down: true\)`
	shapeShutdownUnblocks = `^Shutdown unblocks Get: Get of worker \d+, blocked on an empty queue, still blocked after ShutDown`
	shapeRetriesAfterShut = `^Metrics: retries = \d+, want \d+: one per AddAfter \(or AddRateLimited\) made before shutdown`
)

// readyAtFirst: before v0.22 the one b-tree sorts by ready time before
// priority, so an item once added with a delay is handed out after every
// item never delayed, whatever their priorities.
func readyAtFirst(check string, guarantees []string, shape string, intermittent bool) checkkit.Divergence {
	return checkkit.Divergence{Check: check, Releases: "<v0.22.0", Intermittent: intermittent, Guarantees: guarantees, Shape: shape,
		Reason:   "less() orders items by ReadyAt first (nil before any time), then priority, then the added counter: an item requeued with a delay sorts behind every ready item that never had one, whatever its priority, so a higher priority is handed out late and, while undelayed adds keep arriving, a once-delayed item waits without bound",
		Upstream: v020 + "/pkg/controller/priorityqueue/priorityqueue.go:363-378",
		Class:    checkkit.ClassDefect,
		Evidence: "the queue's doc promises the highest priority first (PriorityQueue, priorityqueue.go:30-35); fixed by https://github.com/kubernetes-sigs/controller-runtime/pull/3330 (\"Fix a bug where the priorityqueue would sometimes not return high-priority items first\": " +
			"\"items requeued with a readyAt timestamp are always added to the queue behind items that are ready, even if they have higher priority\"), in v0.22.x"}
}

// oneTreeLen: before v0.23 every item, ready or waiting, lives in one
// b-tree, and Len walks it counting each item whose ready time is nil or
// past: it counts items no Get can hand out (re-added while a worker holds
// the key, or added after ShutDown, which the queue still stores), and on
// v0.22 (priority first) stops at the first waiting item of a higher
// priority; the depth metric is kept apart from it.
func oneTreeLen(check string, guarantees []string) checkkit.Divergence {
	return checkkit.Divergence{Check: check, Releases: "<v0.23.0", Intermittent: true, Guarantees: guarantees, Shape: shapeLenCount,
		Reason: "one b-tree holds every item, ready or waiting; Len walks it and counts each item whose ReadyAt is nil or past, whether a Get can hand it out or not: an item re-added while a worker holds its key, an item added after ShutDown (stored: the queue does not refuse it), and an item waiting when the clock passed its time but the queue's goroutine has not moved it; " +
			"on v0.22, ordered by priority first, Len stops at the first waiting item and misses the ready items of lower priorities (Len 0 with one ready); the depth metric, kept by the queue's goroutine, disagrees with both",
		Upstream: v020 + "/pkg/controller/priorityqueue/priorityqueue.go:320-335; " + v022 + "/pkg/controller/priorityqueue/priorityqueue.go:378-392",
		Class:    checkkit.ClassDefect,
		Evidence: "client-go's Len, which PriorityQueue implements (TypedRateLimitingInterface), counts the items a Get can hand out; https://github.com/kubernetes-sigs/controller-runtime/pull/3250 (\"The PQ still stores new items when shutdown\") stopped the stores after ShutDown; " +
			"v0.23.0's rewrite, https://github.com/kubernetes-sigs/controller-runtime/pull/3416 (\"Use separate b-trees for ready and non-ready items\": one tree \"sorted by priority first and readyAt second\" was \"difficult to reason about\", and there was \"no explicit transition step from non-ready to ready\"), counts the ready tree (v0.23.3 priorityqueue.go:489-498)"}
}

// shapeLenCount is what oneTreeLen looks like to each check: a Len or a
// depth that is not the model's.
const shapeLenCount = `^(Len law: Len\(\) = \d+, model \d+ \(|Not before readyAt: Len\(\) = \d+, model \d+ \(|Immediate: Len\(\) = \d+ right after .* returned, want \d+: the queue counts an item it should not hold|Metrics: depth = \d+, model has \d+ dirty item|Priority order: after \S+\(.*\): Len = \d+, want \d+|Shutdown drops waiting: an hour after ShutDown: Len\(\) = \d+, want 0)`

// readyFirstV022: on v0.22 the b-tree sorts by priority, then ready time
// with nil first: inside a priority an item that never waited goes before
// one that became ready earlier.
func readyFirstV022(check string, guarantees []string, shape string, intermittent bool) checkkit.Divergence {
	return checkkit.Divergence{Check: check, Releases: ">=v0.22.0 <v0.23.0", Intermittent: intermittent, Guarantees: guarantees, Shape: shape,
		Reason:   "less() orders by priority, then ReadyAt with nil first, then the added counter: inside a priority every item that never waited goes before an item that waited and became ready earlier, so a once-delayed item waits behind every later undelayed add, without bound while they keep coming",
		Upstream: v022 + "/pkg/controller/priorityqueue/priorityqueue.go:421-436",
		Class:    checkkit.ClassDefect,
		Evidence: "the queue promises FIFO inside a priority level (v0.25.3 priorityqueue.go:49-52); changed in v0.23.0 by https://github.com/kubernetes-sigs/controller-runtime/pull/3416, which orders ready items by priority and the counter alone (\"the fifo arguably should be based on when items became ready for items that were added with a non-nil after\")"}
}

// deadlockOnShutdown, for a check that can meet it: until v0.25 the queue's goroutine hands an item to a
// waiting Get with a plain send under its lock; a Get that ShutDown woke
// has gone, so the send blocks for ever with the lock held.
func deadlockOnShutdown(check string) checkkit.Divergence {
	return checkkit.Divergence{Check: check, Releases: ">=v0.22.0 <v0.25.0", Intermittent: true,
		Guarantees: []string{checkkit.GTermination}, Shape: shapeNoProgress,
		Reason:   "handleReadyItems (spin before v0.23) sends a ready item to a waiting Get with w.get <- item while holding w.lock; ShutDown closes done, a waiting Get returns through <-w.done without taking it, the send blocks for ever, and every later call that takes the lock (Len, Add, Done) blocks with it: the race check's Len after ShutDown hangs",
		Upstream: v022 + "/pkg/controller/priorityqueue/priorityqueue.go:276-286,313-336",
		Class:    checkkit.ClassDefect,
		Evidence: "reported as https://github.com/kubernetes-sigs/controller-runtime/issues/3538 (\"Deadlock in PriorityQueue on shutdown\", 2026-06-29), fixed by https://github.com/kubernetes-sigs/controller-runtime/pull/3540 (select on w.done around the send; v0.25.3 priorityqueue.go:416-425); " +
			"reached here in some runs only: it needs a Get woken by ShutDown while the goroutine is about to hand it an item"}
}

// Shapes of the order defects.
const (
	shapeBoundedWait = `^Bounded wait: "\w+", queued behind \d+ others of priority -?\d+, was not handed out`
	shapeHighFirst   = `^Priority order: GetWithPriority = \S+, want \S+: the highest priority first`
)

// waitersMidWalk: before v0.22 the queue's goroutine reads the number of
// waiting Gets atomically at each item of its walk, so a Get that arrives
// during a walk is handed a later item while earlier ready ones were
// passed over (#3363): the ready-time order breaks, now and then.
var waitersMidWalk = checkkit.Divergence{Check: pwq.CheckDelayingScale, Releases: "<v0.22.0", Intermittent: true,
	Guarantees: []string{pwq.GReadyOrder},
	Shape:      `^ReadyAt order: seed \d+, \d+ keys, round \d+ \(t0\+\S+\): \S+ \(ready at t0\+\S+\) came after an item ready at t0\+\S+`,
	Reason:     "spin walks the b-tree and, for each ready item, reads w.waiters.Load() (an atomic, v0.20.4 priorityqueue.go:231): items seen while no Get waited are passed over, and a Get that arrives mid-walk is handed the next, later item, so an item ready earlier is handed out after one ready later",
	Upstream:   v020 + "/pkg/controller/priorityqueue/priorityqueue.go:122-124,225-248,273",
	Class:      checkkit.ClassDefect,
	Evidence:   "reported as https://github.com/kubernetes-sigs/controller-runtime/issues/3363 (\"Priority queue: priority not always respected\": \"not all the items of the BTree evaluate the same w.waiters.Load() value\"), fixed by https://github.com/kubernetes-sigs/controller-runtime/pull/3368 (the waiters count under the lock; release-0.22: #3371); v0.22.5 reads it under the lock (priorityqueue.go:128,272); met by delaying/scale in a CI run, not in the matrix's runs"}

// historyQueue, historyDelaying and historyRateLimit are the earlier
// releases' declarations, by component.
var (
	historyQueue = []checkkit.Divergence{
		getBlocksAfterShutdown(pwq.CheckDrain, []string{pwq.GShutdownWakes}, shapeGetsStillBlocked),
		getBlocksAfterShutdown(pwq.CheckDoneUnheld, []string{pwq.GShutdownWakes}, shapeGetsStillBlocked),
		getBlocksAfterShutdown(pwq.CheckExhaustive, []string{pwq.GShutdownWakes}, shapeGetsStillBlocked),
		getBlocksAfterShutdown(pwq.CheckMetrics, []string{pwq.GShutdownWakes}, shapeGetsStillBlocked),
		getBlocksAfterShutdown(pwq.CheckModel, []string{pwq.GShutdownWakes}, shapeGetsStillBlocked),
		getBlocksAfterShutdown(pwq.CheckLifecycle, []string{checkkit.GNoPanic}, shapeBubbleDeadlock),
		// The race check's own Get blocks for ever; its racer, idle, parks,
		// and the bubble deadlocks (before the racer parked on its own
		// the watchdog met it as a spin: Termination, no progress).
		getBlocksAfterShutdown(pwq.CheckRace, []string{checkkit.GNoPanic}, shapeBubbleDeadlock),
		getBlocksAfterShutdown(pwq.CheckLinearFIFO, []string{checkkit.GTermination}, shapeNoProgress),
		getBlocksAfterShutdown(pwq.CheckLinearPerKey, []string{checkkit.GTermination}, shapeNoProgress),
		oneTreeLen(pwq.CheckExhaustive, []string{pwq.GLenLaw}),
		oneTreeLen(pwq.CheckPriority, []string{pwq.GPriority}),
		readyAtFirst(pwq.CheckPriority, []string{pwq.GPriority}, shapeHighFirst, true),
		readyAtFirst(pwq.CheckLiveness, []string{pwq.GBoundedWait}, shapeBoundedWait, false),
		deadlockOnShutdown(pwq.CheckRace),
		deadlockOnShutdown(pwq.CheckLinearFIFO),
		deadlockOnShutdown(pwq.CheckLinearPerKey),
		readyFirstV022(pwq.CheckPriority, []string{pwq.GPriority}, shapeHighFirst, true),
	}
	historyDelaying = slices.Concat([]checkkit.Divergence{
		getBlocksAfterShutdown(pwq.CheckDelayingLifecycle, []string{checkkit.GNoPanic}, shapeBubbleDeadlock),
		getBlocksAfterShutdown(pwq.CheckDelayingShutdown, []string{pwq.GShutdownUnblocks}, shapeShutdownUnblocks),
		oneTreeLen(pwq.CheckDelayingShutdown, []string{pwq.GDropsWaiting}),
		readyAtFirst(pwq.CheckDelayingLiveness, []string{pwq.GBoundedWait}, shapeBoundedWait, false),
		readyFirstV022(pwq.CheckDelayingLiveness, []string{pwq.GBoundedWait}, shapeBoundedWait, false),
		waitersMidWalk,
	}, oneTreeMachines(pwq.CheckDelayingExhaustive, pwq.CheckDelayingModel, pwq.CheckDelayingMetrics, pwq.CheckDelayingTies))
	historyRateLimit = oneTreeMachines(pwq.CheckRateLimitingExhaustive, pwq.CheckRateLimitingModel, pwq.CheckRateLimitingDelegate)
)

// oneTreeMachines are the delaying and rate-limiting machines' checks on
// the releases before v0.23: Gets that ShutDown does not wake (<v0.22),
// Len's count, and the order of the one b-tree (both orders), whichever a
// run meets first.
func oneTreeMachines(checks ...string) []checkkit.Divergence {
	var ds []checkkit.Divergence
	for _, c := range checks {
		shape := shapeLivenessShutdown
		if c == pwq.CheckRateLimitingDelegate {
			shape += "|" + shapeRetriesAfterShut
		}
		ds = append(ds,
			getBlocksAfterShutdown(c, []string{pwq.GLiveness, pwq.GMetrics}, shape),
			oneTreeLen(c, []string{pwq.GNotEarly, pwq.GLenLaw, pwq.GImmediate, pwq.GMetrics}),
			readyAtFirst(c, orderGuarantees, orderShape, true),
			readyFirstV022(c, orderGuarantees, orderShape, true))
	}
	return ds
}
