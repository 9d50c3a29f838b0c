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
	"errors"
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

// ListenerError is a listener history that breaks the contract, or whose
// search was inconclusive.
type ListenerError struct {
	Listener int
	// Result is Illegal; or Unknown when the search ran out of its step
	// budget before finding a linearization or showing there is none
	// (Inconclusive: not a verdict on the subject); or Ok when the history
	// was required to be drained and is not (whatever its search found).
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

// Inconclusive reports whether e says only that a search ran out of steps:
// no verdict either way.
func (e *ListenerError) Inconclusive() bool { return e.Result == porcupine.Unknown }

// Inconclusive reports whether err is a *ListenerError that says only that
// a search ran out of steps (see ListenerError.Inconclusive). A check moves
// on to its next workload on such an error, and counts it; it fails only
// on the others.
func Inconclusive(err error) bool {
	var le *ListenerError
	return errors.As(err, &le) && le.Inconclusive()
}

// CheckListener is CheckListenerSteps with DefaultSteps. Its last
// argument, once a wall-clock timeout, is ignored (see Check).
func CheckListener(history []porcupine.Operation, _ time.Duration) error {
	return CheckListenerSteps(history, DefaultSteps)
}

// CheckListenerSteps checks each listener's part of history on its own
// against the delivery contract: every Deliver is the oldest value added
// and not yet delivered, for some order of the calls inside their
// intervals, so no value is delivered twice, out of add order, or without
// being added. Each listener's search takes at most steps model steps
// (<= 0: DefaultSteps). It returns nil; or a *ListenerError with Result
// Illegal for the first listener, in listener order, that fails; or, when
// none fails but some search ran out of steps, a *ListenerError with
// Result Unknown for the first such listener (Inconclusive). A history cut
// short (values added and never delivered) can pass: see
// CheckListenerDrainedSteps.
func CheckListenerSteps(history []porcupine.Operation, steps int) error {
	if steps <= 0 {
		steps = DefaultSteps
	}
	m := ListenerModel()
	m.Partition = nil // one listener at a time, to name the one that fails
	var unknown error
	for _, ops := range partitionByListener(StampListener(history)) {
		l := ops[0].Input.(ListenerInput).Listener
		res, info := CheckSteps(m, ops, steps)
		switch res {
		case porcupine.Ok:
		case porcupine.Illegal:
			// A genuine violation decides, whatever an earlier listener's
			// inconclusive search would have found.
			return &ListenerError{Listener: l, Result: res, Info: info, Ops: ops, Detail: diagnoseListener(ops)}
		default:
			if unknown == nil {
				unknown = &ListenerError{Listener: l, Result: res, Ops: ops,
					Detail: fmt.Sprintf("inconclusive: the search found neither a linearization nor a violation within %d steps", steps)}
			}
		}
	}
	return unknown
}

// CheckListenerDrained is CheckListenerDrainedSteps with DefaultSteps. Its
// last argument, once a wall-clock timeout, is ignored (see Check).
func CheckListenerDrained(history []porcupine.Operation, _ time.Duration) error {
	return CheckListenerDrainedSteps(history, DefaultSteps)
}

// CheckListenerDrainedSteps is CheckListenerSteps for a history recorded
// until every handler had caught up: besides, every value added to a
// listener must have been delivered to it (exactly once, with
// CheckListenerSteps' at most once). A value never delivered is a
// violation even when a search was inconclusive; an inconclusive search
// is returned (Inconclusive) only when nothing else is wrong.
func CheckListenerDrainedSteps(history []porcupine.Operation, steps int) error {
	err := CheckListenerSteps(history, steps)
	if err != nil && !Inconclusive(err) {
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
	return err
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
	// Drain is ignored. It bounded, in wall time, the wait for the
	// handlers to catch up, which on a loaded machine cut a correct
	// fan-out's history short, and CheckListenerDrained then failed it;
	// IdlePolls bounds the wait now. It is kept so that callers compile.
	Drain time.Duration
	// IdlePolls bounds the wait for the handlers to catch up once the
	// distributors are done: the workload polls every 100 µs and gives up
	// after this many polls in a row in which no handler was called;
	// default 2000 (a fifth of a second at the least; about 2 s, like the
	// wall-time bound it replaces, where a 100 µs sleep takes a
	// millisecond, as on the 2-core machine it was measured on). A count,
	// not a deadline, and restarted by every delivery: a correct fan-out
	// keeps calling its handlers until they have caught up, however slowly
	// the machine runs it, so only one that has stopped delivering (it
	// lost values) ends the wait short; and a starved process starves the
	// poller too, so load lengthens the wait instead of cutting it.
	IdlePolls int
	// CatchUp, if set, replaces the IdlePolls wait: the workload calls it
	// with caughtUp (every handler has been called once per Add), and it
	// returns once that holds or it gives up. checkkit.Eventually is one
	// that counts only the time in which none of the check's goroutines
	// could run, so that a starved handler is waited for and a fan-out
	// that stopped delivering is not.
	CatchUp func(caughtUp func() bool)
	// Beat, if set, is called after every recorded call and on every poll
	// of the wait: a heartbeat for a watchdog (checkkit's Progress.Beat),
	// which then reports a Distribute call that never returns. It must be
	// safe for concurrent use.
	Beat func()
	// AwaitStop, if set, waits for the fan-out's Run to return once the
	// workload has cancelled its context: the workload calls it with wait,
	// which returns when Run has, and if it returns false (Run did not
	// stop), returns the history at once, leaving Run's goroutine behind
	// for the caller to report. Unset, the workload waits for Run.
	AwaitStop func(wait func()) bool
}

// pollEvery is the workload's pause between polls of the handlers' calls.
const pollEvery = 100 * time.Microsecond

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
	if w.IdlePolls <= 0 {
		w.IdlePolls = 2000
	}
	if w.Beat == nil {
		w.Beat = func() {}
	}
	if w.AwaitStop == nil {
		w.AwaitStop = func(wait func()) bool { wait(); return true }
	}
	return w
}

// recordingHandler records each call as a Deliver of the listener's
// history, then dawdles for a while of its seeded choosing, so backlogs
// build up and drain.
type recordingHandler struct {
	rec      *Recorder
	beat     func()
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
	h.beat()
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
// distributors are done it waits for every handler to have been called
// once per Add, for as long as some handler is still being called (see
// ListenerWorkload.IdlePolls), then stops f and returns the history, ready
// for CheckListenerDrained. It joins every goroutine it started, unless
// cfg.AwaitStop gives up on Run.
func RunListenerWorkload(f FanOut, cfg ListenerWorkload) []porcupine.Operation {
	cfg = cfg.withDefaults()
	rec := &Recorder{}
	hs := make([]*recordingHandler, cfg.Listeners)
	for i := range hs {
		hs[i] = &recordingHandler{rec: rec, beat: cfg.Beat, listener: i, client: cfg.Distributors + i,
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
				cfg.Beat()
				if rng.IntN(8) == 0 {
					runtime.Gosched()
				}
			}
		})
	}
	wg.Wait()

	// Wait while the handlers catch up. Not against a deadline: a
	// loaded machine would cut a correct fan-out short, and the drained
	// check would fail it for values it was still delivering. The bound
	// is a count of polls without a single delivery, restarted by each.
	want := int64(cfg.Distributors * cfg.Adds)
	if cfg.CatchUp != nil {
		cfg.CatchUp(func() bool {
			for _, h := range hs {
				if h.calls.Load() < want {
					return false
				}
			}
			return true
		})
	}
	var last int64 = -1
	for idle := 0; cfg.CatchUp == nil && idle < cfg.IdlePolls; idle++ {
		caught, total := true, int64(0)
		for _, h := range hs {
			n := h.calls.Load()
			total += n
			caught = caught && n >= want
		}
		if caught {
			break
		}
		if total != last {
			last, idle = total, 0
		}
		cfg.Beat()
		time.Sleep(pollEvery)
	}
	cancel()
	cfg.AwaitStop(func() { <-runDone }) // if it gives up, Run's goroutine stays behind
	return rec.History()
}
