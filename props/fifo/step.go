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
)

var kindNames = [...]string{"Add", "Update", "Delete", "Replace", "Resync", "Pop", "PopErr", "PopPanic", "Pops", "PopBatch", "Bookmark", "Close", "Know"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", k)
}

// Step is one operation. Add, Update and Delete carry an object of key
// "k<Key>"; Replace lists keys k<Off> .. k<Off+N-1>; Pops pops up to N.
// Every object a step makes gets a fresh resource version: the number of
// objects made before it, plus one.
type Step struct {
	Kind   Kind
	Key    int
	Off, N int
}

// String is the trace notation: "Add(k3)", "Replace(2,100)", "Pops(40)",
// "Pop", "Close", ...
func (s Step) String() string {
	switch s.Kind {
	case Add, Update, Delete, Know:
		return fmt.Sprintf("%s(k%d)", s.Kind, s.Key)
	case Replace:
		return fmt.Sprintf("Replace(%d,%d)", s.Off, s.N)
	case Pops:
		return fmt.Sprintf("Pops(%d)", s.N)
	}
	return s.Kind.String()
}

// GoString is String, for rapid's logs.
func (s Step) GoString() string { return s.String() }

// ParseStep is the inverse of Step.String.
func ParseStep(s string) (Step, error) {
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
	switch k {
	case Add, Update, Delete, Know:
		n, err := strconv.Atoi(strings.TrimPrefix(arg, "k"))
		if !hasArg || !closed || err != nil || n < 0 {
			return bad()
		}
		return Step{Kind: k, Key: n}, nil
	case Replace:
		a, b, ok := strings.Cut(arg, ",")
		off, err1 := strconv.Atoi(a)
		n, err2 := strconv.Atoi(b)
		if !hasArg || !closed || !ok || err1 != nil || err2 != nil || off < 0 || n < 0 {
			return bad()
		}
		return Step{Kind: k, Off: off, N: n}, nil
	case Pops:
		n, err := strconv.Atoi(arg)
		if !hasArg || !closed || err != nil || n < 0 {
			return bad()
		}
		return Step{Kind: k, N: n}, nil
	}
	if hasArg {
		return bad()
	}
	return Step{Kind: k}, nil
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
