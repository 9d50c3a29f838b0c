package informer

// The guarantees the informer's fan-out checks name in violations.
const (
	// GNonBlocking: Emit, Start, AddHandler or RemoveHandler did not
	// return (behind a blocked handler, or at all).
	GNonBlocking = "Non-blocking distribute"
	// GDelivery: a handler received other notifications than its
	// initial list and then every event emitted while it is registered,
	// once each, in order.
	GDelivery = "Delivery"
	// GSerial: two calls of one handler overlapped.
	GSerial = "Serial delivery"
	// GShutdown: Stop did not return once no handler call was in
	// progress, returned during one, or left a registration's Done open.
	GShutdown = "Shutdown"
	// GRemove: RemoveHandler failed, its Done closed while a call was in
	// progress or did not close after, or the removed handler was called
	// again.
	GRemove = "Remove"
	// GHandlerSync: a handler's HasSynced was true before its initial
	// list returned, or false after.
	GHandlerSync = "Handler sync"
	// GIsolation: a blocked, slow or panicking handler delayed or
	// changed what the other handlers received.
	GIsolation = "Isolation"
	// GPanicContainment: a handler panic was not contained and reported
	// once (the notification skipped, the next delivered at once, the
	// handler still syncing and its listener running).
	GPanicContainment = "Panic containment"
	// GSlowWarning: the slow-handler warning fired for a call the rule
	// does not cover, not for one it does, or with the wrong backlog.
	GSlowWarning = "Slow-handler warning"
	// GStart: an event emitted right after Start was not delivered, or
	// its Emit did not return in time.
	GStart = "Start"
	// GLookahead: the pending count or high-water mark differs from the
	// one-in-hand rule (the pump stashed with nothing in hand).
	GLookahead = "Lookahead"
	// GPumpDecision: the pump's decision function took another action
	// than the model pump's.
	GPumpDecision = "Pump decision"
	// GPumpState: the pump's state after an event differs from the model
	// pump's.
	GPumpState = "Pump state"
	// GResync: resync notifications differ from the model's schedule (a
	// handler resynced when not due, not when due, or at the wrong time),
	// or overtake the handler's older notifications.
	GResync = "Resync"
	// GAddHandler: AddHandler on a running fan-out returned an error.
	GAddHandler = "AddHandler"
	// GAtomic: two racing calls on a started fan-out gave handlers what
	// no serial order of the two gives.
	GAtomic = "Atomic calls"
	// GLiveness: a racing call is still blocked after the other returned,
	// or an event was not delivered in time.
	GLiveness = "Liveness"
	// GLinearizability: a listener's history of adds and handler calls is
	// not linearizable against a FIFO.
	GLinearizability = "Linearizability"
	// GStopReturns: the fan-out's Run did not return once its context was
	// cancelled.
	GStopReturns = "Stop returns"
	// GNoLeak: goroutines were left behind after Stop.
	GNoLeak = "No leak"
	// GNoRetention: a delivered notification, or one buffered for a
	// removed handler, is still referenced by the running fan-out.
	GNoRetention = "No retention"
	// GBurstMemory: after a drained burst the fan-out keeps more live
	// heap than allowed.
	GBurstMemory = "Memory after a burst"
	// GLifecycle: Start, Stop or Run called twice, at once or out of
	// order panicked, did not return, or disturbed delivery.
	GLifecycle = "Lifecycle calls are safe"
)

// Guarantees returns every guarantee the informer's fan-out checks can
// name in a violation (besides checkkit's GTermination and GNoPanic,
// which any check can).
func Guarantees() []string {
	return []string{GNonBlocking, GDelivery, GSerial, GShutdown, GRemove, GHandlerSync, GIsolation, GPanicContainment,
		GSlowWarning, GStart, GLookahead, GPumpDecision, GPumpState, GResync, GAddHandler, GAtomic, GLiveness,
		GLinearizability, GStopReturns, GNoLeak, GNoRetention, GBurstMemory, GLifecycle}
}
