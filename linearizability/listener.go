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
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

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

// ListenerError is a listener history that breaks the contract.
type ListenerError struct {
	Listener int
	// Result is Illegal, or Unknown when the check timed out; Ok when the
	// history is linearizable but was required to be drained and is not.
	Result porcupine.CheckResult
	// Info is porcupine's search for an Illegal result (for
	// SaveListenerFailure); empty otherwise.
	Info porcupine.LinearizationInfo
	// Ops is the listener's part of the history.
	Ops    []porcupine.Operation
	Detail string
}

func (e *ListenerError) Error() string {
	return fmt.Sprintf("listener %d: %s (%d ops): %s", e.Listener, e.Result, len(e.Ops), e.Detail)
}

// CheckListener checks each listener's part of history on its own against
// the delivery contract: every Deliver is the oldest value added and not
// yet delivered, for some order of the calls inside their intervals, so no
// value is delivered twice, out of add order, or without being added. It
// returns nil, or a *ListenerError for the first listener that fails. A
// history cut short (values added and never delivered) can pass: see
// CheckListenerDrained. timeout bounds each listener's search (zero: no
// limit); running out of it is an error too.
func CheckListener(history []porcupine.Operation, timeout time.Duration) error {
	m := ListenerModel()
	m.Partition = nil // one listener at a time, to name the one that fails
	for _, ops := range partitionByListener(StampListener(history)) {
		l := ops[0].Input.(ListenerInput).Listener
		res, info := Check(m, ops, timeout)
		switch res {
		case porcupine.Ok:
			continue
		case porcupine.Illegal:
			return &ListenerError{Listener: l, Result: res, Info: info, Ops: ops, Detail: diagnoseListener(ops)}
		default:
			return &ListenerError{Listener: l, Result: res, Ops: ops, Detail: fmt.Sprintf("no verdict within %v", timeout)}
		}
	}
	return nil
}

// CheckListenerDrained is CheckListener for a history recorded until every
// handler had caught up: besides, every value added to a listener must
// have been delivered to it (exactly once, with CheckListener's at most
// once).
func CheckListenerDrained(history []porcupine.Operation, timeout time.Duration) error {
	if err := CheckListener(history, timeout); err != nil {
		return err
	}
	for _, ops := range partitionByListener(history) {
		added := map[string]bool{}
		for _, op := range ops {
			if in := op.Input.(ListenerInput); in.Op == ListenerAdd {
				added[in.Value] = true
			}
		}
		for _, op := range ops {
			if op.Input.(ListenerInput).Op == ListenerDeliver {
				delete(added, op.Output.(ListenerOutput).Value)
			}
		}
		if len(added) > 0 {
			l := ops[0].Input.(ListenerInput).Listener
			lost := make([]string, 0, len(added))
			for v := range added {
				lost = append(lost, v)
			}
			sort.Strings(lost)
			if len(lost) > 5 {
				lost = append(lost[:5], "...")
			}
			return &ListenerError{Listener: l, Result: porcupine.Ok, Ops: ops,
				Detail: fmt.Sprintf("%d added values never delivered: %v", len(added), lost)}
		}
	}
	return nil
}

// diagnoseListener says in words what is wrong with an Illegal listener
// history, where a simple scan can tell.
func diagnoseListener(ops []porcupine.Operation) string {
	added := map[string]porcupine.Operation{}
	seen := map[string]bool{}
	var dels []porcupine.Operation
	for _, op := range ops {
		if in := op.Input.(ListenerInput); in.Op == ListenerAdd {
			added[in.Value] = op
		} else {
			dels = append(dels, op)
		}
	}
	sort.Slice(dels, func(i, j int) bool { return dels[i].Return < dels[j].Return })
	for i, d := range dels {
		v := d.Output.(ListenerOutput).Value
		a, ok := added[v]
		switch {
		case !ok:
			return fmt.Sprintf("delivery %d: %q was never added", i, v)
		case seen[v]:
			return fmt.Sprintf("delivery %d: %q delivered twice", i, v)
		case a.Call > d.Return:
			return fmt.Sprintf("delivery %d: %q delivered before it was added", i, v)
		}
		seen[v] = true
		// An earlier Add that returned before v's Add was called and that
		// is not delivered yet: v overtook it.
		for w, b := range added {
			if !seen[w] && b.Return < a.Call {
				return fmt.Sprintf("delivery %d: %q overtook %q, added strictly before it", i, v, w)
			}
		}
	}
	return "no linearization (see the visualisation)"
}

// listenerRecord is one operation of a saved listener history.
type listenerRecord struct {
	Client   int    `json:"client"`
	Call     int64  `json:"call"`
	Return   int64  `json:"return"`
	Listener int    `json:"listener"`
	Op       string `json:"op"` // Add or Deliver
	Value    string `json:"value"`
}

// SaveListenerFailure writes dir/name.json, the listener history as JSON
// (one operation a line), and, when info holds a search (a ListenerError's
// Info), dir/name.html, porcupine's visualisation. It returns the paths
// written.
func SaveListenerFailure(dir, name string, history []porcupine.Operation, info porcupine.LinearizationInfo) (htmlPath, jsonPath string, err error) {
	rs := make([]listenerRecord, len(history))
	for i, op := range history {
		in, out := op.Input.(ListenerInput), op.Output.(ListenerOutput)
		v := in.Value
		if in.Op == ListenerDeliver {
			v = out.Value
		}
		rs[i] = listenerRecord{Client: op.ClientId, Call: op.Call, Return: op.Return,
			Listener: in.Listener, Op: in.Op.String(), Value: v}
	}
	write := func(path string) error {
		return writeJSONLines(path, `{"model": "listener", "ops": [`, "\n  ", "\n]}\n", rs)
	}
	m := ListenerModel()
	m.Partition = nil // info comes from CheckListener's unpartitioned search
	return saveFailure(dir, name, write, m, info)
}

// FanOut is what the listener workload drives: a processor with handlers
// registered before it runs. Values are strings; an adapter maps them to
// its implementation's notifications (of any kind) and back.
type FanOut interface {
	// AddHandler registers a handler that receives each value through
	// deliver; only before Run.
	AddHandler(deliver func(v string))
	// Distribute hands v to every handler's listener, without waiting for
	// any handler. It is called from several goroutines at once, while
	// Run runs.
	Distribute(v string)
	// Run runs the fan-out until ctx is done, then stops it and returns
	// once every goroutine it started has exited.
	Run(ctx context.Context)
}

// ListenerWorkload describes a listener scenario. Zero fields take
// defaults.
type ListenerWorkload struct {
	// Seed makes every goroutine's choices (not the scheduling)
	// repeatable; print it with a failure.
	Seed uint64
	// Listeners is the number of handlers; default 1 + Seed%3.
	Listeners int
	// Distributors is the number of goroutines calling Distribute;
	// default 4.
	Distributors int
	// Adds is the number of Distribute calls each makes; default 50.
	Adds int
	// Drain bounds the wait for the handlers to catch up; default 10 s.
	Drain time.Duration
}

func (w ListenerWorkload) withDefaults() ListenerWorkload {
	if w.Listeners <= 0 {
		w.Listeners = 1 + int(w.Seed%3)
	}
	if w.Distributors <= 0 {
		w.Distributors = 4
	}
	if w.Adds <= 0 {
		w.Adds = 50
	}
	if w.Drain <= 0 {
		w.Drain = 10 * time.Second
	}
	return w
}

// recordingHandler records each call as a Deliver of the listener's
// history, then dawdles for a while of its seeded choosing, so backlogs
// build up and drain.
type recordingHandler struct {
	rec      *Recorder
	listener int
	client   int
	lastEnd  atomic.Int64 // when the previous call returned
	calls    atomic.Int64
	rngMu    sync.Mutex // a correct fan-out calls serially; a broken one may not
	rng      *rand.Rand
}

func (h *recordingHandler) deliver(v string) {
	call := h.lastEnd.Load() // before ret: Call < Return even if calls overlap
	ret := h.rec.clk.Add(1)
	h.rec.appendOp(porcupine.Operation{ClientId: h.client, Call: call, Return: ret,
		Input: ListenerInput{Listener: h.listener, Op: ListenerDeliver}, Output: ListenerOutput{Value: v}})
	h.calls.Add(1)
	h.rngMu.Lock()
	r := h.rng.IntN(100)
	h.rngMu.Unlock()
	switch {
	case r < 5:
		time.Sleep(200 * time.Microsecond) // a stall: a backlog builds
	case r < 40:
		runtime.Gosched()
	}
	h.lastEnd.Store(h.rec.clk.Add(1))
}

// appendOp records an operation whose timestamps the caller took.
func (r *Recorder) appendOp(op porcupine.Operation) {
	r.mu.Lock()
	r.ops = append(r.ops, op)
	r.mu.Unlock()
}

// RunListenerWorkload registers cfg.Listeners recording handlers with f,
// runs it, and has cfg.Distributors goroutines each call Distribute
// cfg.Adds times at once (values "d<distributor>.<n>"), each
// call recorded as an Add on every listener (client id = distributor). The
// handlers record every call as a Deliver (client id = Distributors +
// listener) and now and then stall, so the listeners buffer. Once the
// distributors are done it waits (up to cfg.Drain) for every handler to
// have been called once per Add, then stops f and returns the history,
// ready for CheckListenerDrained. It joins every goroutine it started.
func RunListenerWorkload(f FanOut, cfg ListenerWorkload) []porcupine.Operation {
	cfg = cfg.withDefaults()
	rec := &Recorder{}
	hs := make([]*recordingHandler, cfg.Listeners)
	for i := range hs {
		hs[i] = &recordingHandler{rec: rec, listener: i, client: cfg.Distributors + i,
			rng: rand.New(rand.NewPCG(cfg.Seed, uint64(cfg.Distributors+i)))}
		hs[i].lastEnd.Store(rec.clk.Add(1)) // before Run: the first delivery is later
		f.AddHandler(hs[i].deliver)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	runDone := make(chan struct{})
	go func() {
		defer close(runDone)
		f.Run(ctx)
	}()

	var wg sync.WaitGroup
	for d := range cfg.Distributors {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(cfg.Seed, uint64(d)))
			for n := range cfg.Adds {
				v := fmt.Sprintf("d%d.%d", d, n)
				start := rec.clk.Add(1)
				f.Distribute(v)
				end := rec.clk.Add(1)
				for l := range cfg.Listeners {
					rec.appendOp(porcupine.Operation{ClientId: d, Call: start, Return: end,
						Input: ListenerInput{Listener: l, Op: ListenerAdd, Value: v}, Output: ListenerOutput{}})
				}
				if rng.IntN(8) == 0 {
					runtime.Gosched()
				}
			}
		})
	}
	wg.Wait()

	want := int64(cfg.Distributors * cfg.Adds)
	deadline := time.Now().Add(cfg.Drain)
	for time.Now().Before(deadline) {
		caught := true
		for _, h := range hs {
			if h.calls.Load() < want {
				caught = false
				break
			}
		}
		if caught {
			break
		}
		time.Sleep(100 * time.Microsecond)
	}
	cancel()
	<-runDone
	return rec.History()
}
