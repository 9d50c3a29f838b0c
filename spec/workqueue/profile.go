package workqueue

// Profile names the points where work queue implementations differ on
// purpose, so that one model can judge each by what it declares. The zero
// Profile is client-go's (ClientGo); every field is a departure from it.
type Profile struct {
	// Name names the profile in reports.
	Name string
	// ReAddQueues: an item added again while it is being processed is
	// queued at once, in its place at that Add, and Get skips it until its
	// Done (controller-runtime's ready set). client-go marks it dirty and
	// queues it at Done, behind whatever was added in between.
	ReAddQueues bool
	// LenCountsReAdded: Len also counts the items added again while being
	// processed. client-go's Len is the FIFO's length only.
	LenCountsReAdded bool
	// GetStopsAtShutDown: once ShutDown or ShutDownWithDrain is called,
	// Get returns shutdown at once, items still queued or not. client-go's
	// Get hands out what is queued first.
	GetStopsAtShutDown bool
	// DrainIsShutDown: ShutDownWithDrain does what ShutDown does and
	// returns at once, waiting for nothing.
	DrainIsShutDown bool
	// Priorities: Add carries a priority (Op.Priority) and Get hands out
	// the highest priority first, FIFO inside a level; an Add of a dirty
	// key with a higher priority moves it to the back of its new level, a
	// lower or equal one changes nothing. Without it every Add has
	// priority zero: one level, FIFO.
	Priorities bool
}

// ClientGo is client-go v0.37.2's workqueue: the default profile.
var ClientGo = Profile{Name: "client-go"}

// ControllerRuntime is controller-runtime's priority queue
// (pkg/controller/priorityqueue, v0.25.3): Len counts the ready set, items
// re-added while locked included; an item re-added while locked waits in
// the ready set at its new place; Get returns at once after ShutDown;
// ShutDownWithDrain is ShutDown (priorityqueue.go:449-523); priorities
// with FIFO inside a level, the higher of two priorities kept
// (priorityqueue.go:200-273, lessReady at :569).
var ControllerRuntime = Profile{
	Name:               "controller-runtime",
	ReAddQueues:        true,
	LenCountsReAdded:   true,
	GetStopsAtShutDown: true,
	DrainIsShutDown:    true,
	Priorities:         true,
}
