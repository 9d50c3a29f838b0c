// Package fifo is the reference model of client-go's two informer queues,
// DeltaFIFO and RealFIFO (tools/cache/delta_fifo.go and the_real_fifo.go,
// v0.37.2), and of the processing an informer runs on what they pop
// (processDeltas, controller.go:823-1016), over abstract objects.
//
// The models are pure: no goroutines, no clock, no randomness. An object is
// a key, a version and the number of times a transformer has touched it;
// the objects a FIFO already handed out (its "known objects", the informer's
// store) are an input, a Known map, because the caller owns them. Where
// client-go iterates a map (DeltaFIFO.Replace over its items, a store's
// ListKeys), the model fixes an order: queued keys in queue order, known keys
// sorted. Both are unobservable for DeltaFIFO's queued tombstones (they land
// on keys already queued) and are what a sorted store gives.
//
// Initial sync. A FIFO is populated by its first Add, Update, Delete or
// Replace; the first Replace of an unpopulated FIFO fixes the initial
// population: for DeltaFIFO the number of distinct keys it queued or touched
// (listed keys plus tombstones), for RealFIFO the number of deltas queued
// after it. It is synced when populated and that many pops have finished:
// their process func has returned (the guarantee the suite states; client-go's
// DeltaFIFO counts a pop when it begins, delta_fifo.go:580-583). A pop's
// isInInitialList is "not synced when the pop began". Synced never reverts.
package fifo

import (
	"fmt"
	"slices"
	"strings"
)

// Type is a delta type, spelled as client-go spells it.
type Type string

// The delta types.
const (
	Added       Type = "Added"
	Updated     Type = "Updated"
	Deleted     Type = "Deleted"
	Replaced    Type = "Replaced"
	Sync        Type = "Sync"
	ReplacedAll Type = "ReplacedAll"
	SyncAll     Type = "SyncAll"
	Bookmark    Type = "Bookmark"
)

// Obj is an abstract object. Version identifies one state of it (every
// event the test makes carries a fresh version, unless it delivers a state
// again); Gen counts the transforms applied to it; Fault says whether the
// key function or the transformer rejects it (see faults.go). A key may
// hold a namespace ("ns/k3"), as client-go's MetaNamespaceKeyFunc makes.
type Obj struct {
	Key     string
	Version int
	Gen     int
	Fault   Fault
}

func (o Obj) String() string {
	s := fmt.Sprintf("%s@%d", o.Key, o.Version)
	if o.Gen != 0 {
		s += fmt.Sprintf("/t%d", o.Gen)
	}
	if o.Fault != NoFault {
		s += "!" + o.Fault.String()
	}
	return s
}

// Delta is one delta. For a tombstone (a DeletedFinalStateUnknown), Obj.Key
// is the tombstone's key and HasObj tells whether it carries a last state
// (Obj). ReplacedAll carries Objects and RV; Bookmark carries RV.
type Delta struct {
	Type      Type
	Obj       Obj
	Tombstone bool
	HasObj    bool
	Objects   []Obj
	RV        string
}

// Key is the delta's key ("" for ReplacedAll, SyncAll and Bookmark).
func (d Delta) Key() string { return d.Obj.Key }

func (d Delta) String() string {
	switch {
	case d.Type == ReplacedAll:
		return fmt.Sprintf("ReplacedAll(%s,%s)", d.RV, objs(d.Objects))
	case d.Type == SyncAll:
		return "SyncAll"
	case d.Type == Bookmark:
		return fmt.Sprintf("Bookmark(%s)", d.RV)
	case d.Tombstone && !d.HasObj:
		return fmt.Sprintf("%s(DFSU %s <nil>)", d.Type, d.Obj.Key)
	case d.Tombstone:
		return fmt.Sprintf("%s(DFSU %s)", d.Type, d.Obj)
	}
	return fmt.Sprintf("%s(%s)", d.Type, d.Obj)
}

func objs(os []Obj) string {
	s := make([]string, len(os))
	for i, o := range os {
		s[i] = o.String()
	}
	return "[" + strings.Join(s, " ") + "]"
}

// Deltas formats a list of deltas.
func Deltas(ds []Delta) string {
	s := make([]string, len(ds))
	for i, d := range ds {
		s[i] = d.String()
	}
	return "[" + strings.Join(s, " ") + "]"
}

// Of is the delta of type t carrying o.
func Of(t Type, o Obj) Delta { return Delta{Type: t, Obj: o, HasObj: true} }

// TombstoneOf is a Deleted delta carrying a tombstone for key: of last if
// ok, else without an object.
func TombstoneOf(key string, last Obj, ok bool) Delta {
	if !ok {
		return Delta{Type: Deleted, Obj: Obj{Key: key}, Tombstone: true}
	}
	last.Key = key
	return Delta{Type: Deleted, Obj: last, Tombstone: true, HasObj: true}
}

// Known is the known-objects store a FIFO consults: nil means the FIFO has
// none (a DeltaFIFO made without one; a RealFIFO in atomic mode).
type Known map[string]Obj

// Keys returns the known keys, sorted.
func (k Known) Keys() []string {
	keys := make([]string, 0, len(k))
	for key := range k {
		keys = append(keys, key)
	}
	slices.Sort(keys)
	return keys
}

// sync is the initial-sync bookkeeping both FIFOs share.
type sync struct {
	populated bool
	count     int // initial pops not yet finished
	synced    bool
}

func (s *sync) populate() {
	s.populated = true
	s.check()
}

func (s *sync) check() {
	if s.populated && s.count == 0 {
		s.synced = true
	}
}

// finished records that n initial pops finished.
func (s *sync) finished(n int) {
	if s.count > 0 {
		s.count = max(s.count-n, 0)
		s.check()
	}
}
