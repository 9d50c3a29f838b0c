package workqueue

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

// fifo is a ring deque: it reuses its buffer, so a steady-state queue does
// not allocate, and it zeroes popped slots so it does not retain items.
type fifo[T comparable] struct {
	buf  []T
	head int
	n    int
	low  int // consecutive pops with the buffer under a quarter full
}

func (f *fifo[T]) Touch(T)  {}
func (f *fifo[T]) Len() int { return f.n }

func (f *fifo[T]) Push(item T) {
	if f.n == len(f.buf) {
		f.grow()
	}
	i := f.head + f.n
	if i >= len(f.buf) {
		i -= len(f.buf)
	}
	f.buf[i] = item
	f.n++
}

func (f *fifo[T]) Pop() T {
	var zero T
	item := f.buf[f.head]
	f.buf[f.head] = zero
	f.head++
	if f.head == len(f.buf) {
		f.head = 0
	}
	f.n--
	if f.n == 0 {
		f.head = 0
	}
	// Give memory back after a burst, with hysteresis: halve a buffer only
	// after it has stayed under a quarter full for len(buf) pops in a row,
	// so a queue that swings between full and empty does not shrink and
	// regrow on every cycle.
	if len(f.buf) > 64 && f.n < len(f.buf)/4 {
		if f.low++; f.low >= len(f.buf) {
			f.resize(len(f.buf) / 2)
			f.low = 0
		}
	} else {
		f.low = 0
	}
	return item
}

func (f *fifo[T]) grow() {
	n := 2 * len(f.buf)
	if n < 16 {
		n = 16
	}
	f.resize(n)
}

func (f *fifo[T]) resize(size int) {
	nb := make([]T, size)
	if f.head+f.n <= len(f.buf) {
		copy(nb, f.buf[f.head:f.head+f.n])
	} else {
		k := copy(nb, f.buf[f.head:])
		copy(nb[k:], f.buf[:f.n-k])
	}
	f.buf = nb
	f.head = 0
}
