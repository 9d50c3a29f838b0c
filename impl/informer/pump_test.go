package informer

import (
	"fmt"
	"testing"

	sinf "github.com/kverify/kverify/spec/informer"
	"pgregory.net/rapid"
)

func TestPumpStepTable(t *testing.T) {
	tests := []struct {
		from PumpState
		ev   PumpEvent
		to   PumpState
		act  PumpAction
	}{
		{PumpState{}, EventAdded, PumpState{InHand: true}, Hold},
		{PumpState{InHand: true}, EventAdded, PumpState{InHand: true, Buffered: 1}, Stash},
		{PumpState{InHand: true, Buffered: 2}, EventAdded, PumpState{InHand: true, Buffered: 3}, Stash},
		{PumpState{InHand: true, Buffered: 2}, EventDelivered, PumpState{InHand: true, Buffered: 1}, Refill},
		{PumpState{InHand: true}, EventDelivered, PumpState{}, Idle},
		{PumpState{}, EventDelivered, PumpState{}, Invalid},
		{PumpState{InHand: true, Buffered: 5}, EventClosed, PumpState{Closed: true}, Stop},
		{PumpState{}, EventClosed, PumpState{Closed: true}, Stop},
		{PumpState{Closed: true}, EventAdded, PumpState{Closed: true}, Invalid},
		{PumpState{Closed: true}, EventDelivered, PumpState{Closed: true}, Invalid},
		{PumpState{Closed: true}, EventClosed, PumpState{Closed: true}, Invalid},
		{PumpState{InHand: true}, PumpEvent(99), PumpState{InHand: true}, Invalid},
	}
	for _, tc := range tests {
		to, act := tc.from.Step(tc.ev)
		if to != tc.to || act != tc.act {
			t.Errorf("%+v.Step(%d) = %+v, %d; want %+v, %d", tc.from, tc.ev, to, act, tc.to, tc.act)
		}
	}
}

func TestPumpPending(t *testing.T) {
	for _, tc := range []struct {
		s    PumpState
		want int
	}{
		{PumpState{}, 0},
		{PumpState{InHand: true}, 1},
		{PumpState{InHand: true, Buffered: 4}, 5},
		{PumpState{Closed: true}, 0},
	} {
		if got := tc.s.Pending(); got != tc.want {
			t.Errorf("%+v.Pending() = %d, want %d", tc.s, got, tc.want)
		}
	}
}

// TestPumpMatchesModel drives the decision function and the spec's pump
// with the same events: same action, same state, same Pending; the buffer
// is never used while the hand is empty.
func TestPumpMatchesModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var m sinf.Pump
		var s PumpState
		n := 0
		t.Repeat(map[string]func(*rapid.T){
			"event": func(t *rapid.T) {
				ev := rapid.SampledFrom([]sinf.Event{sinf.Added, sinf.Added, sinf.Delivered, sinf.Delivered, sinf.Closed}).Draw(t, "ev")
				pe := map[sinf.Event]PumpEvent{sinf.Added: EventAdded, sinf.Delivered: EventDelivered, sinf.Closed: EventClosed}[ev]
				next, act := s.Step(pe)
				want := Invalid
				nm := m
				if m.Enabled(ev) {
					switch ev {
					case sinf.Added:
						want = Hold
						if _, has := m.InHand(); has {
							want = Stash
						}
						n++
						nm = m.Add(fmt.Sprint(n))
					case sinf.Delivered:
						want = Idle
						if len(m.Buffered()) > 0 {
							want = Refill
						}
						nm, _ = m.Deliver()
					case sinf.Closed:
						want = Stop
						nm = m.Close()
					}
				}
				if act != want {
					t.Fatalf("%v from %+v: action %d, model %d", ev, s, act, want)
				}
				if act == Stash && !s.InHand {
					t.Fatalf("stashed with nothing in hand: %+v", s)
				}
				_, hand := nm.InHand()
				if next.InHand != hand || next.Buffered != len(nm.Buffered()) || next.Closed != nm.IsClosed() || next.Pending() != nm.Pending() {
					t.Fatalf("after %v: %+v (pending %d), model hand=%v buffered=%d closed=%v pending=%d",
						ev, next, next.Pending(), hand, len(nm.Buffered()), nm.IsClosed(), nm.Pending())
				}
				s, m = next, nm
			},
		})
	})
}
