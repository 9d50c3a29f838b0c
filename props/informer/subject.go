// Package informer is the conformance suite for a shared informer's
// fan-out: per-handler delivery through a listener with a one-item
// lookahead pump, handler isolation, per-handler sync, handler removal and
// shutdown. It is black-box: a subject is driven through a source of
// events and observed through handler calls, so client-go's informer can
// be checked through its public API.
package informer

import (
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

// Subject is an implementation under test. New makes a fresh, unstarted
// fan-out inside the caller's synctest bubble. Pump is nil when the
// implementation does not expose its pump decision (client-go).
type Subject struct {
	New  func() FanOut
	Pump Pump
	// Linear makes a processor for the per-listener linearizability
	// check. It needs a Distribute that returns only once every listener
	// holds the value (so the add's interval contains its effect); nil
	// skips the check. client-go's informer hands events over
	// asynchronously through its reflector and FIFO, so it cannot take it.
	Linear func() linearizability.FanOut
}
