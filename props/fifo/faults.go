package fifo

// This file is the machines' fault injection: objects the key function or
// the transformer rejects (input, refuseLabel), a known-objects store
// whose lookups fail (faultyKnown), process funcs that fail, and the state
// classes the error paths are tried from (preludes).

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	spec "github.com/kverify/kverify/spec/fifo"
)

// Fault is what goes wrong in one step: its object (Replace: one listed
// object) is rejected, a collaborator fails, or a PopBatch's process func
// fails.
type Fault uint8

// The faults.
const (
	noFault Fault = iota
	// faultNoKey: the object (Replace: the At-th listed) has no key.
	faultNoKey
	// faultNoTransform: the transformer rejects the object (Replace: the
	// At-th listed); a FIFO without a transformer takes it.
	faultNoTransform
	// faultLookup: the known objects' GetByKey fails for key k<At>
	// (Delete: the deleted object's key) and for every other key ListKeys
	// lists, the first included.
	faultLookup
	// faultGhost: ListKeys lists k<At> (Delete: the deleted object's key),
	// which GetByKey does not find (a store that changed in between).
	faultGhost
	// faultForeign: GetByKey of k<At> (Delete: the deleted object's key),
	// which ListKeys lists, returns an object no key can be computed for.
	faultForeign
	// faultErr: PopBatch's process func returns an error.
	faultErr
	// faultPanic: PopBatch's process func panics.
	faultPanic
)

var faultNames = [...]string{"", "nokey", "notransform", "lookup", "ghost", "foreign", "err", "panic"}

func (f Fault) String() string {
	if int(f) < len(faultNames) {
		return faultNames[f]
	}
	return fmt.Sprintf("Fault(%d)", f)
}

func parseFault(s string) (Fault, bool) {
	for i, n := range faultNames {
		if n == s && i > 0 {
			return Fault(i), true
		}
	}
	return 0, false
}

// objectFault is the model's fault of an object given with fault f.
func objectFault(f Fault) spec.Fault {
	switch f {
	case faultNoKey:
		return spec.NoKey
	case faultNoTransform:
		return spec.NoTransform
	}
	return spec.NoFault
}

// knownFault reports whether f is a fault of the known-objects store.
func knownFault(f Fault) bool { return f == faultLookup || f == faultGhost || f == faultForeign }

var (
	errTransform = errors.New("transform: the object is labelled to be refused")
	errLookup    = errors.New("known objects: lookup failed on purpose")
)

// faultyKnown is the known-objects store a machine gives its FIFO: the
// machine's MapStore, with the faults of the step running (none between
// steps).
type faultyKnown struct {
	s  *MapStore
	mu sync.Mutex
	l  spec.Lookup // Objects unused: the faults only
}

func (k *faultyKnown) set(l spec.Lookup) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.l = l
}

func (k *faultyKnown) ListKeys() []string {
	keys := k.s.ListKeys()
	k.mu.Lock()
	defer k.mu.Unlock()
	n := len(keys)
	for _, x := range []string{k.l.Ghost, k.l.Foreign.Key} {
		if x != "" && !slices.Contains(keys[:n], x) {
			keys = append(keys, x)
		}
	}
	if len(keys) > n {
		slices.Sort(keys)
	}
	return keys
}

func (k *faultyKnown) GetByKey(key string) (any, bool, error) {
	k.mu.Lock()
	l := k.l
	k.mu.Unlock()
	switch {
	case l.Failing[key]:
		return nil, false, errLookup
	case key == l.Ghost:
		return nil, false, nil
	case key == l.Foreign.Key:
		return input(l.Foreign), true, nil
	}
	return k.s.GetByKey(key)
}

// lookupFor is the model's view of the known objects during step st, whose
// object (if any) has key own: the faults st asks for, which the machine
// also installs in its faultyKnown. Without known objects it is the empty
// Lookup (no known objects; faults moot).
func (x *machine) lookupFor(st Step, own string) spec.Lookup {
	if !x.mode.Known {
		return spec.Lookup{}
	}
	l := spec.Lookup{Objects: x.model.Objects}
	target := own
	if target == "" {
		target = fmt.Sprintf("k%d", st.At)
	}
	switch st.Fault {
	case faultLookup:
		l.Failing = map[string]bool{target: true}
		for i, k := range l.Keys() {
			if i%2 == 0 {
				l.Failing[k] = true
			}
		}
	case faultGhost:
		l.Ghost = target
	case faultForeign:
		x.made++
		l.Foreign = spec.Obj{Key: target, Version: x.made, Fault: spec.NoKey}
	}
	x.faulty.set(spec.Lookup{Failing: l.Failing, Ghost: l.Ghost, Foreign: l.Foreign})
	return l
}

// State classes: where a machine stands when it tries a step, by what its
// model says. The error paths are tried from each (a prelude of steps
// takes a run there first).
const (
	stateFresh      = "fresh"              // never populated, nothing queued
	stateUnpopQueue = "unpopulated-queued" // never populated, something queued (Resync, Bookmark)
	stateMidSync    = "mid-initial-sync"   // populated by Replace, initial population not all processed
	stateSyncedIdle = "synced-empty"       // synced, nothing queued
	stateSyncedBusy = "synced-queued"      // synced, something queued
	stateClosed     = "closed"
)

// stateClasses are the state classes, in prelude order.
var stateClasses = []string{stateFresh, stateUnpopQueue, stateMidSync, stateSyncedIdle, stateSyncedBusy, stateClosed}

// prelude is the steps that take a FIFO in mode m to state class c, and m
// adjusted so that they can (a DeltaFIFO needs known objects to queue
// anything without populating).
func prelude(real bool, m Mode, c string) (Mode, string) {
	switch c {
	case stateUnpopQueue:
		if !real || !m.Atomic {
			m.Known = true
			return m, "Know(k0) Know(k1,ns) Resync"
		}
		return m, "Bookmark Resync"
	case stateMidSync:
		if real && m.Atomic {
			return m, "Resync Replace(0,3) Pop"
		}
		return m, "Replace(0,3) Pop"
	case stateSyncedIdle:
		return m, "Add(k0) Pop"
	case stateSyncedBusy:
		return m, "Add(k0) Update(k1,ns)"
	case stateClosed:
		return m, "Add(k0) Close"
	}
	return m, ""
}

// stateClass is the state class of x's model.
func (x *machine) stateClass() string {
	var populated bool
	if x.rm != nil {
		populated = x.rm.Populated()
	} else {
		populated = x.dm.Populated()
	}
	switch {
	case x.closed():
		return stateClosed
	case !populated && x.queued() == 0:
		return stateFresh
	case !populated:
		return stateUnpopQueue
	case !x.synced():
		return stateMidSync
	case x.queued() == 0:
		return stateSyncedIdle
	}
	return stateSyncedBusy
}
