package fuzz

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/kverify/kverify/impl/informer"
	sinf "github.com/kverify/kverify/spec/informer"
)

// pumpStep is one decoded pump event; Value is the added notification.
type pumpStep struct {
	Event sinf.Event
	Value string
}

func (s pumpStep) String() string {
	if s.Event == sinf.Added {
		return "Added(" + s.Value + ")"
	}
	return s.Event.String()
}

// DecodePumpSteps turns bytes into pump events, one per byte: byte&3 of 0
// or 1 is Added with the value byte>>2, 2 is Delivered, 3 is Delivered too
// unless the top three bits are set (1 byte in 32), then Closed: a close
// ends the interesting part of a run, so it is kept rare.
func DecodePumpSteps(data []byte) []pumpStep {
	if len(data) > maxSteps {
		data = data[:maxSteps]
	}
	steps := make([]pumpStep, 0, len(data))
	for i, b := range data {
		switch {
		case b&3 < 2:
			// The step index keeps values unique, so a duplicate shows.
			steps = append(steps, pumpStep{Event: sinf.Added, Value: fmt.Sprintf("v%d#%d", b>>2, i)})
		case b&3 == 3 && b&0xE0 == 0xE0:
			steps = append(steps, pumpStep{Event: sinf.Closed})
		default:
			steps = append(steps, pumpStep{Event: sinf.Delivered})
		}
	}
	return steps
}

func toPumpEvent(e sinf.Event) informer.PumpEvent {
	switch e {
	case sinf.Added:
		return informer.EventAdded
	case sinf.Delivered:
		return informer.EventDelivered
	}
	return informer.EventClosed
}

// FuzzPumpSteps drives impl/informer's pump decision (PumpState.Step) and
// the spec's Pump side by side. Every enabled event must get the action
// the model implies (Hold iff nothing is in hand, Stash iff something is,
// Refill iff something is buffered on delivery, Idle otherwise, Stop on
// close) and leave the same in-hand flag, buffered count and Pending; a
// disabled event (Delivered with nothing in hand, anything after Closed)
// must be Invalid and change nothing. The notifications themselves are
// moved the way the pump goroutine moves them, by the actions alone, so
// the values delivered must be the model's too.
func FuzzPumpSteps(f *testing.F) {
	f.Add([]byte{0x00, 0x02, 0x00, 0x02})                   // keep up: hold, idle, hold, idle
	f.Add([]byte{0x00, 0x04, 0x08, 0x02, 0x02, 0x02, 0x02}) // backlog: hold, stash, stash, refill, refill, idle, (invalid)
	f.Add([]byte{0x02, 0x00, 0x04, 0xFF, 0x00, 0x02})       // delivery when idle, close with a backlog, events after it
	f.Add([]byte{0x00, 0x04, 0x02, 0x08, 0x02, 0x0C, 0x02, 0x02})
	f.Add([]byte{0xE3}) // close an idle pump
	f.Fuzz(func(t *testing.T, data []byte) {
		steps := DecodePumpSteps(data)
		var (
			st     informer.PumpState
			m      sinf.Pump
			inHand string   // what the pump goroutine would hold
			buf    []string // and buffer
			trace  []string
		)
		fail := func(format string, args ...any) {
			t.Helper()
			t.Fatalf("after %s: %s", strings.Join(trace, " "), fmt.Sprintf(format, args...))
		}
		for _, s := range steps {
			trace = append(trace, s.String())
			next, act := st.Step(toPumpEvent(s.Event))
			if !m.Enabled(s.Event) {
				if act != informer.Invalid || next != st {
					fail("disabled event: action %v, state %+v -> %+v; want Invalid, unchanged", act, st, next)
				}
				continue
			}
			if act == informer.Stash && !st.InHand {
				fail("Stash with nothing in hand (state %+v)", st)
			}
			_, hand := m.InHand()
			var want informer.PumpAction
			switch s.Event {
			case sinf.Added:
				want = informer.Stash
				if !hand {
					want = informer.Hold
				}
				m = m.Add(s.Value)
			case sinf.Delivered:
				want = informer.Idle
				if len(m.Buffered()) > 0 {
					want = informer.Refill
				}
				var v string
				m, v = m.Deliver()
				if inHand != v {
					fail("delivered %q, model %q", inHand, v)
				}
			case sinf.Closed:
				want = informer.Stop
				m = m.Close()
			}
			if act != want {
				fail("action %v, want %v (state before %+v)", act, want, st)
			}
			// Move the notifications as listener.pump does.
			switch act {
			case informer.Hold:
				inHand = s.Value
			case informer.Stash:
				buf = append(buf, s.Value)
			case informer.Refill:
				inHand, buf = buf[0], buf[1:]
			case informer.Idle, informer.Stop:
				inHand, buf = "", nil
			}
			st = next
			mv, mh := m.InHand()
			if st.InHand != mh || st.Buffered != len(m.Buffered()) || st.Closed != m.IsClosed() {
				fail("state %+v, model in hand %v, buffered %d, closed %v", st, mh, len(m.Buffered()), m.IsClosed())
			}
			if st.Pending() != m.Pending() {
				fail("Pending %d, model %d", st.Pending(), m.Pending())
			}
			if mh && inHand != mv || !slices.Equal(buf, m.Buffered()) {
				fail("holds %q + %v, model %q + %v", inHand, buf, mv, m.Buffered())
			}
		}
	})
}

// listenerStep is one decoded listener step: Add a notification, Run (the
// handler's call in progress returns), or Close.
type listenerStep struct {
	Op string // "Add", "Run" or "Close"
	N  informer.Notification
}

func (s listenerStep) String() string {
	if s.Op == "Add" {
		return "Add(" + describeNotification(s.N) + ")"
	}
	return s.Op
}

// describeNotification is a notification as the handler sees it; the
// model's values are these strings.
func describeNotification(n informer.Notification) string {
	switch n.Kind {
	case informer.Add:
		return fmt.Sprintf("OnAdd(%v,%t)", n.New, n.InInitialList)
	case informer.Update:
		return fmt.Sprintf("OnUpdate(%v,%v)", n.Old, n.New)
	}
	return fmt.Sprintf("OnDelete(%v)", n.Old)
}

// DecodeListenerSteps turns bytes into listener steps, one per byte:
// byte&3 of 0 or 1 is an Add whose kind is (byte>>2)&3 (Add, Update,
// Delete, initial-list Add) and whose object is byte>>4; 2 is Run; 3 is
// Run too unless the top three bits are set, then Close (kept rare).
func DecodeListenerSteps(data []byte) []listenerStep {
	if len(data) > maxSteps {
		data = data[:maxSteps]
	}
	steps := make([]listenerStep, 0, len(data))
	for i, b := range data {
		switch {
		case b&3 < 2:
			obj := fmt.Sprintf("o%d#%d", b>>4, i)
			var n informer.Notification
			switch (b >> 2) & 3 {
			case 0:
				n = informer.Notification{Kind: informer.Add, New: obj}
			case 1:
				n = informer.Notification{Kind: informer.Update, Old: obj + "'", New: obj}
			case 2:
				n = informer.Notification{Kind: informer.Delete, Old: obj}
			case 3:
				n = informer.Notification{Kind: informer.Add, New: obj, InInitialList: true}
			}
			steps = append(steps, listenerStep{Op: "Add", N: n})
		case b&3 == 3 && b&0xE0 == 0xE0:
			steps = append(steps, listenerStep{Op: "Close"})
		default:
			steps = append(steps, listenerStep{Op: "Run"})
		}
	}
	return steps
}

// gateHandler records each call as it starts and then blocks until the
// test lets it return.
type gateHandler struct {
	release chan struct{}
	mu      sync.Mutex
	calls   []string
}

func (h *gateHandler) record(s string) {
	h.mu.Lock()
	h.calls = append(h.calls, s)
	h.mu.Unlock()
	<-h.release
}

func (h *gateHandler) started() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.calls)
}

func (h *gateHandler) OnAdd(obj any, initial bool) {
	h.record(describeNotification(informer.Notification{Kind: informer.Add, New: obj, InInitialList: initial}))
}

func (h *gateHandler) OnUpdate(oldObj, newObj any) {
	h.record(describeNotification(informer.Notification{Kind: informer.Update, Old: oldObj, New: newObj}))
}

func (h *gateHandler) OnDelete(obj any) {
	h.record(describeNotification(informer.Notification{Kind: informer.Delete, Old: obj}))
}

// FuzzListenerDelivery drives a real impl/informer.Listener inside a
// synctest bubble. Its handler blocks in every call until a Run step lets
// it return; synctest.Wait is the step boundary, after which the pump and
// the handler goroutine are at rest. The spec's Pump and Delivery follow:
// an Add is the pump's Added event; whenever the handler is free and the
// model pump has a notification in hand, the handler goroutine takes it
// (Delivered). After every step the calls started must be exactly the
// model's deliveries, in add order, each once, and Stats must report the
// model's Pending and its high-water mark. At the end the handler is let
// run until the backlog is gone (unless closed: then nothing more may be
// delivered), and the listener is closed and its goroutines joined.
func FuzzListenerDelivery(f *testing.F) {
	f.Add([]byte{0x00, 0x02, 0x04, 0x02})                         // keep up: add, run, update, run
	f.Add([]byte{0x00, 0x04, 0x08, 0x0C, 0x02, 0x02, 0x02, 0x02}) // backlog of three behind a blocked call
	f.Add([]byte{0x00, 0x01, 0x05, 0xFF, 0x02})                   // close with a backlog: dropped
	f.Add([]byte{0x02, 0x03, 0x10, 0x20, 0x02, 0x30, 0x02, 0x02, 0x40})
	f.Add([]byte{0xFF})
	f.Fuzz(func(t *testing.T, data []byte) {
		steps := DecodeListenerSteps(data)
		synctest.Test(t, func(t *testing.T) {
			h := &gateHandler{release: make(chan struct{})}
			l := informer.NewListener(h, informer.ListenerOptions{})
			var wg sync.WaitGroup
			l.Start(&wg)
			t.Cleanup(func() { // also after a failure: leave no goroutine blocked
				l.Close()
				close(h.release)
				wg.Wait()
			})

			var (
				pump      sinf.Pump
				del       sinf.Delivery
				delivered []string // the model's deliveries, in order
				busy      bool     // the handler is in a call
				closed    bool
				high      int
				trace     []string
			)
			fail := func(format string, args ...any) {
				t.Helper()
				t.Fatalf("after %s: %s", strings.Join(trace, " "), fmt.Sprintf(format, args...))
			}
			// settle waits for the bubble to rest, then lets the model's
			// handler goroutine take what the pump offers, and compares.
			settle := func() {
				t.Helper()
				synctest.Wait()
				if !busy && pump.Enabled(sinf.Delivered) {
					var v string
					pump, v = pump.Deliver()
					want, ok := del.Expect()
					if !ok || v != want {
						fail("model pump delivers %q, delivery model expects %q (%v)", v, want, ok)
					}
					del = del.Deliver()
					delivered = append(delivered, v)
					busy = true
				}
				if got := h.started(); !slices.Equal(got, delivered) {
					fail("handler calls %v, want %v", got, delivered)
				}
				s := l.Stats()
				if s.Pending != int64(pump.Pending()) {
					fail("Stats().Pending = %d, model %d", s.Pending, pump.Pending())
				}
				if s.HighWater != int64(high) {
					fail("Stats().HighWater = %d, model %d", s.HighWater, high)
				}
			}
			run := func() {
				if busy {
					h.release <- struct{}{}
					busy = false
				}
			}
			settle()
			for _, s := range steps {
				trace = append(trace, s.String())
				switch s.Op {
				case "Add":
					if closed {
						continue // Add must not be called after Close
					}
					l.Add(s.N)
					v := describeNotification(s.N)
					pump, del = pump.Add(v), del.Add(v)
					high = max(high, pump.Pending()) // Pending grows only here
				case "Run":
					run()
				case "Close":
					if closed {
						continue
					}
					l.Close()
					pump, closed = pump.Close(), true
				}
				settle()
			}
			// Drain: let the handler run out the backlog.
			for busy {
				trace = append(trace, "Run")
				run()
				settle()
			}
			if !closed {
				if n := del.Outstanding(); n != 0 {
					fail("%d notifications never delivered", n)
				}
				l.Close()
			}
			<-l.Done()
			wg.Wait()
			if got := h.started(); !slices.Equal(got, delivered) {
				fail("after close: handler calls %v, want %v", got, delivered)
			}
		})
	})
}
