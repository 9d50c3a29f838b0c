package linearizability

// The informer FIFO model: porcupine over spec/fifo's DeltaFIFO and
// RealFIFO. A history's calls are Add, Update, Delete, Replace, Resync,
// Pop, Close and HasSynced on one FIFO that has no known objects (a
// DeltaFIFO made without KnownObjects, a RealFIFO in atomic mode), so the
// FIFO is the whole state. Every step calls the spec; nothing of the FIFO
// rules is re-implemented here.
//
// A Pop is one step with its Popped: the pop's process func only records
// what it was given and returns nil, so the pop takes its item, computes
// isInInitialList and counts towards the initial population in one atomic
// step, inside the Pop call. A Pop on an empty FIFO that is not closed is
// not enabled (it blocks): the search must place it after some call that
// queues something, or after Close.
//
// FIFO order ties every key to every other, so the model is not
// partitioned: keep histories small (a few clients, tens of calls) and
// check many of them.

import (
	"cmp"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"os"
	"slices"
	"strings"

	"github.com/anishathalye/porcupine"
	spec "github.com/kverify/kverify/spec/fifo"
)

// FIFOOp is an operation on an informer FIFO.
type FIFOOp string

// The FIFO operations.
const (
	FIFOAdd       FIFOOp = "Add"
	FIFOUpdate    FIFOOp = "Update"
	FIFODelete    FIFOOp = "Delete"
	FIFOReplace   FIFOOp = "Replace"
	FIFOResync    FIFOOp = "Resync"
	FIFOPop       FIFOOp = "Pop"
	FIFOClose     FIFOOp = "Close"
	FIFOHasSynced FIFOOp = "HasSynced"
)

// FIFOConfig is the FIFO a model stands for: client-go's DeltaFIFO, or its
// RealFIFO in atomic mode (Real), with the options that change what is
// queued. Neither has known objects.
type FIFOConfig struct {
	Real bool `json:"real,omitempty"`
	// EmitReplaced makes a DeltaFIFO's Replace queue Replaced, not Sync.
	EmitReplaced bool `json:"emitReplaced,omitempty"`
	// Transform: the FIFO transforms every object it is given once
	// (spec.Obj.Gen+1).
	Transform bool `json:"transform,omitempty"`
}

// String names the FIFO, e.g. "RealFIFO(atomic)+transform".
func (c FIFOConfig) String() string {
	s := "DeltaFIFO"
	if c.Real {
		s = "RealFIFO(atomic)"
	}
	if c.EmitReplaced {
		s += "+emit-replaced"
	}
	if c.Transform {
		s += "+transform"
	}
	return s
}

// FIFOInput is one call: Add, Update and Delete carry Obj (a key and a
// version; Gen 0, the FIFO's transform is the model's business), Replace
// its List and resource version RV.
type FIFOInput struct {
	Op   FIFOOp     `json:"op"`
	Obj  spec.Obj   `json:"obj,omitzero"`
	List []spec.Obj `json:"list,omitempty"`
	RV   string     `json:"rv,omitempty"`
}

// FIFOOutput is what a call returned. A Pop either reports Closed (it
// returned the FIFO's closed error without calling its process func) or
// gives Deltas, the deltas its process func received rendered by
// spec.Deltas, and Initial, the isInInitialList it received. Synced is
// HasSynced's result. Err is anything a correct FIFO would not do: an
// error from Add, Update, Delete, Replace or Resync, a process func's error
// coming back from Pop, a Pop that neither called process nor failed; no
// step accepts a call with an Err.
type FIFOOutput struct {
	Closed  bool   `json:"closed,omitempty"`
	Deltas  string `json:"deltas,omitempty"`
	Initial bool   `json:"initial,omitempty"`
	Synced  bool   `json:"synced,omitempty"`
	Err     string `json:"err,omitempty"`
}

// String renders the call, e.g. `Replace([a@1 b@2], "2")`.
func (i FIFOInput) String() string {
	switch i.Op {
	case FIFOAdd, FIFOUpdate, FIFODelete:
		return fmt.Sprintf("%s(%s)", i.Op, i.Obj)
	case FIFOReplace:
		s := make([]string, len(i.List))
		for j, o := range i.List {
			s[j] = o.String()
		}
		return fmt.Sprintf("Replace([%s], %q)", strings.Join(s, " "), i.RV)
	}
	return string(i.Op) + "()"
}

// DescribeFIFO renders a call and its result, e.g.
// `Pop() -> [Added(a@1) Updated(a@2)] initial=false`.
func DescribeFIFO(in FIFOInput, out FIFOOutput) string {
	s := in.String()
	switch {
	case out.Err != "":
		return s + " -> error: " + out.Err
	case in.Op == FIFOPop && out.Closed:
		return s + " -> closed"
	case in.Op == FIFOPop:
		return fmt.Sprintf("%s -> %s initial=%t", s, out.Deltas, out.Initial)
	case in.Op == FIFOHasSynced:
		return fmt.Sprintf("%s -> %t", s, out.Synced)
	}
	return s
}

// infState is a porcupine state: one of the two spec models, never
// mutated once made, with its canonical key computed once.
type infState struct {
	d   *spec.DeltaFIFO
	r   *spec.RealFIFO
	key string
}

func newInfState(d *spec.DeltaFIFO, r *spec.RealFIFO) infState {
	s := infState{d: d, r: r}
	if d != nil {
		s.key = d.Key()
	} else {
		s.key = r.Key()
	}
	return s
}

func (s infState) clone() (*spec.DeltaFIFO, *spec.RealFIFO) {
	if s.d != nil {
		return s.d.Clone(), nil
	}
	return nil, s.r.Clone()
}

func (s infState) empty() bool {
	if s.d != nil {
		return s.d.Len() == 0
	}
	return s.r.Len() == 0
}

func (s infState) closed() bool {
	if s.d != nil {
		return s.d.Closed()
	}
	return s.r.Closed()
}

func (s infState) synced() bool {
	if s.d != nil {
		return s.d.Synced()
	}
	return s.r.Synced()
}

// infStep is the model's step: the call is enabled in the spec state and
// returns what the spec returns.
func infStep(st, in, out any) (bool, any) {
	s, i, o := st.(infState), in.(FIFOInput), out.(FIFOOutput)
	if o.Err != "" {
		return false, st
	}
	switch i.Op {
	case FIFOHasSynced:
		return o.Synced == s.synced(), st
	case FIFOPop:
		if s.empty() {
			// Blocked while open; "closed" once closed and drained.
			return s.closed() && o.Closed, st
		}
		if o.Closed {
			return false, st
		}
	}
	d, r := s.clone()
	switch i.Op {
	case FIFOAdd:
		if d != nil {
			d.Add(i.Obj)
		} else {
			r.Add(i.Obj)
		}
	case FIFOUpdate:
		if d != nil {
			d.Update(i.Obj)
		} else {
			r.Update(i.Obj)
		}
	case FIFODelete:
		if d != nil {
			d.Delete(i.Obj, nil)
		} else {
			r.Delete(i.Obj)
		}
	case FIFOReplace:
		if d != nil {
			d.Replace(i.List, nil)
		} else {
			r.Replace(i.List, i.RV, nil)
		}
	case FIFOResync:
		if d != nil {
			d.Resync(nil)
		} else {
			r.Resync(nil)
		}
	case FIFOClose:
		if d != nil {
			d.Close()
		} else {
			r.Close()
		}
	case FIFOPop:
		var ds []spec.Delta
		var initial bool
		if d != nil {
			ds, initial, _ = d.Pop()
			d.Popped()
		} else {
			var one spec.Delta
			one, initial, _ = r.Pop()
			r.Popped(1)
			ds = []spec.Delta{one}
		}
		if spec.Deltas(ds) != o.Deltas || initial != o.Initial {
			return false, st
		}
	default:
		return false, st // not an operation of this model
	}
	return true, newInfState(d, r)
}

// FIFOModel is the informer FIFO of c as a porcupine model over spec/fifo:
// the state is a spec DeltaFIFO or RealFIFO, two states are equal when
// their Keys are, and a call is legal when the spec enables it and returns
// the same result. It is not partitioned.
func FIFOModel(c FIFOConfig) porcupine.Model {
	return porcupine.Model{
		Init: func() any {
			if c.Real {
				return newInfState(nil, spec.NewRealFIFO(true, c.Transform, false))
			}
			return newInfState(spec.NewDeltaFIFO(c.EmitReplaced, c.Transform), nil)
		},
		Step:  infStep,
		Equal: func(a, b any) bool { return a.(infState).key == b.(infState).key },
		Hash: func(st any) uint64 {
			h := fnv.New64a()
			h.Write([]byte(st.(infState).key))
			return h.Sum64()
		},
		DescribeOperation: func(in, out any) string { return DescribeFIFO(in.(FIFOInput), out.(FIFOOutput)) },
		DescribeState:     func(st any) string { return describeInfState(st.(infState)) },
	}
}

func describeInfState(s infState) string {
	var b strings.Builder
	if s.d != nil {
		b.WriteString("queue:")
		for _, k := range s.d.Keys() {
			fmt.Fprintf(&b, " %s%s", k, spec.Deltas(s.d.Queued(k)))
		}
	} else {
		b.WriteString("queue: " + spec.Deltas(s.r.Items()))
	}
	if s.synced() {
		b.WriteString("; synced")
	} else {
		b.WriteString("; not synced")
	}
	if s.closed() {
		b.WriteString("; closed")
	}
	return b.String()
}

// DescribeFIFOHistory lists a history one call a line, by call time:
// `[3,8] client 1: Pop() -> [Added(a@1)] initial=false`.
func DescribeFIFOHistory(history []porcupine.Operation) string {
	h := slices.Clone(history)
	slices.SortStableFunc(h, func(a, b porcupine.Operation) int { return cmp.Compare(a.Call, b.Call) })
	var b strings.Builder
	for _, op := range h {
		in, _ := op.Input.(FIFOInput)
		out, _ := op.Output.(FIFOOutput)
		fmt.Fprintf(&b, "[%d,%d] client %d: %s\n", op.Call, op.Return, op.ClientId, DescribeFIFO(in, out))
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// FIFORecorder records a concurrent history of FIFO calls with an atomic
// logical clock, read just before a call and just after it returns, like
// Recorder. It is safe for concurrent use; its zero value is ready.
type FIFORecorder struct {
	callLog[FIFOInput, FIFOOutput]

	// Observe, if set before the first call, is called after every
	// recorded call returns (from the caller's goroutine): a heartbeat
	// for a watchdog.
	Observe func(porcupine.Operation)
}

// Record runs call on behalf of client and records it with input in.
func (r *FIFORecorder) Record(client int, in FIFOInput, call func() FIFOOutput) FIFOOutput {
	return r.record(client, in, call, r.Observe)
}

// InFlight describes the calls that have started and not returned, one
// per client, in client order: "client 2: Pop()".
func (r *FIFORecorder) InFlight() []string { return r.inFlight() }

// History returns a copy of the calls recorded so far, by call time.
func (r *FIFORecorder) History() []porcupine.Operation { return r.history() }

// FIFOHistoryFile is a FIFO history on disk, as JSON.
type FIFOHistoryFile struct {
	// Note says what the history shows; for people only.
	Note string `json:"note,omitempty"`
	// Config is the FIFO the history was taken from: the model to check
	// it against.
	Config FIFOConfig `json:"config"`
	// Expect, if set, is the result the history must keep ("Ok" or
	// "Illegal").
	Expect porcupine.CheckResult `json:"expect,omitempty"`
	Ops    []FIFORecord          `json:"ops"`
}

// FIFORecord is one call of a FIFOHistoryFile.
type FIFORecord struct {
	Client int        `json:"client"`
	Call   int64      `json:"call"`
	Return int64      `json:"return"`
	In     FIFOInput  `json:"in"`
	Out    FIFOOutput `json:"out,omitzero"`
}

// SaveFIFOFailure writes dir/name.json, the history and its config in the
// format LoadFIFOHistory reads, and, when info holds a search (Check's info
// for an Illegal history), dir/name.html, porcupine's visualisation. It
// returns the paths written; htmlPath is empty when there was nothing to
// draw. dir is created if needed.
func SaveFIFOFailure(dir, name string, c FIFOConfig, history []porcupine.Operation, info porcupine.LinearizationInfo) (htmlPath, jsonPath string, err error) {
	f := FIFOHistoryFile{Config: c, Ops: make([]FIFORecord, len(history))}
	for i, op := range history {
		in, _ := op.Input.(FIFOInput)
		out, _ := op.Output.(FIFOOutput)
		f.Ops[i] = FIFORecord{Client: op.ClientId, Call: op.Call, Return: op.Return, In: in, Out: out}
	}
	return saveFailure(dir, name, func(path string) error { return writeFIFOHistory(path, &f) }, FIFOModel(c), info)
}

// writeFIFOHistory writes f as JSON, one call a line.
func writeFIFOHistory(path string, f *FIFOHistoryFile) error {
	return writeHistoryJSON(path, FIFOHistoryFile{Note: f.Note, Config: f.Config, Expect: f.Expect}, f.Ops)
}

// LoadFIFOHistory reads a history saved by SaveFIFOFailure, ready for
// Check with FIFOModel(file.Config).
func LoadFIFOHistory(path string) (*FIFOHistoryFile, []porcupine.Operation, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	var f FIFOHistoryFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	h := make([]porcupine.Operation, len(f.Ops))
	for i, r := range f.Ops {
		if r.Return < r.Call {
			return nil, nil, fmt.Errorf("%s: op %d (%s) returns at %d before its call at %d", path, i, r.In, r.Return, r.Call)
		}
		h[i] = porcupine.Operation{ClientId: r.Client, Call: r.Call, Return: r.Return, Input: r.In, Output: r.Out}
	}
	return &f, h, nil
}
