package fifo

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/kverify/kverify/props"
	spec "github.com/kverify/kverify/spec/fifo"
)

// Guarantees, as they appear in violations.
const (
	gOrder     = "Pop order"           // which key or delta comes next
	gDeltas    = "Deltas"              // a popped key's deltas: accumulation, dedup, Replace's, Resync's
	gSynced    = "HasSynced"           // initial population, never reverts, only after processing
	gInitial   = "isInInitialList"     // the flag each pop and add carries
	gClosed    = "Close"               // Close, IsClosed, Pop after Close
	gErrors    = "Errors"              // the error a call returns
	gBatch     = "PopBatch"            // batch boundaries
	gProcess   = "Processing"          // store and notifications of processDeltas
	gNoPanic   = "No panic"            // a call panicked
	gConsisted = "Consistent on fault" // a process func's error or panic
)

var errProcess = errors.New("process func failed on purpose")

type panicValue struct{}

// machine drives one FIFO and the model side by side.
type machine struct {
	s     Subject
	mode  Mode
	f     FIFO
	b     Batcher
	dm    *spec.DeltaFIFO
	rm    *spec.RealFIFO
	model *spec.Store // the informer's store, as the model has it
	store *MapStore   // the FIFO's Known, and Process's store
	made  int         // objects made so far: the next version is made+1
	rec   *props.Recorder
	h     recorder
}

// recorder is the suite's Handler: it records notifications.
type recorder struct{ events []Event }

// Event is a recorded notification with its objects as the subject gave
// them.
type Event struct {
	Kind     string
	Old, New any
	Initial  bool
}

func (r *recorder) OnAdd(obj any, initial bool) {
	r.events = append(r.events, Event{Kind: "add", New: obj, Initial: initial})
}
func (r *recorder) OnUpdate(old, obj any) {
	r.events = append(r.events, Event{Kind: "update", Old: old, New: obj})
}
func (r *recorder) OnDelete(obj any) { r.events = append(r.events, Event{Kind: "delete", New: obj}) }

func newMachine(s Subject, mode Mode, rec *props.Recorder) (x *machine, err error) {
	if rec == nil {
		rec = &props.Recorder{}
	}
	x = &machine{s: s, mode: mode, rec: rec, model: spec.NewStore(), store: NewStore()}
	op := mode.String()
	defer x.catch(op, &err)
	opts := Options{EmitReplaced: mode.EmitReplaced, Atomic: mode.Atomic, Unlock: mode.Unlock, Bookmarks: mode.Bookmarks}
	if mode.Known {
		opts.Known = x.store
	}
	if mode.Transform {
		opts.Transform = transform
	}
	if s.Real {
		x.rm = spec.NewRealFIFO(mode.Atomic, mode.Transform, mode.Bookmarks)
	} else {
		x.dm = spec.NewDeltaFIFO(mode.EmitReplaced, mode.Transform)
	}
	x.f, err = s.New(opts)
	rec.Step(op, "", errString(err))
	if err != nil {
		return nil, props.Broke(gErrors, "New(%s) failed: %v", op, err)
	}
	if s.Real {
		b, ok := x.f.(Batcher)
		if !ok {
			return nil, fmt.Errorf("fifo: a RealFIFO subject's FIFO (%T) must implement Batcher", x.f)
		}
		x.b = b
	}
	return x, nil
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return "error: " + err.Error()
}

// catch turns a panic of the subject during op into a violation.
func (x *machine) catch(op string, err *error) {
	if p := recover(); p != nil {
		if _, ok := p.(panicValue); ok {
			panic(p)
		}
		x.rec.Step(op, "no panic", fmt.Sprintf("panic: %v", p))
		*err = props.Broke(gNoPanic, "%s panicked: %v", op, p)
	}
}

func (x *machine) known() spec.Known {
	if x.mode.Known {
		return x.model.Objects
	}
	return nil
}

func (x *machine) obj(key int) spec.Obj {
	x.made++
	return spec.Obj{Key: "k" + strconv.Itoa(key), Version: x.made}
}

func (x *machine) queued() int {
	if x.rm != nil {
		return x.rm.Len()
	}
	return x.dm.Len()
}

func (x *machine) synced() bool {
	if x.rm != nil {
		return x.rm.Synced()
	}
	return x.dm.Synced()
}

func (x *machine) closed() bool {
	if x.rm != nil {
		return x.rm.Closed()
	}
	return x.dm.Closed()
}

// Apply runs one step on the FIFO and the model and compares them.
func (x *machine) Apply(st Step) (err error) {
	op := st.String()
	defer x.catch(op, &err)
	switch st.Kind {
	case Add, Update, Delete:
		o := x.obj(st.Key)
		var err error
		switch st.Kind {
		case Add:
			err = x.f.Add(Object(o))
			x.modelAdd(o)
		case Update:
			err = x.f.Update(Object(o))
			x.modelUpdate(o)
		case Delete:
			err = x.f.Delete(Object(o))
			x.modelDelete(o)
		}
		x.rec.Step(op, "", errString(err))
		if err != nil {
			return props.Broke(gErrors, "%s of a valid object failed: %v", op, err)
		}
	case Replace:
		list := make([]any, st.N)
		objs := make([]spec.Obj, st.N)
		for i := range st.N {
			objs[i] = x.obj(st.Off + i)
			list[i] = Object(objs[i])
		}
		rv := strconv.Itoa(x.made)
		err := x.f.Replace(list, rv)
		if x.rm != nil {
			x.rm.Replace(objs, rv, x.known())
		} else {
			x.dm.Replace(objs, x.known())
		}
		x.rec.Step(op, "", errString(err))
		if err != nil {
			return props.Broke(gErrors, "%s of valid objects failed: %v", op, err)
		}
	case Resync:
		err := x.f.Resync()
		if x.rm != nil {
			x.rm.Resync(x.known())
		} else {
			x.dm.Resync(x.known())
		}
		x.rec.Step(op, "", errString(err))
		if err != nil {
			return props.Broke(gErrors, "Resync failed: %v", err)
		}
	case Know:
		if !x.mode.Known {
			x.rec.Step(op, "skipped: no known objects", "")
			return nil
		}
		o := x.obj(st.Key)
		x.model.Objects[o.Key] = o
		_ = x.store.Update(Object(o))
		x.rec.Step(op, "", "")
	case BookmarkOp:
		if x.b == nil {
			return fmt.Errorf("fifo: Bookmark on a DeltaFIFO")
		}
		rv := strconv.Itoa(x.made)
		err := x.b.Bookmark(rv)
		x.rm.Bookmark(rv)
		x.rec.Step(op, "", errString(err))
		if err != nil {
			return props.Broke(gErrors, "Bookmark failed: %v", err)
		}
	case Pop, PopErr, PopPanic:
		if err := x.pop(op, st.Kind); err != nil {
			return err
		}
	case Pops:
		var last []shown // the last three pops, for the trace
		n := 0
		record := func() {
			want, got := make([]string, len(last)), make([]string, len(last))
			for i, sh := range last {
				want[i], got[i] = sh.wantS(), sh.gotS()
			}
			x.rec.Step(op, lastN(want, n), lastN(got, n))
		}
		for i := 0; i < st.N && x.queued() > 0; i++ {
			sh, err := x.popOne(Pop)
			n++
			if last = append(last, sh); len(last) > 3 {
				last = last[1:]
			}
			if err != nil {
				record()
				return annotate(err, "pop %d of %s", i+1, op)
			}
			if err := x.checkSynced(); err != nil {
				record()
				return annotate(err, "after pop %d of %s", i+1, op)
			}
		}
		record()
		if x.mode.Pipeline {
			if err := x.compareStore(nil); err != nil {
				return err
			}
		}
	case PopBatch:
		if err := x.popBatch(op); err != nil {
			return err
		}
	case Close:
		x.f.Close()
		if x.rm != nil {
			x.rm.Close()
		} else {
			x.dm.Close()
		}
		c := x.f.IsClosed()
		x.rec.Step(op, "closed", fmt.Sprintf("closed=%t", c))
		if !c {
			return props.Broke(gClosed, "IsClosed is false after Close")
		}
	default:
		return fmt.Errorf("fifo: unknown step %v", st)
	}
	return x.checkSynced()
}

// lastN shows the tail of a bulk step's n results.
func lastN(s []string, n int) string {
	if n > len(s) {
		return fmt.Sprintf("... %d more; ", n-len(s)) + strings.Join(s, "; ")
	}
	return strings.Join(s, "; ")
}

func (x *machine) modelAdd(o spec.Obj) {
	if x.rm != nil {
		x.rm.Add(o)
	} else {
		x.dm.Add(o)
	}
}

func (x *machine) modelUpdate(o spec.Obj) {
	if x.rm != nil {
		x.rm.Update(o)
	} else {
		x.dm.Update(o)
	}
}

func (x *machine) modelDelete(o spec.Obj) {
	if x.rm != nil {
		x.rm.Delete(o)
	} else {
		x.dm.Delete(o, x.known())
	}
}

func (x *machine) checkSynced() error {
	got, want := x.f.HasSynced(), x.synced()
	if got != want {
		x.rec.Step("HasSynced", strconv.FormatBool(want), strconv.FormatBool(got))
		return props.Broke(gSynced, "HasSynced is %t, want %t (%s)", got, want, x.syncWhy())
	}
	return nil
}

func (x *machine) syncWhy() string {
	if x.synced() {
		return "the initial population has been processed, or there was none"
	}
	return fmt.Sprintf("the initial population has not all been processed; %d deltas or keys queued", x.queued())
}

func annotate(err error, format string, args ...any) error {
	var v *props.Violation
	if !errors.As(err, &v) {
		return err
	}
	return props.Broke(v.Guarantee, "%s (%s)", v.Detail, fmt.Sprintf(format, args...))
}

// pop runs one Pop step, recording it.
func (x *machine) pop(op string, kind Kind) error {
	if x.queued() == 0 {
		if !x.closed() {
			x.rec.Step(op, "skipped: nothing queued", "")
			return nil
		}
		called := false
		_, err := x.f.Pop(func([]Delta, bool) error { called = true; return nil })
		x.rec.Step(op, "closed", errString(err))
		if called || err == nil {
			return props.Broke(gClosed, "Pop on a closed, empty FIFO called process=%t and returned %v, want an error", called, err)
		}
		return nil
	}
	sh, err := x.popOne(kind)
	x.rec.Step(op, sh.wantS(), sh.gotS())
	return err
}

// popOne pops one key (DeltaFIFO) or delta (RealFIFO) and checks it.
func (x *machine) popOne(kind Kind) (sh shown, err error) {
	var (
		p      processed
		called int
	)
	process := func(ds []Delta, initial bool) error {
		called++
		p = x.observe(ds, initial)
		switch kind {
		case PopErr:
			return errProcess
		case PopPanic:
			panic(panicValue{})
		}
		return nil
	}
	var (
		ret      []Delta
		popErr   error
		panicked bool
	)
	func() {
		defer func() {
			if r := recover(); r != nil {
				if _, ok := r.(panicValue); !ok {
					panic(r)
				}
				panicked = true
			}
		}()
		ret, popErr = x.f.Pop(process)
	}()

	// The model.
	var wantDs []spec.Delta
	var wantInitial bool
	if x.rm != nil {
		d, initial, _ := x.rm.Pop()
		wantDs, wantInitial = []spec.Delta{d}, initial
	} else {
		wantDs, wantInitial, _ = x.dm.Pop()
	}
	wantSyncedIn := x.synced()
	if x.rm != nil {
		x.rm.Popped(1)
	} else {
		x.dm.Popped()
	}
	wantEvents := x.model.Process(wantDs, wantInitial)
	if !x.mode.Pipeline {
		x.mirror(wantDs)
	}

	gotM, convErr := deltasOf(p.ds)
	sh = shown{want: wantDs, wantInit: wantInitial, got: gotM, gotInit: p.initial}
	switch {
	case called != 1:
		sh.note = fmt.Sprintf("process called %d times; Pop returned %v", called, popErr)
		return sh, props.Broke(gOrder, "Pop called its process func %d times, want once", called)
	case convErr != nil:
		return sh, props.Broke(gDeltas, "popped deltas: %v", convErr)
	case !same(gotM, wantDs):
		return sh, x.deltaMismatch(wantDs, gotM)
	case p.initial != wantInitial:
		return sh, props.Broke(gInitial, "pop of %s had isInInitialList=%t, want %t (%s)", spec.Deltas(gotM), p.initial, wantInitial, x.syncWhy())
	case x.mode.SyncDuring && p.syncedIn != wantSyncedIn:
		return sh, props.Broke(gSynced, "while the process func of %s ran, the FIFO was synced=%t, want %t: a FIFO syncs only once the last initial item's process func has returned", spec.Deltas(gotM), p.syncedIn, wantSyncedIn)
	}
	switch kind {
	case PopErr:
		if !errors.Is(popErr, errProcess) {
			sh.note = errString(popErr)
			return sh, props.Broke(gConsisted, "Pop returned %v, want the process func's error", popErr)
		}
	case PopPanic:
		if !panicked && popErr == nil {
			return sh, props.Broke(gConsisted, "the process func panicked, and Pop neither propagated the panic nor returned an error")
		}
	default:
		if popErr != nil {
			sh.note = errString(popErr)
			return sh, props.Broke(gErrors, "Pop returned %v, want nil (the process func returned nil)", popErr)
		}
	}
	if kind != PopPanic {
		retM, err := deltasOf(ret)
		if err != nil || !same(retM, gotM) {
			return sh, props.Broke(gDeltas, "Pop returned %s, not the deltas it gave its process func (%s)", spec.Deltas(retM), spec.Deltas(gotM))
		}
	}
	if x.mode.Pipeline {
		if p.err != nil {
			return sh, props.Broke(gProcess, "Process of %s failed: %v", spec.Deltas(gotM), p.err)
		}
		if err := x.compareEvents(wantEvents, p.events); err != nil {
			return sh, err
		}
		if err := x.compareStore(wantDs); err != nil {
			return sh, err
		}
	}
	return sh, nil
}

// shown is a pop's outcome, formatted only when a trace step needs it.
type shown struct {
	want, got         []spec.Delta
	wantInit, gotInit bool
	note              string
}

func (s shown) wantS() string { return fmt.Sprintf("%s initial=%t", spec.Deltas(s.want), s.wantInit) }

func (s shown) gotS() string {
	g := fmt.Sprintf("%s initial=%t", spec.Deltas(s.got), s.gotInit)
	if s.note != "" {
		g += "; " + s.note
	}
	return g
}

// mirror applies what the model's store did to the machine's store,
// touching only the keys ds touched (a ReplacedAll: everything).
func (x *machine) mirror(ds []spec.Delta) {
	for _, d := range ds {
		switch d.Type {
		case spec.ReplacedAll:
			objs := make(map[string]any, len(x.model.Objects))
			for k, o := range x.model.Objects {
				objs[k] = Object(o)
			}
			x.store.set(objs)
			return
		case spec.SyncAll, spec.Bookmark:
		default:
			if o, ok := x.model.Objects[d.Key()]; ok {
				_ = x.store.Update(Object(o))
			} else {
				_ = x.store.Delete(Tombstone{Key: d.Key()})
			}
		}
	}
}

// deltaMismatch names what differs between the model's pop and the
// subject's.
func (x *machine) deltaMismatch(want, got []spec.Delta) error {
	if x.rm == nil && len(want) > 0 && (len(got) == 0 || got[0].Key() != want[0].Key()) {
		return props.Broke(gOrder, "popped %s, want key %s's deltas %s (keys pop in the order they were first touched since their last pop; queued: %v)",
			spec.Deltas(got), want[0].Key(), spec.Deltas(want), x.dm.Keys())
	}
	if x.rm != nil && (len(got) != 1 || got[0].Key() != want[0].Key() || got[0].Type != want[0].Type) {
		return props.Broke(gOrder, "popped %s, want %s (one delta per event, in arrival order)", spec.Deltas(got), spec.Deltas(want))
	}
	return props.Broke(gDeltas, "popped %s, want %s", spec.Deltas(got), spec.Deltas(want))
}

func (x *machine) compareEvents(want []spec.Event, got []Event) error {
	g := make([]string, len(got))
	for i, e := range got {
		g[i] = showEvent(e)
	}
	w := make([]string, len(want))
	for i, e := range want {
		w[i] = e.String()
	}
	if !slices.Equal(w, g) {
		return props.Broke(gProcess, "notifications %v, want %v", g, w)
	}
	return nil
}

func showEvent(e Event) string {
	show := func(o any) string {
		if t, ok := o.(Tombstone); ok {
			if t.Obj == nil {
				return "DFSU " + t.Key + " <nil>"
			}
			m, err := objOf(t.Obj)
			if err != nil {
				return fmt.Sprintf("DFSU %s %v", t.Key, err)
			}
			m.Key = t.Key
			return "DFSU " + m.String()
		}
		m, err := objOf(o)
		if err != nil {
			return err.Error()
		}
		return m.String()
	}
	switch e.Kind {
	case "add":
		return fmt.Sprintf("add(%s,%t)", show(e.New), e.Initial)
	case "update":
		return fmt.Sprintf("update(%s->%s)", show(e.Old), show(e.New))
	}
	return fmt.Sprintf("delete(%s)", show(e.New))
}

// compareStore compares the subject's store with the model's on the keys
// ds touched, or everywhere when ds is nil or holds a ReplacedAll.
func (x *machine) compareStore(ds []spec.Delta) error {
	var keys []string
	all := ds == nil
	for _, d := range ds {
		if d.Type == spec.ReplacedAll || d.Type == spec.SyncAll {
			all = true
		}
		keys = append(keys, d.Key())
	}
	if all {
		got := x.store.ListKeys()
		want := x.model.Objects.Keys()
		if !slices.Equal(got, want) {
			return props.Broke(gProcess, "the store holds keys %v, want %v", got, want)
		}
		keys = want
	}
	for _, k := range keys {
		o, ok, _ := x.store.GetByKey(k)
		w, wok := x.model.Objects[k]
		if ok != wok {
			return props.Broke(gProcess, "the store has key %s: %t, want %t", k, ok, wok)
		}
		if ok {
			m, err := objOf(o)
			if err != nil || m != w {
				return props.Broke(gProcess, "the store holds %s for %s, want %s", m, k, w)
			}
		}
	}
	return nil
}

// popBatch runs one PopBatch step.
func (x *machine) popBatch(op string) error {
	if x.queued() == 0 {
		x.rec.Step(op, "skipped: nothing queued", "")
		return nil
	}
	var (
		p             processed
		single, batch int
	)
	err := x.b.PopBatch(
		func(ds []Delta, init bool) error { batch++; p = x.observe(ds, init); return nil },
		func(ds []Delta, init bool) error { single++; p = x.observe(ds, init); return nil })
	wantDs, wantInitial, _ := x.rm.PopBatch()
	wantSyncedIn := x.synced()
	x.rm.Popped(len(wantDs))
	wantEvents := x.model.Process(wantDs, wantInitial)
	if !x.mode.Pipeline {
		x.mirror(wantDs)
	}
	gotM, convErr := deltasOf(p.ds)
	want := fmt.Sprintf("%s initial=%t", spec.Deltas(wantDs), wantInitial)
	got := fmt.Sprintf("%s initial=%t batch=%d single=%d", spec.Deltas(gotM), p.initial, batch, single)
	x.rec.Step(op, want, got)
	wantSingle := len(wantDs) == 1
	switch {
	case err != nil:
		return props.Broke(gErrors, "PopBatch returned %v, want nil", err)
	case batch+single != 1:
		return props.Broke(gBatch, "PopBatch called its process funcs %d times, want once", batch+single)
	case convErr != nil:
		return props.Broke(gDeltas, "popped deltas: %v", convErr)
	case !same(gotM, wantDs):
		return props.Broke(gBatch, "PopBatch took %s, want %s (up to %d consecutive deltas, not past the initial population, not past a delta that cannot be batched, no key twice)", spec.Deltas(gotM), spec.Deltas(wantDs), spec.DefaultBatchSize)
	case wantSingle != (single == 1):
		return props.Broke(gBatch, "a batch of %d went to the single=%t func, want single=%t", len(gotM), single == 1, wantSingle)
	case p.initial != wantInitial:
		return props.Broke(gInitial, "batch had isInInitialList=%t, want %t", p.initial, wantInitial)
	case x.mode.SyncDuring && p.syncedIn != wantSyncedIn:
		return props.Broke(gSynced, "while the batch was processed the FIFO was synced=%t, want %t", p.syncedIn, wantSyncedIn)
	}
	if x.mode.Pipeline {
		if p.err != nil {
			return props.Broke(gProcess, "Process of %s failed: %v", spec.Deltas(gotM), p.err)
		}
		if err := x.compareEvents(wantEvents, p.events); err != nil {
			return err
		}
		return x.compareStore(wantDs)
	}
	return nil
}

// processed is what a process func saw and did.
type processed struct {
	ds       []Delta
	initial  bool
	syncedIn bool    // the FIFO's Done was closed while it ran
	err      error   // the subject's Process failed (pipeline mode)
	events   []Event // the notifications Process made (pipeline mode)
}

// observe is the body of every process func the machine hands a FIFO: it
// records what the pop handed over and whether the FIFO had synced (read
// from Done: a FIFO that processes under its lock cannot be asked
// HasSynced), and in pipeline mode runs the subject's Process into the
// store.
func (x *machine) observe(ds []Delta, initial bool) processed {
	p := processed{ds: ds, initial: initial}
	select {
	case <-x.f.Done():
		p.syncedIn = true
	default:
	}
	if x.mode.Pipeline {
		x.h.events = nil
		p.err = x.s.Process(&x.h, x.store, ds, initial)
		p.events = x.h.events
	}
	return p
}

// RunSteps makes a FIFO in mode and runs steps on it, checking every
// outcome against the model: the engine behind the rapid checks, trace
// replay and the fuzz targets. rec may be nil.
func RunSteps(s Subject, mode Mode, steps []Step, rec *props.Recorder) error {
	x, err := newMachine(s, mode, rec)
	if err != nil {
		return err
	}
	defer x.f.Close()
	for _, st := range steps {
		if err := x.Apply(st); err != nil {
			return err
		}
	}
	return nil
}
