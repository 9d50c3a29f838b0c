package workqueue

import "hash/maphash"

// slotIndex maps the items of a waiting set to their slots: an open
// addressing table with linear probing over a power-of-two array of words.
// A word is 0 when its place is empty; otherwise its high 32 bits are the low
// 32 bits of the item's hash (the tag) and its low 32 bits are the slot
// number plus one. An item's home place is its tag masked to the table's
// size, so the table can grow and shrink without hashing any item again, and
// a deletion shifts the words behind the hole back (no tombstones), so a
// table that has seen many deletions probes no further than a fresh one.
//
// Why not a Go map: the waiting set inserts and deletes one item per
// AddAfter and per move, and a map[T]int costs a lookup and a separate
// assignment (two hashes of the item) plus a rehash of every item on
// growth; the words here are 8 bytes, a quarter of a map entry of a string
// key, so the table of 100k waiting items stays in the CPU's caches.
//
// The items themselves live in the slots; the table compares an item only
// when the tags match. Not safe for concurrent use.
type slotIndex[T comparable] struct {
	seed  maphash.Seed
	words []uint64
	n     int // words in use
}

// minIndex is the smallest table, in words.
const minIndex = 8

// hash returns item's tag.
func (x *slotIndex[T]) hash(item T) uint32 {
	return uint32(maphash.Comparable(x.seed, item))
}

// find returns the place of item and its slot, or, when item is absent, the
// empty place where it would go. The table must not be empty.
func (x *slotIndex[T]) find(item T, tag uint32, slots []waitSlot[T]) (place, slot int, ok bool) {
	mask := len(x.words) - 1
	for i := int(tag) & mask; ; i = (i + 1) & mask {
		w := x.words[i]
		if w == 0 {
			return i, 0, false
		}
		if uint32(w>>32) == tag {
			if s := int(uint32(w)) - 1; slots[s].item == item {
				return i, s, true
			}
		}
	}
}

// lookup returns item's slot. The first call makes the table.
func (x *slotIndex[T]) lookup(item T, slots []waitSlot[T]) (tag uint32, place, slot int, ok bool) {
	if x.words == nil {
		x.seed = maphash.MakeSeed()
		x.words = make([]uint64, minIndex)
	}
	tag = x.hash(item)
	place, slot, ok = x.find(item, tag, slots)
	return tag, place, slot, ok
}

// add records slot for an absent item whose tag and empty place lookup
// returned. It grows the table first if it would be more than seven eighths
// full, and then finds the place again. The high bound keeps the table
// small (at 100k items it is 1 MiB, half what a three-quarter bound gives);
// the long probe runs it allows are scans of adjacent words, which compare
// a 32-bit tag and touch an item only on a match.
func (x *slotIndex[T]) add(tag uint32, place, slot int) {
	if 8*(x.n+1) > 7*len(x.words) {
		x.resize(2*len(x.words), nil)
		mask := len(x.words) - 1
		for place = int(tag) & mask; x.words[place] != 0; place = (place + 1) & mask {
		}
	}
	x.words[place] = uint64(tag)<<32 | uint64(slot+1)
	x.n++
}

// remove deletes item, which must be present with tag, and shifts back the
// words of its probe run that the hole would otherwise cut off from their
// home.
func (x *slotIndex[T]) remove(item T, tag uint32, slots []waitSlot[T]) {
	hole, _, ok := x.find(item, tag, slots)
	if !ok {
		panic("workqueue: waiting item missing from its index") // an internal invariant, not input
	}
	mask := len(x.words) - 1
	for j := (hole + 1) & mask; x.words[j] != 0; j = (j + 1) & mask {
		home := int(x.words[j]>>32) & mask
		// The word at j may move to the hole if the hole lies on its probe
		// path: from home to j, cyclically.
		if (j-home)&mask >= (j-hole)&mask {
			x.words[hole] = x.words[j]
			hole = j
		}
	}
	x.words[hole] = 0
	x.n--
}

// resize rebuilds the table with size words (a power of two, large enough),
// renumbering every slot s to renumber(s) when renumber is not nil.
func (x *slotIndex[T]) resize(size int, renumber func(int) int) {
	old := x.words
	x.words = make([]uint64, size)
	mask := size - 1
	for _, w := range old {
		if w == 0 {
			continue
		}
		if renumber != nil {
			w = w>>32<<32 | uint64(renumber(int(uint32(w))-1)+1)
		}
		i := int(w>>32) & mask
		for x.words[i] != 0 {
			i = (i + 1) & mask
		}
		x.words[i] = w
	}
}

// sizeFor returns the table size for n items: at most half full, so that
// the set can double before the table grows.
func sizeFor(n int) int {
	size := minIndex
	for size < 2*n {
		size *= 2
	}
	return size
}
