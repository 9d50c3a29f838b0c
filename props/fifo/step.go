package fifo

import (
	"fmt"
	"strconv"
	"strings"
)

// Kind names an operation of a FIFO machine.
type Kind uint8

// The operations. Pops pops N times (or until nothing is queued), so that
// a machine drains a relist of thousands in one step.
const (
	Add Kind = iota
	Update
	Delete
	Replace
	Resync
	Pop
	PopErr   // a pop whose process func returns an error
	PopPanic // a pop whose process func panics
	Pops
	PopBatch
	BookmarkOp
	Close
	// Know puts an object straight into the known objects (the store), as
	// a store shared with another writer or filled before the FIFO starts.
	Know
	// PopReplace is a Pop whose process func, running unlocked
	// (UnlockWhileProcessing, under the bound), calls Replace with the
	// step's list: a relist that lands while a delta is processed, as the
	// reflector's does beside the informer's processing loop. Elsewhere
	// (a DeltaFIFO, a FIFO that processes under its lock) it is skipped:
	// the call would wait for the lock its own caller holds.
	PopReplace
)

var kindNames = [...]string{"Add", "Update", "Delete", "Replace", "Resync", "Pop", "PopErr", "PopPanic", "Pops", "PopBatch", "Bookmark", "Close", "Know", "PopReplace"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", k)
}

// Step is one operation. Add, Update, Delete and Know carry an object of
// key "k<Key>"; Replace (and the Replace of PopReplace) lists keys k<Off> ..
// k<Off+N-1>; Pops pops up to N.
// Every object a step makes gets a fresh resource version: the number of
// objects made before it, plus one.
//
// The variations are inputs the API admits besides those: NS puts the
// objects in namespace "ns" (keys "ns/k<Key>"); Again gives Add, Update,
// Delete or Know the key's last state again (no fresh version: a watch
// delivering an event twice); Dup lists the first half of a Replace's keys
// again after the rest (fresh versions), and Rev lists them in descending
// order; N 0 is an empty relist. Fault is what goes wrong in the step (see
// Fault); At is the index of a Replace's rejected object, or the number of
// the key a Replace's or Resync's known-objects fault hits.
type Step struct {
	Kind   Kind
	Key    int
	Off, N int
	NS     bool
	Again  bool
	Dup    bool
	Rev    bool
	Fault  Fault
	At     int
}

// positional is the number of positional arguments of k's notation.
func positional(k Kind) int {
	switch k {
	case Add, Update, Delete, Know, Pops:
		return 1
	case Replace, PopReplace:
		return 2
	}
	return 0
}

// String is the trace notation: "Add(k3)", "Replace(2,100)", "Pops(40)",
// "Pop", "Close", ...; variations and faults follow the positional
// arguments: "Add(k3,ns,again)", "Delete(k1,lookup)",
// "Replace(0,4,dup,rev,nokey@2)", "Resync(ghost@3)", "PopBatch(err)".
func (s Step) String() string {
	var args []string
	switch s.Kind {
	case Add, Update, Delete, Know:
		args = append(args, fmt.Sprintf("k%d", s.Key))
	case Replace, PopReplace:
		args = append(args, strconv.Itoa(s.Off), strconv.Itoa(s.N))
	case Pops:
		args = append(args, strconv.Itoa(s.N))
	}
	for _, f := range []struct {
		on   bool
		name string
	}{{s.NS, "ns"}, {s.Again, "again"}, {s.Dup, "dup"}, {s.Rev, "rev"}} {
		if f.on {
			args = append(args, f.name)
		}
	}
	if s.Fault != noFault {
		if s.Kind == Replace || s.Kind == Resync {
			args = append(args, fmt.Sprintf("%s@%d", s.Fault, s.At))
		} else {
			args = append(args, s.Fault.String())
		}
	}
	if len(args) == 0 {
		return s.Kind.String()
	}
	return s.Kind.String() + "(" + strings.Join(args, ",") + ")"
}

// GoString is String, for rapid's logs.
func (s Step) GoString() string { return s.String() }

// parseStep is the inverse of Step.String.
func parseStep(s string) (Step, error) {
	name, arg, hasArg := strings.Cut(s, "(")
	var k Kind = 255
	for i, n := range kindNames {
		if n == name {
			k = Kind(i)
		}
	}
	if k == 255 {
		return Step{}, fmt.Errorf("fifo: unknown step %q", s)
	}
	arg, closed := strings.CutSuffix(arg, ")")
	bad := func() (Step, error) { return Step{}, fmt.Errorf("fifo: bad step %q", s) }
	if hasArg != closed || (hasArg && arg == "") {
		return bad()
	}
	var args []string
	if hasArg {
		args = strings.Split(arg, ",")
	}
	np := positional(k)
	if len(args) < np {
		return bad()
	}
	st := Step{Kind: k}
	num := func(a string) (int, bool) {
		n, err := strconv.Atoi(a)
		return n, err == nil && n >= 0
	}
	switch k {
	case Add, Update, Delete, Know:
		n, ok := num(strings.TrimPrefix(args[0], "k"))
		if !ok || !strings.HasPrefix(args[0], "k") {
			return bad()
		}
		st.Key = n
	case Replace, PopReplace:
		off, ok1 := num(args[0])
		n, ok2 := num(args[1])
		if !ok1 || !ok2 {
			return bad()
		}
		st.Off, st.N = off, n
	case Pops:
		n, ok := num(args[0])
		if !ok {
			return bad()
		}
		st.N = n
	}
	for _, m := range args[np:] {
		objStep := k == Add || k == Update || k == Delete || k == Know
		switch {
		case m == "ns" && (objStep || k == Replace):
			st.NS = true
		case m == "again" && objStep:
			st.Again = true
		case m == "dup" && k == Replace:
			st.Dup = true
		case m == "rev" && k == Replace:
			st.Rev = true
		default:
			fname, at, hasAt := strings.Cut(m, "@")
			f, ok := parseFault(fname)
			if !ok || st.Fault != noFault || !faultFits(k, f) || hasAt != (k == Replace || k == Resync) {
				return bad()
			}
			st.Fault = f
			if hasAt {
				n, ok := num(at)
				if !ok {
					return bad()
				}
				st.At = n
			}
		}
	}
	return st, nil
}

// faultFits reports whether a step of kind k can carry fault f.
func faultFits(k Kind, f Fault) bool {
	switch k {
	case Add, Update:
		return f == faultNoKey || f == faultNoTransform
	case Delete:
		return f == faultNoKey || f == faultNoTransform || knownFault(f)
	case Replace:
		return f == faultNoKey || f == faultNoTransform || knownFault(f)
	case Resync:
		return knownFault(f)
	case PopBatch:
		return f == faultErr || f == faultPanic
	}
	return false
}

// Mode is what a machine's FIFO is made with and what it checks.
type Mode struct {
	Known        bool // the FIFO has known objects (the machine's store)
	EmitReplaced bool // DeltaFIFO
	Transform    bool
	Atomic       bool // RealFIFO
	Unlock       bool // RealFIFO
	Bookmarks    bool // RealFIFO, atomic
	// Pipeline pops through the subject's Process into the store, and
	// checks the store and the notifications against the model.
	Pipeline bool
	// SyncDuring also checks, from inside every process func, that the
	// FIFO has not synced before the pop that ends the initial population
	// has been processed.
	SyncDuring bool
}

// String is the trace notation of a machine's first step.
func (m Mode) String() string {
	var fs []string
	for _, f := range []struct {
		on   bool
		name string
	}{{m.Known, "known"}, {m.EmitReplaced, "emit-replaced"}, {m.Transform, "transform"},
		{m.Atomic, "atomic"}, {m.Unlock, "unlock"}, {m.Bookmarks, "bookmarks"}, {m.Pipeline, "pipeline"}, {m.SyncDuring, "sync-during"}} {
		if f.on {
			fs = append(fs, f.name)
		}
	}
	return "New(" + strings.Join(fs, ",") + ")"
}

// parseMode is the inverse of Mode.String.
func parseMode(s string) (Mode, error) {
	arg, ok := strings.CutPrefix(s, "New(")
	arg, ok2 := strings.CutSuffix(arg, ")")
	if !ok || !ok2 {
		return Mode{}, fmt.Errorf("fifo: trace starts with %q, want New(...)", s)
	}
	var m Mode
	if arg == "" {
		return m, nil
	}
	for _, f := range strings.Split(arg, ",") {
		switch f {
		case "known":
			m.Known = true
		case "emit-replaced":
			m.EmitReplaced = true
		case "transform":
			m.Transform = true
		case "atomic":
			m.Atomic = true
		case "unlock":
			m.Unlock = true
		case "bookmarks":
			m.Bookmarks = true
		case "pipeline":
			m.Pipeline = true
		case "sync-during":
			m.SyncDuring = true
		default:
			return Mode{}, fmt.Errorf("fifo: unknown option %q in %q", f, s)
		}
	}
	return m, nil
}
