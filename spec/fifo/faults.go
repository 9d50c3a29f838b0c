package fifo

import (
	"errors"
	"slices"
)

// Faults: what a FIFO does when a call's input is rejected or one of its
// collaborators fails (client-go v0.37.2, delta_fifo.go and
// the_real_fifo.go). A FIFO calls three collaborators: the key function
// (on every object it is given, and on the known objects Resync queues),
// the transformer (on every object given to Add, Update, Delete and
// Replace, never on tombstones nor on Resync's known objects), and the
// known-objects store (ListKeys, then GetByKey per key).
//
//   - An object the key function rejects: Add, Update and Delete return an
//     error and queue nothing. DeltaFIFO's Add and Update, and every
//     RealFIFO producer, mark the FIFO populated before they key the object
//     (delta_fifo.go:386-401, the_real_fifo.go:337-372); DeltaFIFO's Delete
//     keys it first and stays unpopulated (delta_fifo.go:408-416).
//   - An object the transformer rejects: the call returns the error and
//     queues nothing; the FIFO is populated as above. A DeltaFIFO Delete the
//     rules drop never reaches the transformer (delta_fifo.go:417-438): it
//     returns nil.
//   - A Replace whose list holds either: an error, and the FIFO unchanged
//     and not populated: all or nothing, the suite's contract (client-go's
//     DeltaFIFO and non-atomic RealFIFO queue the objects before the bad
//     one, and its atomic RealFIFO keys nothing: declared divergences).
//   - GetByKey fails: DeltaFIFO's Delete queues the deletion (it cannot
//     tell the object is gone, delta_fifo.go:428-434); Replace queues the
//     tombstone without an object (delta_fifo.go:677-684,
//     the_real_fifo.go:710-717); Resync skips the key (delta_fifo.go:722-725,
//     the_real_fifo.go:771-774). No call returns the error.
//   - ListKeys lists a key GetByKey does not find (a store that changed
//     between the two): as a failed lookup, except that DeltaFIFO's Delete
//     of an unqueued key is then dropped.
//   - GetByKey returns an object the key function rejects: Replace's
//     tombstone carries it (a tombstone's key is its Key); Resync returns
//     an error and stops, the syncs queued before it staying
//     (delta_fifo.go:735-738; the_real_fifo.go:780-783, where RealFIFO looks
//     the key up only if nothing is queued for it, :767-769).
//   - A process func's error or panic: Pop and PopBatch return the error or
//     let the panic through; what they took stays taken and counts as
//     processed (the_real_fifo.go:413-418, 544-549).

// Fault is what is wrong with an object a FIFO is given or finds.
type Fault uint8

// The object faults.
const (
	// NoFault: a valid object.
	NoFault Fault = iota
	// NoKey: the key function rejects the object (it has no metadata).
	NoKey
	// NoTransform: the transformer rejects the object. A FIFO without a
	// transformer takes it as any other.
	NoTransform
)

func (f Fault) String() string {
	switch f {
	case NoKey:
		return "nokey"
	case NoTransform:
		return "notransform"
	}
	return ""
}

// The model's errors: a call fails with one of them. The suite compares
// only whether a call failed, not its error.
var (
	ErrKey       = errors.New("the key function rejected the object")
	ErrTransform = errors.New("the transformer rejected the object")
)

// accept is the key function's and (when transform is set) the
// transformer's verdict on o, and the object queued for it.
func accept(o Obj, transform bool) (Obj, error) {
	if o.Fault == NoKey {
		return o, ErrKey
	}
	if transform {
		if o.Fault == NoTransform {
			return o, ErrTransform
		}
		o.Gen++
	}
	return o, nil
}

// acceptAll is accept over a list: the first error, or the queued objects.
func acceptAll(list []Obj, transform bool) ([]Obj, error) {
	for _, o := range list {
		if o.Fault == NoKey {
			return nil, ErrKey
		}
	}
	out := make([]Obj, len(list))
	for i, o := range list {
		t, err := accept(o, transform)
		if err != nil {
			return nil, err
		}
		out[i] = t
	}
	return out, nil
}

// Lookup is a FIFO's known-objects store as one call sees it: its objects
// and the faults its lookups show during the call. Objects nil means the
// FIFO has no known objects (the faults are then moot).
type Lookup struct {
	Objects Known
	// Failing are keys whose GetByKey returns an error.
	Failing map[string]bool
	// Ghost, if set, is a key ListKeys lists and GetByKey does not find.
	Ghost string
	// Foreign, if its Key is set, is what GetByKey returns for that key
	// (listed by ListKeys): an object the key function rejects (Fault
	// NoKey).
	Foreign Obj
}

// LookupOf is the fault-free Lookup of known.
func LookupOf(known Known) Lookup { return Lookup{Objects: known} }

// None reports whether the FIFO has no known objects.
func (l Lookup) None() bool { return l.Objects == nil }

// Keys is ListKeys: the known keys, the ghost and the foreign key, sorted.
func (l Lookup) Keys() []string {
	keys := l.Objects.Keys()
	for _, k := range []string{l.Ghost, l.Foreign.Key} {
		if k != "" && !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// Get is GetByKey: the object, whether it exists, and whether the lookup
// failed.
func (l Lookup) Get(key string) (o Obj, exists, failed bool) {
	switch {
	case l.Failing[key]:
		return Obj{}, false, true
	case key == l.Ghost:
		return Obj{}, false, false
	case key == l.Foreign.Key:
		return l.Foreign, true, false
	}
	o, exists = l.Objects[key]
	return o, exists, false
}

// tombstone is Replace's tombstone for a known key k that is neither
// listed nor queued: carrying what GetByKey returns, or nothing when the
// lookup fails or finds nothing.
func (l Lookup) tombstone(k string) Delta {
	o, exists, failed := l.Get(k)
	return TombstoneOf(k, o, exists && !failed)
}
