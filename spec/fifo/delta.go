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

func (f *DeltaFIFO) transform(o Obj) Obj {
	if f.Transform {
		o.Gen++
	}
	return o
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

// Add appends Added(o).
func (f *DeltaFIFO) Add(o Obj) {
	f.sync.populate()
	f.append(Of(Added, f.transform(o)))
}

// Update appends Updated(o).
func (f *DeltaFIFO) Update(o Obj) {
	f.sync.populate()
	f.append(Of(Updated, f.transform(o)))
}

// Delete appends Deleted(o) unless the rules drop it; it reports whether
// a delta was appended.
func (f *DeltaFIFO) Delete(o Obj, known Known) bool {
	f.sync.populate()
	_, queued := f.items[o.Key]
	if !queued {
		if known == nil {
			return false
		}
		if _, ok := known[o.Key]; !ok {
			return false
		}
	}
	f.append(Of(Deleted, f.transform(o)))
	return true
}

// Replace applies a relist of list.
func (f *DeltaFIFO) Replace(list []Obj, known Known) {
	action := Sync
	if f.EmitReplaced {
		action = Replaced
	}
	listed := map[string]bool{}
	for _, o := range list {
		listed[o.Key] = true
		f.append(Of(action, f.transform(o)))
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
	for _, k := range known.Keys() {
		if listed[k] || len(f.items[k]) > 0 {
			continue
		}
		deletions++
		f.append(TombstoneOf(k, known[k], true))
	}
	if !f.sync.populated {
		f.sync.count = len(listed) + deletions
		f.sync.populate()
	}
}

// Resync appends Sync for each known key with nothing queued.
func (f *DeltaFIFO) Resync(known Known) {
	for _, k := range known.Keys() {
		if len(f.items[k]) == 0 {
			f.append(Of(Sync, known[k]))
		}
	}
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

// Len is the number of queued keys.
func (f *DeltaFIFO) Len() int { return len(f.queue) }

// Queued returns the deltas queued for key.
func (f *DeltaFIFO) Queued(key string) []Delta { return f.items[key] }

// Keys returns the queued keys in pop order.
func (f *DeltaFIFO) Keys() []string { return slices.Clone(f.queue) }
