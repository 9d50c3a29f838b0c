// Package informer is the conformance suite for a shared informer's
// fan-out: per-handler delivery through a listener with a one-item
// lookahead pump, handler isolation, per-handler sync, handler removal and
// shutdown, delivery across the phases of an informer's life and past the
// sizes where buffers change shape, resync scheduling and who takes resync
// notifications, the slow-handler warning's thresholds, and handler faults
// (panics, handlers blocked forever, slow handlers). It is black-box: a
// subject is driven through a source of events and observed through
// handler calls, so client-go's informer can be checked through its public
// API.
package informer

import (
	"time"

	"github.com/kverify/kverify/linearizability"
	"github.com/kverify/kverify/spec/informer"
)

// Handler receives one registration's notifications. Objects are keys.
type Handler interface {
	OnAdd(key string, isInInitialList bool)
	OnUpdate(oldKey, newKey string)
	OnDelete(key string)
}

// Registration is a handler's handle.
type Registration interface {
	// HasSynced: the source has synced and every initial-list add for this
	// handler has returned.
	HasSynced() bool
	// Done is closed once the handler will not be called again after
	// RemoveHandler or Stop.
	Done() <-chan struct{}
}

// FanOut is an informer-like fan-out under test: a store of keys fed by a
// source, distributing events to registered handlers.
type FanOut interface {
	// AddHandler registers h. Keys already in the store are delivered to h
	// as initial-list adds.
	AddHandler(h Handler) (Registration, error)
	// RemoveHandler unregisters; it is idempotent.
	RemoveHandler(r Registration) error
	// Emit makes the source produce one event: Add (key is new), Update
	// (key exists; a real change) or Delete (key exists).
	Emit(kind Kind, key string)
	// Start runs the fan-out; Stop stops it and returns once every
	// goroutine it started has exited.
	Start()
	Stop()
}

// Readder is an optional view of a fan-out's lower-level API in a state
// the fan-out itself never makes: the listener behind a registration added
// to the processor again while it runs (ours: Processor.AddListener of a
// listener it has). A listener added twice still runs once: its handler
// gets every event once, in order, one call at a time (informer/lifecycle).
type Readder interface {
	AddAgain(r Registration) error
}

// Kind is an event kind.
type Kind uint8

// Event kinds.
const (
	Add Kind = iota
	Update
	Delete
)

// Backlog is an optional white-box view of a registration's listener.
type Backlog interface {
	// Pending is the number of notifications added and not yet handed to
	// the handler; HighWater the largest Pending seen.
	Pending() int64
	HighWater() int64
}

// Pump is the optional white-box view of a pump decision function: the
// state is (in hand, buffered); Step returns the new state and the
// action's name ("Hold", "Stash", "Refill", "Idle", "Stop", "Invalid").
type Pump interface {
	Step(inHand bool, buffered int, closed bool, ev informer.Event) (bool, int, bool, string)
}

// ResyncFanOut is a fan-out whose informer resyncs: every check period (the
// period it was made with; 0: never) it asks which handlers are due and
// delivers to each of them OnUpdate(k, k) for every key k in the store.
type ResyncFanOut interface {
	FanOut
	// AddHandlerWithResync registers h asking for a resync every period
	// (0: never), with client-go's rules: a period below 1s is raised to
	// 1s; one below the informer's check period lowers the check period
	// before Start and is raised to it after Start. AddHandler uses the
	// check period the fan-out was made with (client-go's default handler
	// period, NewSharedIndexInformer's defaultEventHandlerResyncPeriod).
	AddHandlerWithResync(h Handler, period time.Duration) (Registration, error)
}

// SlowWarning is one slow-handler warning: a handler call that started with
// many notifications pending and took long.
type SlowWarning struct {
	// Pending is the number of notifications waiting behind the call when
	// it started, or -1 if the subject does not say.
	Pending int64
	// Took is how long the call took, or -1 if the subject does not say.
	Took time.Duration
}

// SlowFanOut is a fan-out that reports its slow-handler warnings.
type SlowFanOut interface {
	FanOut
	// SlowWarnings returns every warning issued so far, in order.
	SlowWarnings() []SlowWarning
}

// PanicReporter is an optional capability of a FanOut: the values of the
// handler panics it contained and reported so far, in order.
type PanicReporter interface {
	HandlerPanics() []any
}

// Subject is an implementation under test. New makes a fresh, unstarted
// fan-out inside the caller's synctest bubble. Pump is nil when the
// implementation does not expose its pump decision (client-go).
//
// The fields after Linear are optional capabilities: a subject without one
// still compiles, and the checks that need it are not offered (resync) or
// skip as not applicable.
type Subject struct {
	New  func() FanOut
	Pump Pump
	// Linear makes a processor for the per-listener linearizability
	// check. It needs a Distribute that returns only once every listener
	// holds the value (so the add's interval contains its effect); nil
	// skips the check. client-go's informer hands events over
	// asynchronously through its reflector and FIFO, so it cannot take it.
	Linear func() linearizability.FanOut

	// NewResync makes a fresh, unstarted fan-out, inside the caller's
	// bubble, whose informer checks for due resyncs every checkPeriod (0:
	// never) on the bubble's clock; nil: the resync checks are not offered.
	NewResync func(checkPeriod time.Duration) ResyncFanOut
	// Slow makes a fresh, unstarted fan-out, inside the caller's bubble,
	// that reports its slow-handler warnings, and a release function that
	// undoes any process-wide setup this needed (client-go: capturing
	// klog at verbosity 2); the check calls release after Stop. nil: the
	// slow-warning check skips as not applicable.
	Slow func() (f SlowFanOut, release func())
	// ContainPanics runs body with the subject set up so that a handler
	// panic cannot crash the process (client-go: utilruntime.ReallyCrash
	// false and its panic log silenced), undoes that, and returns what body
	// returned. nil: the subject does not promise to contain handler
	// panics, and the fault check skips as not applicable.
	ContainPanics func(body func() error) error
	// SourceRetains, when not empty, says why the subject's event source
	// keeps every object it is given (a test fixture's history), so that
	// listener/retention cannot tell the fan-out's references from the
	// fixture's; the check then skips as not applicable, with the reason.
	SourceRetains string
}
