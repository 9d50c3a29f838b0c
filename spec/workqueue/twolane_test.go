package workqueue

import (
	"slices"
	"testing"
)

// keys returns the Keys of ts.
func keys(ts []TwoLane) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Key())
	}
	return out
}

// stepAll applies op to every state of ts where it is enabled.
func stepAll(ts []TwoLane, op Op) (next []TwoLane, outs []Out) {
	for _, t := range ts {
		if t.Enabled(op) {
			n, o := t.Step(op)
			next, outs = append(next, n), append(outs, o)
		}
	}
	return next, outs
}

func TestTwoLaneAddIsHandedOver(t *testing.T) {
	a, _ := NewTwoLane().Step(Op{Kind: Add, Key: "a"})
	c := a.Closure()
	// in the fast lane, held by the mover, being sent, in the consumer
	// goroutine's hand, in Consumer
	if len(c) != 5 {
		t.Fatalf("closure after Add(a): %d states, want 5:\n%v", len(c), keys(c))
	}
	var lens []int
	for _, s := range c {
		lens = append(lens, s.Len())
	}
	slices.Sort(lens)
	// Len counts the item in either queue, and not while a goroutine has it.
	if want := []int{0, 0, 0, 1, 1}; !slices.Equal(lens, want) {
		t.Errorf("Len over the closure = %v, want %v", lens, want)
	}
	next, outs := stepAll(c, Op{Kind: Get})
	if len(next) != 1 || outs[0].Key != "a" {
		t.Errorf("Get is enabled only once a is in Consumer, and returns it: %v %v", keys(next), outs)
	}
}

// An Add of an item the mover holds (taken from the fast lane, not yet
// Done there) queues it in the fast lane again: it is delivered twice,
// where a client-go queue holding it queued would deliver it once.
func TestTwoLaneReAddWhileMoving(t *testing.T) {
	s, _ := NewTwoLane().Step(Op{Kind: Add, Key: "a"})
	s = s.Internal()[0] // mover holds a
	s, _ = s.Step(Op{Kind: Add, Key: "a"})
	gets := 0
	for _, c := range s.Closure() {
		if c.Consumer.Dirty("a") && c.Fast.Dirty("a") {
			gets++
		}
	}
	if gets == 0 {
		t.Fatalf("no state has a queued in both the consumer queue and the fast lane: %v", keys(s.Closure()))
	}
}

func TestTwoLaneShutDownDrainsTheFastLane(t *testing.T) {
	s, _ := NewTwoLane().Step(Op{Kind: Add, Key: "a"})
	s, _ = s.Step(Op{Kind: ShutDown})
	if s.Enabled(Op{Kind: Get}) {
		t.Fatal("Get enabled before the mover moved anything")
	}
	// Every state whose Consumer is shut down has a in it: the mover
	// stops only once the fast lane is empty.
	shut := 0
	for _, c := range s.Closure() {
		if c.Consumer.IsShuttingDown() {
			shut++
			if !c.Consumer.Dirty("a") {
				t.Errorf("consumer shut down without a: %v", c)
			}
		}
	}
	if shut == 0 {
		t.Fatalf("the consumer never shuts down: %v", keys(s.Closure()))
	}
	// Adds after ShutDown are the fast lane's: dropped.
	n, _ := s.Step(Op{Kind: Add, Key: "b"})
	if n.Key() != s.Key() {
		t.Errorf("Add after ShutDown changed the state: %v -> %v", s, n)
	}
}

// Once the mover has handed an item to the consumer goroutine it takes
// the next: an item re-added meanwhile is on its way twice, and with a
// third copy in the fast lane it can be delivered three times for three
// adds that a client-go queue would have collapsed.
func TestTwoLaneTwoCopiesInFlight(t *testing.T) {
	s, _ := NewTwoLane().Step(Op{Kind: Add, Key: "a"})
	for range 3 { // holding, sending, the consumer goroutine's hand
		s = s.Internal()[0]
	}
	if s.adding != "a" || s.mover != moverIdle {
		t.Fatalf("not in the consumer goroutine's hand: %v", s)
	}
	s, _ = s.Step(Op{Kind: Add, Key: "a"})
	s = s.Internal()[0] // the mover takes the second copy
	s, _ = s.Step(Op{Kind: Add, Key: "a"})
	if s.mover != moverHolding || s.adding != "a" || !s.Fast.Dirty("a") {
		t.Fatalf("want three copies on their way (consumer goroutine, mover, fast lane): %v", s)
	}
	if n := len(s.Internal()); n != 2 {
		t.Fatalf("both goroutines can step: %d successors", n)
	}
}
