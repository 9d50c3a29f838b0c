package linearizability

// The listener model: one informer listener relays the notifications a
// distributor hands it to one handler, exactly once each, in the order it
// was handed them (spec/informer.Delivery). A history has two operations
// per listener:
//
//   - Add(v): a Distribute call that handed v to the listener. Its
//     interval is the Distribute call's; the listener takes v (the pump's
//     receive) inside it.
//   - Deliver() -> v: the handler goroutine taking v. Its interval starts
//     when the handler's previous call returned (or before the fan-out
//     ran, for the first) and ends when the handler is called with v: the
//     pump hands v over in between.
//
// The history is partitioned by listener: listeners are independent, and
// each partition is checked on its own. CheckListener uses ListenerModel,
// which keeps the outstanding values as a set with their Add intervals (a
// FIFO state makes porcupine's search exponential in the concurrent Adds);
// ListenerFIFOModel is spec/informer's Delivery step for step, and the
// tests hold the two to the same verdicts.

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"slices"
	"sort"
	"strings"

	"github.com/anishathalye/porcupine"
	sinf "github.com/kverify/kverify/spec/informer"
)

// ListenerOp is an operation on a listener.
type ListenerOp uint8

// Listener operations.
const (
	// ListenerAdd: a distributor handed the listener a notification.
	ListenerAdd ListenerOp = iota
	// ListenerDeliver: the listener's handler was called with one.
	ListenerDeliver
)

func (o ListenerOp) String() string {
	switch o {
	case ListenerAdd:
		return "Add"
	case ListenerDeliver:
		return "Deliver"
	}
	return fmt.Sprintf("ListenerOp(%d)", o)
}

// ListenerInput is one operation: which listener, Add or Deliver, and for
// Add the value handed over and, for ListenerModel, the Add's own interval
// (StampListener copies it from the operation).
type ListenerInput struct {
	Listener int
	Op       ListenerOp
	Value    string

	AddCall, AddReturn int64
}

// ListenerOutput is Deliver's result: the value the handler received.
type ListenerOutput struct {
	Value string
}

func describeListenerOp(in ListenerInput, out ListenerOutput) string {
	if in.Op == ListenerDeliver {
		return fmt.Sprintf("L%d.Deliver() -> %q", in.Listener, out.Value)
	}
	return fmt.Sprintf("L%d.Add(%q)", in.Listener, in.Value)
}

// listenerState is the state of ListenerModel: the values added and not
// yet delivered, each with its Add's interval, ordered by the Add's call
// (then value); key is the values, in that order.
type listenerState struct {
	out []pendingAdd
	key string
}

type pendingAdd struct {
	v         string
	call, ret int64
}

func newListenerState(out []pendingAdd) listenerState {
	var b strings.Builder
	for _, p := range out {
		b.WriteString(p.v)
		b.WriteByte(0)
	}
	return listenerState{out: out, key: b.String()}
}

// listenerStep: an Add is always legal and makes its value outstanding. A
// Deliver of v is legal when v is outstanding and no outstanding value was
// added strictly before v (its Add returned before v's Add was called):
// then, and only then, some order of the Adds so far, consistent with real
// time, puts v at the head of the FIFO. See ListenerModel.
func listenerStep(st, in, out any) (bool, any) {
	s, i, o := st.(listenerState), in.(ListenerInput), out.(ListenerOutput)
	switch i.Op {
	case ListenerAdd:
		p := pendingAdd{v: i.Value, call: i.AddCall, ret: i.AddReturn}
		at, _ := slices.BinarySearchFunc(s.out, p, func(a, b pendingAdd) int {
			return cmp.Or(cmp.Compare(a.call, b.call), cmp.Compare(a.v, b.v))
		})
		return true, newListenerState(slices.Insert(slices.Clone(s.out), at, p))
	case ListenerDeliver:
		at := slices.IndexFunc(s.out, func(p pendingAdd) bool { return p.v == o.Value })
		if at < 0 {
			return false, st
		}
		for _, w := range s.out {
			if w.ret < s.out[at].call {
				return false, st // w must come out first
			}
		}
		return true, newListenerState(slices.Delete(slices.Clone(s.out), at, at+1))
	}
	return false, st
}

// ListenerModel is one listener's delivery contract, spec/informer's
// Delivery (every value delivered at most once, in add order), as a
// porcupine model partitioned by listener: a history may hold several
// listeners' operations, and values must be unique per listener.
//
// A FIFO state (ListenerFIFOModel) makes porcupine commit to an order of
// concurrent Adds long before a delivery can refute it: with a few
// distributors and a stalled handler the search is exponential. This
// model keeps the outstanding values as a set instead, each with its
// Add's interval (ListenerInput.AddCall and AddReturn, which CheckListener
// fills in), and lets a Deliver take any outstanding value that no
// outstanding value precedes in real time. It accepts exactly the
// histories ListenerFIFOModel accepts: a delivery order is a FIFO order
// of some real-time-consistent linearization of the Adds iff no value is
// delivered while one added strictly before it is outstanding (for a FIFO
// of unique values, the "VOrd" condition of Henzinger et al., CONCUR
// 2013). TestListenerModelsAgree checks this on random histories.
func ListenerModel() porcupine.Model {
	return porcupine.Model{
		Partition: func(h []porcupine.Operation) [][]porcupine.Operation { return partitionByListener(h) },
		Init:      func() any { return newListenerState(nil) },
		Step:      listenerStep,
		Equal:     func(a, b any) bool { return a.(listenerState).key == b.(listenerState).key },
		Hash: func(st any) uint64 {
			h := fnv.New64a()
			h.Write([]byte(st.(listenerState).key))
			return h.Sum64()
		},
		DescribeOperation: func(in, out any) string {
			return describeListenerOp(in.(ListenerInput), out.(ListenerOutput))
		},
		DescribeState: func(st any) string {
			vs := make([]string, len(st.(listenerState).out))
			for i, p := range st.(listenerState).out {
				vs[i] = p.v
			}
			return fmt.Sprintf("outstanding %q", vs)
		},
	}
}

// fifoState is the state of ListenerFIFOModel: a spec Delivery with its
// canonical key (the outstanding values, in order) computed once.
type fifoState struct {
	d   sinf.Delivery
	key string
}

func newFIFOState(d sinf.Delivery) fifoState {
	var b strings.Builder
	for q := d; ; q = q.Deliver() {
		v, ok := q.Expect()
		if !ok {
			break
		}
		b.WriteString(v)
		b.WriteByte(0)
	}
	return fifoState{d: d, key: b.String()}
}

// ListenerFIFOModel is the same contract with spec/informer's Delivery as
// the state, step for step: an Add appends, a Deliver must return what
// Delivery expects next. It is the definition ListenerModel is checked
// against; use it on short histories only (see ListenerModel).
func ListenerFIFOModel() porcupine.Model {
	return porcupine.Model{
		Partition: func(h []porcupine.Operation) [][]porcupine.Operation { return partitionByListener(h) },
		Init:      func() any { return newFIFOState(sinf.Delivery{}) },
		Step: func(st, in, out any) (bool, any) {
			s, i, o := st.(fifoState), in.(ListenerInput), out.(ListenerOutput)
			switch i.Op {
			case ListenerAdd:
				return true, newFIFOState(s.d.Add(i.Value))
			case ListenerDeliver:
				if want, ok := s.d.Expect(); !ok || want != o.Value {
					return false, st
				}
				return true, newFIFOState(s.d.Deliver())
			}
			return false, st
		},
		Equal: func(a, b any) bool { return a.(fifoState).key == b.(fifoState).key },
		Hash: func(st any) uint64 {
			h := fnv.New64a()
			h.Write([]byte(st.(fifoState).key))
			return h.Sum64()
		},
		DescribeOperation: func(in, out any) string {
			return describeListenerOp(in.(ListenerInput), out.(ListenerOutput))
		},
		DescribeState: func(st any) string {
			vs := strings.Split(st.(fifoState).key, "\x00")
			return fmt.Sprintf("outstanding %q", vs[:len(vs)-1])
		},
	}
}

// StampListener returns a copy of history whose Add inputs carry their
// operation's interval, as ListenerModel needs.
func StampListener(history []porcupine.Operation) []porcupine.Operation {
	h := slices.Clone(history)
	for i, op := range h {
		if in := op.Input.(ListenerInput); in.Op == ListenerAdd {
			in.AddCall, in.AddReturn = op.Call, op.Return
			h[i].Input = in
		}
	}
	return h
}

func partitionByListener(h []porcupine.Operation) [][]porcupine.Operation {
	by := map[int][]porcupine.Operation{}
	for _, op := range h {
		l := op.Input.(ListenerInput).Listener
		by[l] = append(by[l], op)
	}
	ids := make([]int, 0, len(by))
	for id := range by {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	parts := make([][]porcupine.Operation, len(ids))
	for i, id := range ids {
		parts[i] = by[id]
	}
	return parts
}
