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
	// in the fast lane, held by the mover, being sent, in Consumer
	if len(c) != 4 {
		t.Fatalf("closure after Add(a): %d states, want 4:\n%v", len(c), keys(c))
	}
	var lens []int
	for _, s := range c {
		lens = append(lens, s.Len())
	}
	slices.Sort(lens)
	// Len counts the item in either queue, and not while the mover has it.
	if want := []int{0, 0, 1, 1}; !slices.Equal(lens, want) {
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
