package fifo

import "slices"

// DeltaFIFO is the model of client-go's DeltaFIFO (delta_fifo.go). Rules:
//   - Deltas accumulate per key; a key is queued iff it has deltas, once;
//     keys pop in the order they were first touched since their last pop.
//   - Appending a delta dedups only the two newest, and only Deleted after
//     Deleted: one survives, the newer if the older is a tombstone, else
//     the older (isDeletionDup, delta_fifo.go:469-478).
//   - Delete of a key with nothing queued is dropped when the FIFO has no
//     known objects, or when it has and the key is not known.
//   - Replace appends Sync (Replaced if EmitReplaced) for each listed
//     object in list order; then a tombstone carrying the newest queued
//     state (unwrapped) for each queued key not listed; then a tombstone
//     carrying the known state for each known key not listed with nothing
//     queued.
//   - Resync appends Sync with the known object for each known key with
//     nothing queued; a no-op without known objects.
//   - With Transform, every object given to Add, Update, Delete and Replace
//     is transformed once (Gen+1); Sync objects and tombstones never.
//   - Rejected objects and failing known-object lookups: see faults.go.
type DeltaFIFO struct {
	EmitReplaced bool
	Transform    bool
	queue        []string
	items        map[string][]Delta
	sync         sync
	closed       bool
}

// NewDeltaFIFO returns an empty model.
func NewDeltaFIFO(emitReplaced, transform bool) *DeltaFIFO {
	return &DeltaFIFO{EmitReplaced: emitReplaced, Transform: transform, items: map[string][]Delta{}}
}

func (f *DeltaFIFO) append(d Delta) {
	k := d.Key()
	ds, queued := f.items[k]
	ds = append(slices.Clip(ds), d)
	if n := len(ds); n >= 2 && ds[n-1].Type == Deleted && ds[n-2].Type == Deleted {
		if ds[n-2].Tombstone {
			ds[n-2] = ds[n-1]
		}
		ds = ds[:n-1]
	}
	if !queued {
		f.queue = append(f.queue, k)
	}
	f.items[k] = ds
}

// Add appends Added(o). The FIFO is populated even if o is rejected (an
// error: see faults.go).
func (f *DeltaFIFO) Add(o Obj) error { return f.addOrUpdate(Added, o) }

// Update appends Updated(o), populating the FIFO as Add does.
func (f *DeltaFIFO) Update(o Obj) error { return f.addOrUpdate(Updated, o) }

func (f *DeltaFIFO) addOrUpdate(t Type, o Obj) error {
	f.sync.populate()
	q, err := accept(o, f.Transform)
	if err != nil {
		return err
	}
	f.append(Of(t, q))
	return nil
}

// Delete appends Deleted(o) unless the rules drop it; it reports whether
// a delta was appended.
func (f *DeltaFIFO) Delete(o Obj, known Known) bool {
	ok, _ := f.DeleteIn(o, LookupOf(known))
	return ok
}

// DeleteIn is Delete against a known-objects store that may fail. An
// object without a key is an error that leaves the FIFO unpopulated; a
// failed lookup counts as known; a rejected transform is an error after
// the FIFO is populated, and only for a delete that is not dropped.
func (f *DeltaFIFO) DeleteIn(o Obj, l Lookup) (bool, error) {
	if o.Fault == NoKey {
		return false, ErrKey
	}
	f.sync.populate()
	_, queued := f.items[o.Key]
	if !queued {
		if l.None() {
			return false, nil
		}
		if _, exists, failed := l.Get(o.Key); !exists && !failed {
			return false, nil
		}
	}
	q, err := accept(o, f.Transform)
	if err != nil {
		return false, err
	}
	f.append(Of(Deleted, q))
	return true, nil
}

// Replace applies a relist of list.
func (f *DeltaFIFO) Replace(list []Obj, known Known) { _ = f.ReplaceIn(list, LookupOf(known)) }

// ReplaceIn is Replace against a known-objects store that may fail. A list
// holding an object the key function or the transformer rejects is an
// error, and the FIFO stays as it was (not populated). A key listed more
// than once gets a delta per listing and counts once in the initial
// population.
func (f *DeltaFIFO) ReplaceIn(list []Obj, l Lookup) error {
	objs, err := acceptAll(list, f.Transform)
	if err != nil {
		return err
	}
	action := Sync
	if f.EmitReplaced {
		action = Replaced
	}
	listed := map[string]bool{}
	for _, o := range objs {
		listed[o.Key] = true
		f.append(Of(action, o))
	}
	deletions := 0
	for _, k := range slices.Clone(f.queue) {
		if listed[k] {
			continue
		}
		ds := f.items[k]
		deletions++
		f.append(TombstoneOf(k, ds[len(ds)-1].Obj, ds[len(ds)-1].HasObj))
	}
	if !l.None() {
		for _, k := range l.Keys() {
			if listed[k] || len(f.items[k]) > 0 {
				continue
			}
			deletions++
			f.append(l.tombstone(k))
		}
	}
	if !f.sync.populated {
		f.sync.count = len(listed) + deletions
		f.sync.populate()
	}
	return nil
}

// Resync appends Sync for each known key with nothing queued.
func (f *DeltaFIFO) Resync(known Known) { _ = f.ResyncIn(LookupOf(known)) }

// ResyncIn is Resync against a known-objects store that may fail: a key
// whose lookup fails or finds nothing is skipped; a known object the key
// function rejects stops Resync with an error, the syncs before it
// staying queued.
func (f *DeltaFIFO) ResyncIn(l Lookup) error {
	if l.None() {
		return nil
	}
	for _, k := range l.Keys() {
		o, exists, failed := l.Get(k)
		if failed || !exists {
			continue
		}
		if o.Fault == NoKey {
			return ErrKey
		}
		if len(f.items[o.Key]) == 0 {
			f.append(Of(Sync, o))
		}
	}
	return nil
}

// Pop removes the first key and returns its deltas and isInInitialList;
// ok is false when nothing is queued. Call Popped once the pop's process
// func has returned.
func (f *DeltaFIFO) Pop() (ds []Delta, initial, ok bool) {
	if len(f.queue) == 0 {
		return nil, false, false
	}
	k := f.queue[0]
	f.queue = f.queue[1:]
	ds = f.items[k]
	delete(f.items, k)
	return ds, !f.sync.synced, true
}

// Popped records that a pop's process func returned (or panicked).
func (f *DeltaFIFO) Popped() { f.sync.finished(1) }

// Close closes the FIFO: queued keys still pop, then Pop reports closed.
func (f *DeltaFIFO) Close() { f.closed = true }

// Closed reports whether Close was called.
func (f *DeltaFIFO) Closed() bool { return f.closed }

// Synced is HasSynced.
func (f *DeltaFIFO) Synced() bool { return f.sync.synced }

// Populated reports whether an Add, Update, Delete or Replace populated
// the FIFO.
func (f *DeltaFIFO) Populated() bool { return f.sync.populated }

// Len is the number of queued keys.
func (f *DeltaFIFO) Len() int { return len(f.queue) }

// Queued returns the deltas queued for key.
func (f *DeltaFIFO) Queued(key string) []Delta { return f.items[key] }

// Keys returns the queued keys in pop order.
func (f *DeltaFIFO) Keys() []string { return slices.Clone(f.queue) }
