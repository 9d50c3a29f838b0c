// Package informer is the reference model of a shared informer's fan-out:
// the one-item-lookahead pump of a listener and per-listener delivery.
//
// The pump model holds the notification "in hand" (offered to the handler
// goroutine) and the FIFO of notifications behind it. It is pure: events
// are inputs, every transition returns a new value.
package informer

import (
	"fmt"
	"slices"
)

// Event is what the pump observes.
type Event uint8

const (
	// Added: a notification arrived from the distributor.
	Added Event = iota
	// Delivered: the handler goroutine took the notification in hand.
	Delivered
	// Closed: the distributor closed the listener.
	Closed
)

func (e Event) String() string {
	switch e {
	case Added:
		return "Added"
	case Delivered:
		return "Delivered"
	case Closed:
		return "Closed"
	}
	return fmt.Sprintf("Event(%d)", e)
}

// Pump is the model of one listener's pump. The zero value is an idle,
// open pump.
type Pump struct {
	inHand   string
	hasHand  bool
	buffered []string // behind the one in hand, oldest first
	closed   bool
	// everBuffered counts items that went through the buffer: the
	// lookahead law says it stays 0 while the consumer keeps up.
	everBuffered int
}

// InHand returns the notification offered to the handler, if any.
func (p Pump) InHand() (string, bool) { return p.inHand, p.hasHand }

// Buffered returns the notifications waiting behind the one in hand.
func (p Pump) Buffered() []string { return slices.Clone(p.buffered) }

// Pending is every notification added and not yet delivered.
func (p Pump) Pending() int {
	if p.hasHand {
		return len(p.buffered) + 1
	}
	return 0
}

// EverBuffered counts notifications that went through the buffer.
func (p Pump) EverBuffered() int { return p.everBuffered }

// IsClosed reports whether the pump stopped.
func (p Pump) IsClosed() bool { return p.closed }

// Enabled reports whether e can happen now: nothing after Closed, and
// Delivered only with a notification in hand.
func (p Pump) Enabled(e Event) bool {
	if p.closed {
		return false
	}
	return e != Delivered || p.hasHand
}

// Add is the Added event carrying notification n.
func (p Pump) Add(n string) Pump {
	q := p.clone()
	if !q.hasHand {
		q.inHand, q.hasHand = n, true // the lookahead: skip the buffer
		return q
	}
	q.buffered = append(q.buffered, n)
	q.everBuffered++
	return q
}

// Deliver is the Delivered event: it returns the delivered notification.
// Only when Enabled(Delivered).
func (p Pump) Deliver() (Pump, string) {
	q := p.clone()
	n := q.inHand
	if len(q.buffered) > 0 {
		q.inHand, q.buffered = q.buffered[0], q.buffered[1:]
	} else {
		q.inHand, q.hasHand = "", false
	}
	return q, n
}

// Close is the Closed event: undelivered notifications are dropped, as in
// client-go (shared_informer.go:1444-1476).
func (p Pump) Close() Pump {
	q := p.clone()
	q.closed = true
	q.inHand, q.hasHand, q.buffered = "", false, nil
	return q
}

func (p Pump) clone() Pump {
	p.buffered = slices.Clone(p.buffered)
	return p
}

// Delivery is the model of what one listener's handler has received: the
// notifications in add order, each exactly once.
type Delivery struct {
	added     []string
	delivered int
}

// Add records a notification handed to the listener.
func (d Delivery) Add(n string) Delivery {
	d.added = append(slices.Clone(d.added), n)
	return d
}

// Expect returns the notification the handler must receive next.
func (d Delivery) Expect() (string, bool) {
	if d.delivered >= len(d.added) {
		return "", false
	}
	return d.added[d.delivered], true
}

// Deliver records that the handler received the next notification.
func (d Delivery) Deliver() Delivery {
	d.delivered++
	return d
}

// Outstanding is how many added notifications are not yet delivered.
func (d Delivery) Outstanding() int { return len(d.added) - d.delivered }
