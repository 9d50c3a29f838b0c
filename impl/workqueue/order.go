package workqueue

import "github.com/kverify/kverify/impl/ring"

// Order is the pluggable storage that decides the order in which queued
// items are handed out. Its methods are always called with the queue's lock
// held, so an implementation needs no locking of its own.
type Order[T comparable] interface {
	// Touch is called when an item that is already queued is added again.
	Touch(item T)
	// Push appends a new item.
	Push(item T)
	// Len is the number of items held.
	Len() int
	// Pop removes and returns the next item. It is only called when Len > 0.
	// It must drop its reference to the item so that the item can be
	// collected once the caller is done with it.
	Pop() T
}

// FIFO returns the default Order: first in, first out.
func FIFO[T comparable]() Order[T] { return &fifo[T]{} }

// fifo is a growing ring (impl/ring, which zeroes consumed slots, so it
// does not retain items) with a policy for giving memory back after a
// burst: halve the ring only after it has stayed under a quarter full for
// Cap pops in a row, so a queue that swings between full and empty does not
// shrink and regrow on every cycle.
type fifo[T comparable] struct {
	ring ring.Growing[T]
	low  int // consecutive pops with the ring under a quarter full
}

func (f *fifo[T]) Touch(T)     {}
func (f *fifo[T]) Len() int    { return f.ring.Len() }
func (f *fifo[T]) Push(item T) { f.ring.WriteOne(item) }
func (f *fifo[T]) Pop() (item T) {
	item, _ = f.ring.ReadOne()
	if c := f.ring.Cap(); c > 64 && f.ring.Len() < c/4 {
		if f.low++; f.low >= c {
			f.ring.Shrink(c / 2)
			f.low = 0
		}
	} else {
		f.low = 0
	}
	return item
}
