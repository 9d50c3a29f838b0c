package informer

// PumpState is what a listener's pump knows: whether a notification is in
// hand (offered to the handler goroutine) and how many wait in the buffer
// behind it. The listener holds the notifications themselves, under its lock; the
// decisions are made here, by a pure function, so a model can check them
// step by step.
type PumpState struct {
	InHand   bool
	Buffered int
	Closed   bool
}

// PumpEvent is what happened to the pump: an Add, the handler goroutine
// taking the notification in hand, or Close.
type PumpEvent uint8

const (
	// EventAdded: a notification arrived from the distributor.
	EventAdded PumpEvent = iota
	// EventDelivered: the handler goroutine took the notification in hand.
	EventDelivered
	// EventClosed: the distributor closed the listener.
	EventClosed
)

// PumpAction tells the listener what to do with the notifications.
type PumpAction uint8

const (
	// Hold: keep the added notification in hand; it skips the buffer (the
	// one-item lookahead: a consumer that keeps up never touches it).
	Hold PumpAction = iota
	// Stash: append the added notification to the buffer.
	Stash
	// Refill: take the oldest buffered notification in hand.
	Refill
	// Idle: nothing left; stop offering.
	Idle
	// Stop: exit, dropping what is undelivered.
	Stop
	// Invalid: the event cannot happen in this state (a bug in the caller).
	Invalid
)

// Step is the pump's decision for event e in state s.
func (s PumpState) Step(e PumpEvent) (PumpState, PumpAction) {
	if s.Closed {
		return s, Invalid
	}
	switch e {
	case EventAdded:
		if !s.InHand {
			s.InHand = true
			return s, Hold
		}
		s.Buffered++
		return s, Stash
	case EventDelivered:
		if !s.InHand {
			return s, Invalid
		}
		if s.Buffered > 0 {
			s.Buffered--
			return s, Refill
		}
		s.InHand = false
		return s, Idle
	case EventClosed:
		return PumpState{Closed: true}, Stop
	}
	return s, Invalid
}

// Pending is the number of notifications added and not yet delivered.
func (s PumpState) Pending() int {
	if s.InHand {
		return s.Buffered + 1
	}
	return 0
}
