package workqueue

import (
	"fmt"
	"sort"
	"strings"
)

// TwoLane is the state of knative's two-lane work queue (knative.dev/pkg
// controller/two_lane_queue.go, the Knative profile), built from three
// client-go queues and the goroutines between them:
//
//   - Fast is the fast lane, a client-go queue: Add, Len's first term,
//     ShutDown and ShuttingDown are its.
//   - A mover goroutine (process, two_lane_queue.go:63-75) Gets an item
//     from the fast lane, marks it Done there at once, and hands it to
//     the consumer goroutine, which Adds it to Consumer; when the fast
//     lane's Get reports shutdown the mover stops, and once both lanes'
//     movers have stopped the consumer goroutine shuts Consumer down
//     (runConsumer, :77-123).
//   - Consumer is the queue Get and Done are; Len is Fast's plus
//     Consumer's (:148-152).
//
// The mover's steps are internal: they happen when the goroutines run,
// not inside any call, so a TwoLane has several possible successors at
// any point (Internal), and Closure is every state the goroutines could
// have reached. The slow lane is left out: the queue's own methods never
// feed it (only Impl.EnqueueSlow and global resyncs do, which the suite
// does not offer), so it only ever stops after ShutDown, which the
// consumer's ShutDown step stands for. Like Model, a TwoLane is
// immutable from the outside.
type TwoLane struct {
	Fast, Consumer Model
	mover          moverState
	item           string // the item the mover holds (moverHolding, moverSending)
	// adding is the item the consumer goroutine has received from the
	// mover and not yet added to Consumer ("" when it has none): the
	// channel between them is unbuffered, but once it has handed an
	// item over the mover is free to take the next, so two copies of an
	// item can be on their way at once (the mover's and this one).
	adding string
}

// moverState is where the fast lane's mover goroutine is.
type moverState uint8

const (
	moverIdle    moverState = iota // waiting in the fast lane's Get
	moverHolding                   // got item from the fast lane, not yet Done there
	moverSending                   // Done in the fast lane, item not yet in Consumer
	moverStopped                   // the fast lane's Get reported shutdown
)

var moverNames = [...]string{"idle", "holding", "sending", "stopped"}

// NewTwoLane returns an empty, running two-lane queue: two client-go
// queues and an idle mover.
func NewTwoLane() TwoLane { return TwoLane{Fast: New(ClientGo), Consumer: New(ClientGo)} }

// Internal returns the states one step of the queue's own goroutines leads
// to from t: the mover taking the fast lane's head (or its shutdown),
// marking it Done there, handing it to the consumer goroutine (when that
// one has nothing in hand); the consumer goroutine adding what it holds to
// Consumer; or, once the mover has stopped and the consumer goroutine is
// idle, the consumer goroutine shutting Consumer down. The two goroutines
// step independently, so there can be two successors.
func (t TwoLane) Internal() []TwoLane {
	var out []TwoLane
	switch t.mover {
	case moverIdle:
		if t.Fast.Enabled(Op{Kind: Get}) {
			n := t
			var o Out
			n.Fast, o = t.Fast.Step(Op{Kind: Get})
			if o.Shutdown {
				n.mover = moverStopped
			} else {
				n.mover, n.item = moverHolding, o.Key
			}
			out = append(out, n)
		}
	case moverHolding:
		n := t
		n.Fast, _ = t.Fast.Step(Op{Kind: Done, Key: t.item})
		n.mover = moverSending
		out = append(out, n)
	case moverSending:
		if t.adding == "" {
			n := t
			n.adding = t.item
			n.mover, n.item = moverIdle, ""
			out = append(out, n)
		}
	}
	if t.adding != "" {
		n := t
		n.Consumer, _ = t.Consumer.Step(Op{Kind: Add, Key: t.adding})
		n.adding = ""
		out = append(out, n)
	} else if t.mover == moverStopped && !t.Consumer.IsShuttingDown() {
		n := t
		n.Consumer, _ = t.Consumer.Step(Op{Kind: ShutDown})
		out = append(out, n)
	}
	return out
}

// Closure returns t and every state the queue's goroutines can reach from
// it without a call, each once, sorted by Key. It is finite: every
// internal step moves an item one stage on or stops a goroutine.
func (t TwoLane) Closure() []TwoLane {
	seen := map[string]TwoLane{t.Key(): t}
	todo := []TwoLane{t}
	for len(todo) > 0 {
		s := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		for _, n := range s.Internal() {
			if k := n.Key(); !has(seen, k) {
				seen[k] = n
				todo = append(todo, n)
			}
		}
	}
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]TwoLane, len(keys))
	for i, k := range keys {
		out[i] = seen[k]
	}
	return out
}

func has(m map[string]TwoLane, k string) bool { _, ok := m[k]; return ok }

// Enabled reports whether op can return in state t (before any further
// internal step): Get when Consumer would hand out an item or report
// shutdown. ShutDownWithDrain is not modelled (it is the fast lane's
// alone, and never returns shutdown to Get: see the drain finding), so it
// is never enabled.
func (t TwoLane) Enabled(op Op) bool {
	switch op.Kind {
	case Get:
		return t.Consumer.Enabled(op)
	case ShutDownWithDrain:
		return false
	}
	return true
}

// Step applies a call to t and returns the new state and what the call
// returns. It must only be called when t.Enabled(op).
func (t TwoLane) Step(op Op) (TwoLane, Out) {
	n := t
	var out Out
	switch op.Kind {
	case Add, ShutDown:
		n.Fast, out = t.Fast.Step(op)
	case ShuttingDown:
		_, out = t.Fast.Step(op)
	case Get, Done:
		n.Consumer, out = t.Consumer.Step(op)
	case Len:
		out.N = t.Len()
	}
	return n, out
}

// Len is what the queue's Len returns: the fast lane's length plus the
// consumer queue's (an item the mover holds is in neither).
func (t TwoLane) Len() int { return t.Fast.Len() + t.Consumer.Len() }

// Key is a canonical encoding of the state: equal states have equal keys.
func (t TwoLane) Key() string {
	var b strings.Builder
	fmt.Fprintf(&b, "fast{%s} mover=%s", t.Fast.Key(), moverNames[t.mover])
	if t.item != "" {
		b.WriteString(":" + t.item)
	}
	if t.adding != "" {
		b.WriteString(" adding=" + t.adding)
	}
	fmt.Fprintf(&b, " consumer{%s}", t.Consumer.Key())
	return b.String()
}

func (t TwoLane) String() string { return "{" + t.Key() + "}" }
