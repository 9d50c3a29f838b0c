package workqueue

import "time"

// waiting is the set of items a Delaying queue holds until their ready
// time: a binary min-heap of values ordered by (ready time, seq), a slab of
// slots that hold the items, and an index from item to slot (slotIndex).
//
// Nothing here allocates per item: heap entries and slots are values in
// slices that grow by amortised doubling, freed slots are reused through a
// free list, and the index maps an item to a slot number. A sift moves
// 24-byte entries and rewrites the moved items' heap positions in the slab
// (an array write), so the index is written only when an item arrives or
// leaves. After a burst the slices and the index are rebuilt at a quarter
// full, so the memory of a drained burst is given back.
//
// Not safe for concurrent use: Delaying calls it under its lock.
type waiting[T comparable] struct {
	heap  []waitEntry
	slots []waitSlot[T]
	free  []int // slot numbers free for reuse
	index slotIndex[T]
	seq   uint64 // orders equal ready times: the order they were set in
}

// waitEntry is a heap entry: the ordering key and the slot of its item.
type waitEntry struct {
	at   time.Duration // ready time, as an offset from Delaying.base
	seq  uint64
	slot int
}

// waitSlot holds a waiting item, the position of its heap entry and its
// tag in the index, kept so that removing the item does not hash it again.
// The two 32-bit fields take the room of one int: a slot of a string item
// is 24 bytes. Positions and slot numbers are thus below 2^32, a bound no
// process reaches (it is hundreds of GiB of waiting items).
type waitSlot[T comparable] struct {
	item T
	pos  uint32
	tag  uint32
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
	tag, place, s, ok := w.index.lookup(item, w.slots)
	if ok {
		i := int(w.slots[s].pos)
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
		w.slots = appendDoubling(w.slots, waitSlot[T]{})
	}
	w.seq++
	i := len(w.heap)
	w.heap = appendDoubling(w.heap, waitEntry{at: at, seq: w.seq, slot: s})
	w.slots[s] = waitSlot[T]{item: item, pos: uint32(i), tag: tag}
	w.index.add(tag, place, s)
	return w.up(i) == 0
}

// pop removes the heap's head and returns its item. The heap must not be
// empty.
func (w *waiting[T]) pop() T {
	h := w.heap
	n := len(h) - 1
	s := h[0].slot
	item := w.slots[s].item
	w.index.remove(item, w.slots[s].tag, w.slots)
	w.swap(0, n)
	w.heap = h[:n]
	if n > 0 {
		w.down(0)
	}
	w.slots[s] = waitSlot[T]{} // let the item be collected
	w.free = append(w.free, s)
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
	w.index.resize(sizeFor(n), func(s int) int { return int(w.slots[s].pos) })
	heap := make([]waitEntry, n, 2*n)
	slots := make([]waitSlot[T], n, 2*n)
	for i, e := range w.heap {
		heap[i] = waitEntry{at: e.at, seq: e.seq, slot: i}
		old := &w.slots[e.slot]
		slots[i] = waitSlot[T]{item: old.item, pos: uint32(i), tag: old.tag}
	}
	w.heap, w.slots, w.free = heap, slots, nil
}

// reset drops every waiting item and the memory that held them.
func (w *waiting[T]) reset() {
	w.heap, w.slots, w.free, w.index = nil, nil, nil, slotIndex[T]{}
}

func (w *waiting[T]) less(i, j int) bool {
	a, b := &w.heap[i], &w.heap[j]
	return a.at < b.at || a.at == b.at && a.seq < b.seq
}

func (w *waiting[T]) swap(i, j int) {
	h := w.heap
	h[i], h[j] = h[j], h[i]
	w.slots[h[i].slot].pos = uint32(i)
	w.slots[h[j].slot].pos = uint32(j)
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

// appendDoubling appends e to s, doubling the capacity when s is full.
// append grows a large slice by only a quarter, which over a burst of 100k
// AddAfter calls allocates about five times the final size; doubling
// allocates twice it.
func appendDoubling[E any](s []E, e E) []E {
	if len(s) == cap(s) {
		t := make([]E, len(s), max(2*len(s), 16))
		copy(t, s)
		s = t
	}
	return append(s, e)
}
