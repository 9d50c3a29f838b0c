package workqueue

import "hash/maphash"

// states maps the items a Queue knows (queued, processing, or both) to
// their state: an open addressing table with linear probing that holds the
// items themselves, each with the low 32 bits of its hash (its tag) and its
// state. A zero state marks an empty place. An item's home place is its tag
// masked to the table's size, so the table grows and shrinks without
// hashing any item again, and a removal shifts the entries behind the hole
// back (no tombstones).
//
// Why not a Go map: an Add and a Done each need a lookup and then a write
// or a delete, which a map does with two hashes of the item; here the tag
// is computed once, before the queue's lock is taken (tag needs no lock),
// and the place found by the lookup is written directly. Under contention
// the time inside the lock is what every other worker waits for. A Go map
// also never shrinks, so a queue that once held a million keys would keep
// the map's memory for its lifetime; this table halves when it falls under
// an eighth full for a while.
//
// Not safe for concurrent use except for tag: Queue calls the rest under
// its lock.
type states[T comparable] struct {
	seed    maphash.Seed
	entries []stateEntry[T]
	n       int // entries in use
	low     int // consecutive removals that left the table under an eighth full
}

// stateEntry is a place of the table; state 0 means empty.
type stateEntry[T comparable] struct {
	item  T
	tag   uint32
	state uint8
}

// minStates is the smallest table, in entries.
const minStates = 8

func newStates[T comparable]() states[T] {
	return states[T]{seed: maphash.MakeSeed(), entries: make([]stateEntry[T], minStates)}
}

// tag returns item's tag. It reads only the seed, which never changes, so
// it is safe without the queue's lock.
func (s *states[T]) tag(item T) uint32 {
	return uint32(maphash.Comparable(s.seed, item))
}

// find returns item's place and state, or, when item is absent, the empty
// place where it would go and state 0.
func (s *states[T]) find(item T, tag uint32) (place int, state uint8) {
	mask := len(s.entries) - 1
	for i := int(tag) & mask; ; i = (i + 1) & mask {
		e := &s.entries[i]
		if e.state == 0 {
			return i, 0
		}
		if e.tag == tag && e.item == item {
			return i, e.state
		}
	}
}

// set gives the item at place, which find returned for item with tag, a
// non-zero state. An absent item is inserted there; the table grows first
// when it would be more than three quarters full.
func (s *states[T]) set(place int, item T, tag uint32, state uint8) {
	if s.entries[place].state != 0 {
		s.entries[place].state = state
		return
	}
	if 4*(s.n+1) > 3*len(s.entries) {
		s.resize(2 * len(s.entries))
		place, _ = s.find(item, tag)
	}
	s.entries[place] = stateEntry[T]{item: item, tag: tag, state: state}
	s.n++
}

// remove deletes the item at place, which must be in use, shifting back
// the entries of its probe run that the hole would otherwise cut off from
// their home. It halves the table once it has stayed under an eighth full
// for as many removals as the table has places, so that a queue whose keys
// swing between many and few does not shrink and regrow on every swing,
// while a drained burst still gives its memory back.
func (s *states[T]) remove(place int) {
	mask := len(s.entries) - 1
	hole := place
	for j := (hole + 1) & mask; s.entries[j].state != 0; j = (j + 1) & mask {
		home := int(s.entries[j].tag) & mask
		// The entry at j may move to the hole if the hole lies on its probe
		// path: from home to j, cyclically.
		if (j-home)&mask >= (j-hole)&mask {
			s.entries[hole] = s.entries[j]
			hole = j
		}
	}
	s.entries[hole] = stateEntry[T]{} // drops the reference to the item
	s.n--
	if len(s.entries) > minStates && 8*s.n < len(s.entries) {
		if s.low++; s.low >= len(s.entries) {
			s.resize(len(s.entries) / 2)
			s.low = 0
		}
	} else {
		s.low = 0
	}
}

// resize rebuilds the table with size entries, a power of two above the
// number in use.
func (s *states[T]) resize(size int) {
	old := s.entries
	s.entries = make([]stateEntry[T], size)
	mask := size - 1
	for _, e := range old {
		if e.state == 0 {
			continue
		}
		i := int(e.tag) & mask
		for s.entries[i].state != 0 {
			i = (i + 1) & mask
		}
		s.entries[i] = e
	}
}
