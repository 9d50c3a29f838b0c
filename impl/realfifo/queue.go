package realfifo

import (
	"slices"

	"github.com/kverify/kverify/impl/delta"
)

// deltaQueue is a FIFO of deltas in a slice: take clears the slot it
// reads and drop advances a head index, so a popped delta is never
// referenced. Popping never allocates. The cleared prefix is given back when
// a push finds the array full (the live deltas move to a new array that
// append's growth policy sizes from the live count) and when the queue
// empties (the array is dropped if it grew past keepCap). So the array
// costs what client-go's reslicing costs while the queue is busy, and its
// memory returns after a burst.
type deltaQueue struct {
	items []delta.Delta
	head  int
}

// keepCap is the largest array an empty queue keeps for reuse.
const keepCap = 64

func (q *deltaQueue) len() int { return len(q.items) - q.head }

func (q *deltaQueue) push(d delta.Delta) {
	if q.head > 0 && len(q.items) == cap(q.items) {
		// Full: grow from the live deltas only.
		live := q.items[q.head:len(q.items):len(q.items)]
		q.items, q.head = append(live, d), 0
		return
	}
	if q.items == nil {
		q.items = make([]delta.Delta, 0, firstCap)
	}
	q.items = append(q.items, d)
}

// firstCap is the capacity of a queue's first array: client-go's
// (the_real_fifo.go:835), so that a burst grows through the same sizes.
const firstCap = 10

// grow makes room for n more pushes without reallocating: a relist of a
// known size then holds exactly what it queued, not a doubling's slack.
func (q *deltaQueue) grow(n int) {
	if q.head > 0 && cap(q.items)-len(q.items) < n {
		q.items, q.head = slices.Clip(q.items[q.head:]), 0
	}
	q.items = slices.Grow(q.items, n)
}

func (q *deltaQueue) at(i int) delta.Delta { return q.items[q.head+i] }

func (q *deltaQueue) all() []delta.Delta { return q.items[q.head:] }

// take returns the i-th delta and clears its slot; drop then removes it.
func (q *deltaQueue) take(i int) delta.Delta {
	d := q.items[q.head+i]
	q.items[q.head+i] = delta.Delta{}
	return d
}

// drop removes the first n deltas (taken already).
func (q *deltaQueue) drop(n int) {
	q.head += n
	if q.head == len(q.items) {
		if cap(q.items) > keepCap {
			q.items = nil
		} else {
			q.items = q.items[:0]
		}
		q.head = 0
	}
}
