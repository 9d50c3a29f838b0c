package workqueue

import "time"

// waiting is the set of items a Delaying queue holds until their ready
// time: a binary min-heap of values ordered by (ready time, seq), a slab of
// slots that hold the items, and an index from item to slot.
//
// Nothing here allocates per item: heap entries and slots are values in
// slices that grow by amortised doubling, freed slots are reused through a
// free list, and the index maps an item to a slot number. A sift moves
// 24-byte entries and rewrites the moved items' heap positions in the slab
// (an array write), so the index is written only when an item arrives or
// leaves. After a burst the slices
// and the index are rebuilt at a quarter full, so the memory of a drained
// burst is given back (a Go map never shrinks on its own).
//
// Not safe for concurrent use: Delaying calls it under its lock.
type waiting[T comparable] struct {
	heap  []waitEntry
	slots []waitSlot[T]
	free  []int // slot numbers free for reuse
	index map[T]int
	seq   uint64 // orders equal ready times: the order they were set in
}

// waitEntry is a heap entry: the ordering key and the slot of its item.
type waitEntry struct {
	at   time.Duration // ready time, as an offset from Delaying.base
	seq  uint64
	slot int
}

// waitSlot holds a waiting item and the position of its heap entry.
type waitSlot[T comparable] struct {
	item T
	pos  int
}

// shrinkFloor is the capacity under which the slices are never rebuilt.
const shrinkFloor = 64

func (w *waiting[T]) len() int { return len(w.heap) }

// peek returns the heap head's ready time.
func (w *waiting[T]) peek() (at time.Duration, ok bool) {
	if len(w.heap) == 0 {
		return 0, false
	}
	return w.heap[0].at, true
}

// insert adds item with ready time at, or lowers the ready time of its
// entry: of two ready times the earlier wins, and an equal or later one is
// discarded. It reports whether item's entry is now the heap's head.
func (w *waiting[T]) insert(item T, at time.Duration) (head bool) {
	if w.index == nil {
		w.index = map[T]int{}
	}
	s, ok := w.index[item]
	if ok {
		i := w.slots[s].pos
		if at >= w.heap[i].at {
			return false // the earlier ready time wins
		}
		w.seq++
		w.heap[i].at, w.heap[i].seq = at, w.seq
		return w.up(i) == 0
	}
	if n := len(w.free); n > 0 {
		s = w.free[n-1]
		w.free = w.free[:n-1]
	} else {
		s = len(w.slots)
		w.slots = append(w.slots, waitSlot[T]{})
	}
	w.seq++
	i := len(w.heap)
	w.heap = append(w.heap, waitEntry{at: at, seq: w.seq, slot: s})
	w.slots[s] = waitSlot[T]{item: item, pos: i}
	w.index[item] = s
	return w.up(i) == 0
}

// pop removes the heap's head and returns its item. The heap must not be
// empty.
func (w *waiting[T]) pop() T {
	h := w.heap
	n := len(h) - 1
	s := h[0].slot
	item := w.slots[s].item
	w.swap(0, n)
	w.heap = h[:n]
	if n > 0 {
		w.down(0)
	}
	w.slots[s] = waitSlot[T]{} // let the item be collected
	w.free = append(w.free, s)
	delete(w.index, item)
	if c := cap(w.slots); c > shrinkFloor && n < c/4 {
		w.compact()
	}
	return item
}

// compact rebuilds the slab, the heap and the index at twice the number of
// items waiting, giving back what a drained burst left behind. The heap
// order is kept; slot i becomes the slot of heap entry i.
func (w *waiting[T]) compact() {
	n := len(w.heap)
	heap := make([]waitEntry, n, 2*n)
	slots := make([]waitSlot[T], n, 2*n)
	for i, e := range w.heap {
		heap[i] = waitEntry{at: e.at, seq: e.seq, slot: i}
		slots[i] = waitSlot[T]{item: w.slots[e.slot].item, pos: i}
	}
	index := make(map[T]int, n)
	for i := range slots {
		index[slots[i].item] = i
	}
	w.heap, w.slots, w.index, w.free = heap, slots, index, nil
}

// reset drops every waiting item and the memory that held them.
func (w *waiting[T]) reset() {
	w.heap, w.slots, w.free, w.index = nil, nil, nil, nil
}

func (w *waiting[T]) less(i, j int) bool {
	a, b := &w.heap[i], &w.heap[j]
	return a.at < b.at || a.at == b.at && a.seq < b.seq
}

func (w *waiting[T]) swap(i, j int) {
	h := w.heap
	h[i], h[j] = h[j], h[i]
	w.slots[h[i].slot].pos = i
	w.slots[h[j].slot].pos = j
}

// up sifts entry j towards the root and returns where it stops.
func (w *waiting[T]) up(j int) int {
	for j > 0 {
		i := (j - 1) / 2
		if !w.less(j, i) {
			break
		}
		w.swap(i, j)
		j = i
	}
	return j
}

func (w *waiting[T]) down(i int) {
	n := len(w.heap)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		j := l
		if r := l + 1; r < n && w.less(r, l) {
			j = r
		}
		if !w.less(j, i) {
			return
		}
		w.swap(i, j)
		i = j
	}
}
