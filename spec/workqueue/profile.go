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
	// Fairness is how long a queued item may wait while more work keeps
	// arriving (issue 27, class 7): the zero value, FairFIFO, is
	// client-go's bound.
	Fairness Fairness

	// The delaying queue's variation points (spec/delaying).

	// AddAfterAbsorbed: AddAfter with a delay of an item that is dirty
	// (queued, or added again while being processed) changes nothing: it
	// is handed out once. client-go keeps the delay: the item is added
	// again when it ends.
	AddAfterAbsorbed bool
	// AddClearsWaiting: Add (or AddAfter without a delay) of an item that
	// waits for a delay makes it ready and forgets the delay. client-go
	// keeps the delay: the item is added again when it ends.
	AddClearsWaiting bool
	// TiesByFirstAdd: waiting items with the same ready time become ready
	// in the order they started waiting, a lowered ready time included.
	// client-go: in the order their ready times were set.
	TiesByFirstAdd bool
	// RetriesCountDelayed: the retries metric counts the AddAfter and
	// AddRateLimited calls whose delay is positive. client-go counts every
	// AddAfter made before shutdown, whatever its delay.
	RetriesCountDelayed bool
	// LimiterAskedLater: AddRateLimited returns before it asks the rate
	// limiter; the queue asks it once, when it takes the add in (at its
	// next Len or Get, or on a goroutine of its own). client-go asks
	// during the call.
	LimiterAskedLater bool
	// AddHandedOver: Add puts the item in an inner queue, and a goroutine
	// of the queue moves it to the queue Get reads from, later. The
	// checks let the queue settle after each call (every goroutine of it
	// blocked) and judge it then: what it promises is the state it settles
	// in, not the one in which a call returns. client-go queues during the
	// call.
	AddHandedOver bool
}

// ClientGo is client-go v0.37.2's workqueue: the default profile.
var ClientGo = Profile{Name: "client-go"}

// Knative is knative.dev/pkg's two-lane controller queue
// (controller/two_lane_queue.go at the pinned pseudo-version): client-go's
// queues joined by goroutines, Add going to the fast lane's queue and a
// goroutine per lane handing items to the consumer queue Get reads from
// (two_lane_queue.go:40-75).
var Knative = Profile{Name: "knative", AddHandedOver: true}

// ControllerRuntime is controller-runtime's priority queue
// (pkg/controller/priorityqueue, v0.25.3): Len counts the ready set, items
// re-added while locked included; an item re-added while locked waits in
// the ready set at its new place; Get returns at once after ShutDown;
// ShutDownWithDrain is ShutDown (priorityqueue.go:449-523); priorities
// with FIFO inside a level, the higher of two priorities kept
// (priorityqueue.go:200-273, lessReady at :569); a delay does not touch a
// ready item and an Add ends a delay (:236-270); a lowered ready time keeps
// the item's place among equal ones (lessWaiting at :562).
var ControllerRuntime = Profile{
	Name:               "controller-runtime",
	ReAddQueues:        true,
	LenCountsReAdded:   true,
	GetStopsAtShutDown: true,
	DrainIsShutDown:    true,
	Priorities:         true,
	AddAfterAbsorbed:   true,
	AddClearsWaiting:   true,
	TiesByFirstAdd:     true,
	// The retries metric (priorityqueue.go:214-219).
	RetriesCountDelayed: true,
	// AddWithOpts buffers; the flush asks the limiter (:150-200).
	LimiterAskedLater: true,
	// The ready items are ordered by priority, then by AddedCounter
	// (lessReady, priorityqueue.go:569-574): FIFO among equal priorities,
	// where an Add of a queued item at its priority or lower keeps its
	// counter and a raise takes a new one (:261-270); nothing ages a
	// waiting item, so a stream of higher priorities starves it.
	Fairness: FairWithinPriority,
}

// Fairness is what a profile promises about an item's wait in the queue
// while new keys, re-adds of queued keys and re-adds of processed keys keep
// arriving: a bound on the Gets before it is handed out, or none.
type Fairness uint8

const (
	// FairFIFO is bounded: an item queued behind n others is handed out
	// within the next n+1 Gets, however many Adds arrive meanwhile (an Add
	// of a queued item keeps its place; an item re-added while being
	// processed is queued when it is marked Done, or, with ReAddQueues, at
	// that Add). client-go's.
	FairFIFO Fairness = iota
	// FairWithinPriority is bounded among equal priorities and unbounded
	// across them: an item queued behind n others of its priority is
	// handed out within the next n+1 Gets that hand out its priority; a
	// sustained stream of higher-priority adds may keep it waiting for
	// ever. A queue with Priorities.
	FairWithinPriority
	// FairNone promises no bound: an item may wait while other work keeps
	// arriving.
	FairNone
)

func (f Fairness) String() string {
	switch f {
	case FairFIFO:
		return "bounded: FIFO (n+1 Gets behind n)"
	case FairWithinPriority:
		return "bounded among equal priorities (n+1 Gets of its priority behind n), unbounded across priorities"
	case FairNone:
		return "unbounded"
	}
	return "Fairness(?)"
}

// Bounded reports whether f promises a bound on an item's wait (among
// equal priorities, for FairWithinPriority).
func (f Fairness) Bounded() bool { return f == FairFIFO || f == FairWithinPriority }
