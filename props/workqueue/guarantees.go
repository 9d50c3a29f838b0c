package workqueue

import "github.com/kverify/kverify/props/checkkit"

// The guarantees the work queue checks (plain, delaying, rate-limiting
// and priority) name in violations.
const (
	// GLimiterFault: with a limiter that panics or answers an edge delay,
	// a rate-limiting queue's call swallowed the panic, queued the item
	// late or at all when it must not, or left the queue stuck.
	GLimiterFault = "a faulty limiter has client-go's outcome"
	// GLenLaw: Len differs from the model's number of queued items.
	GLenLaw = "Len law"
	// GShutdown: ShuttingDown differs from the model, or a Get returned
	// shutdown with items still queued.
	GShutdown = "Shutdown"
	// GStingy: Get handed out an item still being processed, or more
	// items than were queued.
	GStingy = "Stingy"
	// GFair: Gets did not hand out the model's FIFO head.
	GFair = "Fair"
	// GBlockingGet: a Get returned from an empty running queue.
	GBlockingGet = "Blocking Get"
	// GShutdownWakes: a Get is still blocked on a shut-down queue.
	GShutdownWakes = "Shutdown wakes Gets"
	// GLiveness: a Get is still blocked with items queued, or of two
	// racing calls one is still blocked after the other returned.
	GLiveness = "Liveness"
	// GMetrics: a metric (depth, adds, latency, work duration, retries)
	// differs from what the model's history gives.
	GMetrics = "Metrics"
	// GDrain: ShutDownWithDrain returned with items queued or processing,
	// or is still blocked when nothing is.
	GDrain = "Drain"
	// GLinearizability: a concurrent history has no linearization
	// against the queue model.
	GLinearizability = "Linearizability"
	// GAtomic: two racing calls gave an outcome no serial order of the
	// two gives.
	GAtomic = "Atomic calls"
	// GNotEarly: an item became ready (or Len grew) before its ready
	// time.
	GNotEarly = "Not before readyAt"
	// GOnTime: an item was not ready at its ready time.
	GOnTime = "Ready at readyAt"
	// GWithinMaxWait: an item was not ready within maxWait after its
	// ready time.
	GWithinMaxWait = "Ready within maxWait"
	// GEarlierWins: of two AddAfters of one item, the earlier ready time
	// did not win (or the item became ready twice).
	GEarlierWins = "Earlier AddAfter wins"
	// GReadyOrder: items were handed out out of ready-time order.
	GReadyOrder = "ReadyAt order"
	// GTieOrder: items with equal ready times were not handed out in the
	// order they were added.
	GTieOrder = "Tie order"
	// GImmediate: an AddAfter with a delay <= 0 (or an AddRateLimited
	// with a zero delay) returned before the item was added.
	GImmediate = "Immediate"
	// GHugeNever: an item set for a huge delay became ready.
	GHugeNever = "Huge delay never fires"
	// GShutdownReturns: ShutDown (or ShutDownWithDrain with nothing
	// outstanding) did not return.
	GShutdownReturns = "Shutdown returns"
	// GShutdownUnblocks: a Get blocked on an empty queue was not released
	// by ShutDown, or a Get after it did not report shutdown.
	GShutdownUnblocks = "Shutdown unblocks Get"
	// GReleasesDrain: a second ShutDown did not release a
	// ShutDownWithDrain begun after the first.
	GReleasesDrain = "ShutDown releases drain"
	// GAddAfterReturns: an AddAfter during or after shutdown blocked.
	GAddAfterReturns = "AddAfter returns"
	// GDropsWaiting: after shutdown an item still waiting was handed out
	// or counted.
	GDropsWaiting = "Shutdown drops waiting"
	// GNoLeak: goroutines were left behind after ShutDown.
	GNoLeak = "No leak"
	// GNoPanic is checkkit's: a call on the queue panicked.
	GNoPanic = checkkit.GNoPanic
	// GLifecycle: ShutDown, ShutDownWithDrain, Get or Add called twice,
	// at once or after shutdown panicked, blocked or misreported
	// shutdown.
	GLifecycle = "Lifecycle calls are safe"
	// GOrder: the queue misused its pluggable storage (Touch not called
	// for exactly the Adds that found their item queued, or another
	// misuse).
	GOrder = "Order hook"
	// GPriority: Len or GetWithPriority differs from the priority model
	// (the highest priority first, FIFO inside a level).
	GPriority = "Priority order"
	// GWhenOnce: AddRateLimited did not ask the limiter's When exactly
	// once.
	GWhenOnce = "AddRateLimited asks When once"
	// GForget: Forget did not reach the limiter.
	GForget = "Forget delegates"
	// GNumRequeues: NumRequeues is not the limiter's.
	GNumRequeues = "NumRequeues delegates"
	// GNoRetention: an item the queue no longer needs is still
	// referenced by it.
	GNoRetention = "No retention"
	// GOneTimer: the delaying queue held more than one live timer.
	GOneTimer = "At most one timer"
	// GBoundedWait: under sustained load an item was not handed out
	// within the bound its profile declares (Profile.Fairness): n+1 Gets
	// behind n others (of its priority).
	GBoundedWait = "Bounded wait"
	// GNoTimerLeft: a timer is still live after shutdown.
	GNoTimerLeft = "No timer after shutdown"
)

// Guarantees returns every guarantee the work queue checks can name in a
// violation (besides checkkit's GTermination, which any check can).
func Guarantees() []string {
	return []string{GLenLaw, GShutdown, GStingy, GFair, GBlockingGet, GShutdownWakes, GLiveness, GMetrics, GDrain,
		GLinearizability, GAtomic, GNotEarly, GOnTime, GWithinMaxWait, GEarlierWins, GReadyOrder, GTieOrder,
		GImmediate, GHugeNever, GShutdownReturns, GShutdownUnblocks, GReleasesDrain, GAddAfterReturns,
		GDropsWaiting, GNoLeak, GNoPanic, GLifecycle, GOrder, GPriority, GWhenOnce, GForget, GNumRequeues,
		GNoRetention, GOneTimer, GNoTimerLeft, GBoundedWait, GLimiterFault}
}
