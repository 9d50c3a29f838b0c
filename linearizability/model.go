// Package linearizability checks concurrent histories of a work queue
// against the reference model in spec/workqueue with porcupine.
//
// A workload (RunWorkload) drives a queue from several goroutines and
// records every call with a logical clock (Recorder); CheckSteps asks
// porcupine whether some sequential order of the calls, each placed inside
// its [Call, Return] interval, is a run of the model, within a budget of
// model steps (never of time: see budget.go). Two models are offered:
//
//   - QueueModel is the whole queue: one FIFO, dirty and processing sets,
//     shutdown. It cannot be partitioned (FIFO order ties the keys
//     together), so histories must stay small: many short scenarios.
//   - PerKeyModel checks each key on its own and ignores order across
//     keys. It is partitioned by key, so it takes long histories. It is
//     weaker, but sound: a violation it finds is a real violation.
//
// Both models call the spec's Model; neither re-implements the queue.
package linearizability

import (
	"fmt"
	"hash/fnv"
	"sort"

	"github.com/anishathalye/porcupine"
	wq "github.com/kverify/kverify/spec/workqueue"
)

// Input is one call on the queue: an operation of the spec (Add, Get,
// Done, Len or ShutDown) and, for Add and Done, its key.
//
// ShutDownWithDrain and ShuttingDown are not supported: the workload does
// not issue them, and a drain's effect begins at its call, which a
// porcupine step (one linearization point) cannot express. Step rejects
// them.
type Input struct {
	Op  wq.Kind
	Key string
}

// Output is what a call returned: Key and Shutdown for Get, N for Len.
// Other operations return nothing.
type Output struct {
	Key      string
	Shutdown bool
	N        int
}

func (i Input) String() string { return wq.Op{Kind: i.Op, Key: i.Key}.String() }

// describe renders a call and its result, e.g. `Get() -> "a"`.
func describe(in Input, out Output) string {
	switch in.Op {
	case wq.Get:
		if out.Shutdown && out.Key != "" {
			// An item and shutdown at once: no queue may do it (the
			// caller drops the item without Done), but one did.
			return fmt.Sprintf("Get() -> %q, shutdown", out.Key)
		}
		if out.Shutdown {
			return "Get() -> shutdown"
		}
		return fmt.Sprintf("Get() -> %q", out.Key)
	case wq.Len:
		return fmt.Sprintf("Len() -> %d", out.N)
	}
	return in.String()
}

// state is a porcupine state: a spec Model with its canonical key computed
// once, so that Equal and Hash do not re-encode it.
type state struct {
	m   wq.Model
	key string
}

func newState(m wq.Model) state { return state{m: m, key: m.Key()} }

// step is the porcupine step of both models: the call must be enabled in
// the spec state (a Get that would block cannot take effect here; the
// checker tries later points) and its result must be the spec's.
func step(st, in, out any) (bool, any) {
	s, i, o := st.(state), in.(Input), out.(Output)
	switch i.Op {
	case wq.Add, wq.Get, wq.Done, wq.Len, wq.ShutDown:
	default:
		return false, st // unsupported; see Input
	}
	op := wq.Op{Kind: i.Op, Key: i.Key}
	if !s.m.Enabled(op) {
		return false, st
	}
	next, want := s.m.Step(op)
	switch i.Op {
	case wq.Get:
		if want.Key != o.Key || want.Shutdown != o.Shutdown {
			return false, st
		}
	case wq.Len:
		if want.N != o.N {
			return false, st
		}
	}
	return true, newState(next)
}

func equal(a, b any) bool { return a.(state).key == b.(state).key }

func hash(st any) uint64 {
	h := fnv.New64a()
	h.Write([]byte(st.(state).key))
	return h.Sum64()
}

// QueueModel is the whole work queue of spec/workqueue as a porcupine
// model: the state is a spec Model, two states are equal when their Key()s
// are, and a call is legal when the spec enables it and returns the same
// result. It is not partitioned.
func QueueModel() porcupine.Model { return QueueModelFor(wq.ClientGo) }

// QueueModelFor is QueueModel under the semantics profile p declares.
func QueueModelFor(p wq.Profile) porcupine.Model {
	if p.AddHandedOver {
		return handedOverModel()
	}
	return porcupine.Model{
		Init:              func() any { return newState(wq.New(p)) },
		Step:              step,
		Equal:             equal,
		Hash:              hash,
		DescribeOperation: func(in, out any) string { return describe(in.(Input), out.(Output)) },
		DescribeState:     func(st any) string { return st.(state).m.String() },
	}
}

// PerKeyModel checks every key on its own. The history is partitioned by
// key: a partition holds the Add, Done and item-returning Get calls of one
// key, plus a copy of every call that is about the whole queue and still
// says something about each key:
//
//   - ShutDown (shutdown is global: each partition sees it);
//   - Get returning shutdown (legal only when shut down and this key is not
//     queued);
//   - Len returning 0 (this key is not queued). Len returning n > 0 says
//     nothing about one key and is left out.
//
// Each partition runs the spec Model on its own calls. A spec Model that
// only ever sees one key has exactly the per-key states clean, dirty
// (queued), processing and processing+dirty, each with or without shutdown;
// its FIFO holds at most that key, so order across keys is ignored. The
// projection of a linearization of the whole history onto one key is a
// linearization of that partition, so an Illegal partition is a real
// violation; an Ok result says nothing about order across keys.
func PerKeyModel() porcupine.Model { return PerKeyModelFor(wq.ClientGo) }

// PerKeyModelFor is PerKeyModel under the semantics profile p declares.
func PerKeyModelFor(p wq.Profile) porcupine.Model {
	m := QueueModelFor(p)
	m.Partition = partitionByKey
	if !p.AddHandedOver {
		m.DescribeState = describePerKey
	}
	return m
}

func partitionByKey(history []porcupine.Operation) [][]porcupine.Operation {
	byKey := map[string][]porcupine.Operation{}
	var global []porcupine.Operation
	for _, op := range history {
		in, out := op.Input.(Input), op.Output.(Output)
		switch {
		case in.Op == wq.Add || in.Op == wq.Done:
			byKey[in.Key] = append(byKey[in.Key], op)
		case in.Op == wq.Get && !out.Shutdown:
			byKey[out.Key] = append(byKey[out.Key], op)
		case in.Op == wq.Len && out.N > 0:
			// nothing to say about any single key
		default: // ShutDown, Get -> shutdown, Len -> 0, unsupported ops
			global = append(global, op)
		}
	}
	if len(byKey) == 0 {
		if len(global) == 0 {
			return nil
		}
		return [][]porcupine.Operation{global}
	}
	keys := make([]string, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([][]porcupine.Operation, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, append(byKey[k], global...)) // porcupine sorts by time
	}
	return parts
}

// describePerKey names the per-key state of a partition's spec Model.
func describePerKey(st any) string {
	m := st.(state).m
	var key, s string
	switch q := m.Queue(); {
	case len(q) > 0:
		key, s = q[0], "dirty"
	case len(m.ProcessingKeys()) > 0:
		key = m.ProcessingKeys()[0]
		s = "processing"
		if m.Dirty(key) {
			s = "processing+dirty"
		}
	default:
		s = "clean"
	}
	if key != "" {
		s = key + ": " + s
	}
	if m.IsShuttingDown() {
		s += ", shut down"
	}
	return s
}

// Describe renders one recorded call and its result, e.g. `Get() -> "a"`.
func Describe(op porcupine.Operation) string {
	in, ok1 := op.Input.(Input)
	out, ok2 := op.Output.(Output)
	if !ok1 || !ok2 {
		return fmt.Sprintf("%v -> %v", op.Input, op.Output)
	}
	return describe(in, out)
}
