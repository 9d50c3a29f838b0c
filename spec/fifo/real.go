package fifo

import "slices"

// DefaultBatchSize is RealFIFO's largest batch (the_real_fifo.go:83).
const DefaultBatchSize = 1000

// RealFIFO is the model of client-go's RealFIFO (the_real_fifo.go). Rules:
//   - One delta per event, in arrival order; nothing is merged or dropped
//     (a Delete of an unknown object is queued too).
//   - Atomic: Replace appends one ReplacedAll carrying the transformed list,
//     Resync one SyncAll; Bookmark (if Bookmarks) appends a Bookmark.
//   - Not atomic (needs known objects): Replace appends a tombstone for each
//     queued key (first-seen order) not listed whose last queued delta is not
//     Deleted, carrying that delta's object; then one for each known key not
//     listed and not queued, carrying the known object; then Replaced for
//     each listed object in list order. Resync appends Sync with the known
//     object for each known key with nothing queued.
//   - Pop takes one delta; PopBatch up to BatchSize consecutive deltas,
//     stopping before the end of the initial population, before a delta
//     that is not batchable (which goes alone if first), and before a
//     second delta of a key already taken.
//   - Transform as DeltaFIFO's, and the objects of ReplacedAll too.
//   - Rejected objects and failing known-object lookups: see faults.go.
type RealFIFO struct {
	Atomic    bool
	Transform bool
	Bookmarks bool
	BatchSize int
	items     []Delta
	sync      sync
	closed    bool
}

// NewRealFIFO returns an empty model.
func NewRealFIFO(atomic, transform, bookmarks bool) *RealFIFO {
	return &RealFIFO{Atomic: atomic, Transform: transform, Bookmarks: bookmarks, BatchSize: DefaultBatchSize}
}

// Add appends Added(o). The FIFO is populated even if o is rejected (an
// error: see faults.go); so are Update and Delete.
func (f *RealFIFO) Add(o Obj) error { return f.produce(Added, o) }

// Update appends Updated(o).
func (f *RealFIFO) Update(o Obj) error { return f.produce(Updated, o) }

// Delete appends Deleted(o).
func (f *RealFIFO) Delete(o Obj) error { return f.produce(Deleted, o) }

func (f *RealFIFO) produce(t Type, o Obj) error {
	f.sync.populate()
	q, err := accept(o, f.Transform)
	if err != nil {
		return err
	}
	f.items = append(f.items, Of(t, q))
	return nil
}

// Bookmark appends Bookmark(rv) if the FIFO emits bookmarks.
func (f *RealFIFO) Bookmark(rv string) {
	if f.Bookmarks {
		f.items = append(f.items, Delta{Type: Bookmark, RV: rv})
	}
}

// Replace applies a relist of list at resource version rv.
func (f *RealFIFO) Replace(list []Obj, rv string, known Known) {
	_ = f.ReplaceIn(list, rv, LookupOf(known))
}

// ReplaceIn is Replace against a known-objects store that may fail. A list
// holding an object the key function or the transformer rejects is an
// error, and the FIFO stays as it was (not populated). A key listed more
// than once gets a Replaced per listing (atomic: the ReplacedAll lists it
// as often).
func (f *RealFIFO) ReplaceIn(list []Obj, rv string, l Lookup) error {
	objs, err := acceptAll(list, f.Transform)
	if err != nil {
		return err
	}
	if f.Atomic {
		f.items = append(f.items, Delta{Type: ReplacedAll, Objects: objs, RV: rv})
	} else {
		listed := map[string]bool{}
		for _, o := range list {
			listed[o.Key] = true
		}
		var order []string
		last := map[string]Delta{}
		for _, d := range f.items {
			if _, seen := last[d.Key()]; !seen {
				order = append(order, d.Key())
			}
			last[d.Key()] = d
		}
		var add []Delta
		for _, k := range order {
			if d := last[k]; !listed[k] && d.Type != Deleted {
				add = append(add, TombstoneOf(k, d.Obj, true))
			}
		}
		if !l.None() {
			for _, k := range l.Keys() {
				if _, queued := last[k]; !listed[k] && !queued {
					add = append(add, l.tombstone(k))
				}
			}
		}
		for _, o := range objs {
			add = append(add, Of(Replaced, o))
		}
		f.items = append(f.items, add...)
	}
	if !f.sync.populated {
		f.sync.count = len(f.items)
		f.sync.populate()
	}
	return nil
}

// Resync applies a resync.
func (f *RealFIFO) Resync(known Known) { _ = f.ResyncIn(LookupOf(known)) }

// ResyncIn is Resync against a known-objects store that may fail: a known
// key with a delta queued is skipped before it is looked up; one whose
// lookup fails or finds nothing is skipped; a known object the key
// function rejects stops Resync with an error, the syncs before it
// staying queued.
func (f *RealFIFO) ResyncIn(l Lookup) error {
	if f.Atomic {
		f.items = append(f.items, Delta{Type: SyncAll})
		return nil
	}
	if l.None() {
		return nil
	}
	queued := map[string]bool{}
	for _, d := range f.items {
		queued[d.Key()] = true
	}
	for _, k := range l.Keys() {
		if queued[k] {
			continue
		}
		o, exists, failed := l.Get(k)
		if failed || !exists {
			continue
		}
		if o.Fault == NoKey {
			return ErrKey
		}
		f.items = append(f.items, Of(Sync, o))
	}
	return nil
}

// Pop removes the oldest delta and returns it with isInInitialList; ok is
// false when nothing is queued. Call Popped(1) once process has returned.
func (f *RealFIFO) Pop() (d Delta, initial, ok bool) {
	if len(f.items) == 0 {
		return Delta{}, false, false
	}
	d = f.items[0]
	f.items = f.items[1:]
	return d, !f.sync.synced, true
}

// Batchable reports whether PopBatch may put a delta of type t in a batch.
func Batchable(t Type) bool {
	switch t {
	case Sync, Replaced, Added, Updated, Deleted:
		return true
	}
	return false
}

// PopBatch removes the next batch and returns it with isInInitialList.
// Call Popped(len(batch)) once the batch's process func has returned.
func (f *RealFIFO) PopBatch() (batch []Delta, initial, ok bool) {
	if len(f.items) == 0 {
		return nil, false, false
	}
	seen := map[string]bool{}
	n := 0
	for ; n < f.BatchSize && n < len(f.items); n++ {
		if f.sync.count > 0 && n >= f.sync.count {
			break
		}
		d := f.items[n]
		if !Batchable(d.Type) {
			if n == 0 {
				n = 1
			}
			break
		}
		if seen[d.Key()] {
			break
		}
		seen[d.Key()] = true
	}
	batch = slices.Clone(f.items[:n])
	f.items = f.items[n:]
	return batch, !f.sync.synced, true
}

// Pending is the number of initial deltas not yet processed: at most that
// many of a pop's deltas count toward the initial population. A pop
// decides how many when it begins, so a Replace made while its process
// func runs unlocked (the first, which sets the initial population) does
// not count the pop's deltas among the Replace's: call Popped with
// min(n, Pending()) read before that Replace.
func (f *RealFIFO) Pending() int { return f.sync.count }

// Popped records that n initial-or-later pops' process func returned.
func (f *RealFIFO) Popped(n int) { f.sync.finished(n) }

// Close closes the FIFO.
func (f *RealFIFO) Close() { f.closed = true }

// Closed reports whether Close was called.
func (f *RealFIFO) Closed() bool { return f.closed }

// Synced is HasSynced.
func (f *RealFIFO) Synced() bool { return f.sync.synced }

// Populated reports whether an Add, Update, Delete or Replace populated
// the FIFO.
func (f *RealFIFO) Populated() bool { return f.sync.populated }

// Len is the number of queued deltas.
func (f *RealFIFO) Len() int { return len(f.items) }

// Items returns the queued deltas, oldest first.
func (f *RealFIFO) Items() []Delta { return slices.Clone(f.items) }
