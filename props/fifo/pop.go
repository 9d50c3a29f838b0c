package fifo

// This file is the pop half of the machine: a pop or batch on the FIFO and
// the model, what the process func saw (observe), and in pipeline mode the
// notifications and store the subject's processing produced.

import (
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/kverify/kverify/props/checkkit"
	spec "github.com/kverify/kverify/spec/fifo"
)

// recorder is the suite's Handler: it records notifications.
type recorder struct{ events []event }

// event is a recorded notification with its objects as the subject gave
// them.
type event struct {
	Kind     string
	Old, New any
	Initial  bool
}

func (r *recorder) OnAdd(obj any, initial bool) {
	r.events = append(r.events, event{Kind: "add", New: obj, Initial: initial})
}
func (r *recorder) OnUpdate(old, obj any) {
	r.events = append(r.events, event{Kind: "update", Old: old, New: obj})
}
func (r *recorder) OnDelete(obj any) { r.events = append(r.events, event{Kind: "delete", New: obj}) }

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
			return checkkit.Broke(GClosed, "Pop on a closed, empty FIFO called process=%t and returned %v, want an error", called, err)
		}
		return nil
	}
	sh, err := x.popOne(kind, nil)
	x.rec.Step(op, sh.wantS(), sh.gotS())
	return err
}

// unlockedPop reports whether a pop now runs its process func unlocked:
// a RealFIFO with UnlockWhileProcessing and, after the pop, fewer than
// 2×BatchSize deltas queued.
func (x *machine) unlockedPop() bool {
	return x.rm != nil && x.mode.Unlock && x.queued() > 0 && x.queued()-1 < 2*x.rm.BatchSize
}

// popReplace runs a PopReplace step: a Pop whose process func calls
// Replace with the step's list.
func (x *machine) popReplace(op string, st Step) error {
	if !x.unlockedPop() {
		x.rec.Step(op, "skipped: the process func would run under the FIFO's lock", "")
		return nil
	}
	sh, err := x.popOne(Pop, &st)
	x.rec.Step(op, sh.wantS(), sh.gotS())
	return err
}

// popOne pops one key (DeltaFIFO) or delta (RealFIFO) and checks it. A
// replace step, if given, is made by the process func once it has
// observed the pop (PopReplace).
func (x *machine) popOne(kind Kind, replace *Step) (sh shown, err error) {
	var (
		p      processed
		called int
		list   []spec.Obj
		rv     string
		repErr error
	)
	if replace != nil {
		list = x.listFor(*replace)
		rv = strconv.Itoa(x.made)
	}
	process := func(ds []Delta, initial bool) error {
		called++
		p = x.observe(ds, initial)
		if replace != nil && called == 1 {
			repErr = x.f.Replace(inputsOf(list), rv)
		}
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
	panicked = processPanicked(func() { ret, popErr = x.f.Pop(process) })

	// The model.
	var wantDs []spec.Delta
	var wantInitial bool
	var (
		wantSyncedIn bool
		wantRepErr   error
	)
	if x.rm != nil {
		d, initial, _ := x.rm.Pop()
		wantDs, wantInitial = []spec.Delta{d}, initial
		wantSyncedIn = x.synced()
		counted := min(1, x.rm.Pending()) // decided when the pop begins
		if replace != nil {
			populated := x.rm.Populated()
			wantRepErr = x.rm.ReplaceIn(list, rv, spec.Lookup{})
			if !populated && x.rm.Populated() {
				x.firstBy = replace.String()
			}
		}
		x.rm.Popped(counted)
	} else {
		wantDs, wantInitial, _ = x.dm.Pop()
		wantSyncedIn = x.synced()
		x.dm.Popped()
	}
	if replace != nil {
		if err := x.compareErr(replace.String()+" during the pop", *replace, wantRepErr, repErr); err != nil {
			return sh, err
		}
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
		return sh, checkkit.Broke(GOrder, "Pop called its process func %d times, want once", called)
	case convErr != nil:
		return sh, checkkit.Broke(GDeltas, "popped deltas: %v", convErr)
	case !same(gotM, wantDs):
		return sh, x.deltaMismatch(wantDs, gotM)
	case p.initial != wantInitial:
		return sh, checkkit.Broke(GInitial, "pop of %s had isInInitialList=%t, want %t (%s)", spec.Deltas(gotM), p.initial, wantInitial, x.syncWhy())
	case x.mode.SyncDuring && p.syncedIn != wantSyncedIn:
		return sh, checkkit.Broke(GSynced, "while the process func of %s ran, the FIFO was synced=%t, want %t: a FIFO syncs only once the last initial item's process func has returned", spec.Deltas(gotM), p.syncedIn, wantSyncedIn)
	}
	switch kind {
	case PopErr:
		if !errors.Is(popErr, errProcess) {
			sh.note = errString(popErr)
			return sh, checkkit.Broke(GConsistent, "Pop returned %v, want the process func's error", popErr)
		}
	case PopPanic:
		if !panicked && popErr == nil {
			return sh, checkkit.Broke(GConsistent, "the process func panicked, and Pop neither propagated the panic nor returned an error")
		}
	default:
		if popErr != nil {
			sh.note = errString(popErr)
			return sh, checkkit.Broke(GErrors, "Pop returned %v, want nil (the process func returned nil)", popErr)
		}
	}
	if kind != PopPanic {
		retM, err := deltasOf(ret)
		if err != nil || !same(retM, gotM) {
			return sh, checkkit.Broke(GDeltas, "Pop returned %s, not the deltas it gave its process func (%s)", spec.Deltas(retM), spec.Deltas(gotM))
		}
	}
	if x.mode.Pipeline {
		if p.err != nil {
			return sh, checkkit.Broke(GProcess, "Process of %s failed: %v", spec.Deltas(gotM), p.err)
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
				objs[k] = object(o)
			}
			x.store.set(objs)
			return
		case spec.SyncAll, spec.Bookmark:
		default:
			if o, ok := x.model.Objects[d.Key()]; ok {
				_ = x.store.Update(object(o))
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
		return checkkit.Broke(GOrder, "popped %s, want key %s's deltas %s (keys pop in the order they were first touched since their last pop; queued: %v)",
			spec.Deltas(got), want[0].Key(), spec.Deltas(want), x.dm.Keys())
	}
	if x.rm != nil && (len(got) != 1 || got[0].Key() != want[0].Key() || got[0].Type != want[0].Type) {
		return checkkit.Broke(GOrder, "popped %s, want %s (one delta per event, in arrival order)", spec.Deltas(got), spec.Deltas(want))
	}
	return checkkit.Broke(GDeltas, "popped %s, want %s", spec.Deltas(got), spec.Deltas(want))
}

func (x *machine) compareEvents(want []spec.Event, got []event) error {
	g := make([]string, len(got))
	for i, e := range got {
		g[i] = showEvent(e)
	}
	w := make([]string, len(want))
	for i, e := range want {
		w[i] = e.String()
	}
	if !slices.Equal(w, g) {
		return checkkit.Broke(GProcess, "notifications %v, want %v", g, w)
	}
	return nil
}

func showEvent(e event) string {
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
			return checkkit.Broke(GProcess, "the store holds keys %v, want %v", got, want)
		}
		keys = want
	}
	for _, k := range keys {
		o, ok, _ := x.store.GetByKey(k)
		w, wok := x.model.Objects[k]
		if ok != wok {
			return checkkit.Broke(GProcess, "the store has key %s: %t, want %t", k, ok, wok)
		}
		if ok {
			m, err := objOf(o)
			if err != nil || m != w {
				return checkkit.Broke(GProcess, "the store holds %s for %s, want %s", m, k, w)
			}
		}
	}
	return nil
}

// processPanicked runs pop and reports whether the process func the
// machine handed it panicked (with panicValue) and the panic reached here;
// any other panic is the subject's and goes on.
func processPanicked(pop func()) (panicked bool) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(panicValue); !ok {
				panic(r)
			}
			panicked = true
		}
	}()
	pop()
	return false
}

// popBatch runs one PopBatch step, whose process func fails as fault
// says (faultErr, faultPanic) or not.
func (x *machine) popBatch(op string, fault Fault) error {
	if x.queued() == 0 {
		x.rec.Step(op, "skipped: nothing queued", "")
		return nil
	}
	var (
		p             processed
		single, batch int
		err           error
		panicked      bool
	)
	fail := func() error {
		switch fault {
		case faultErr:
			return errProcess
		case faultPanic:
			panic(panicValue{})
		}
		return nil
	}
	panicked = processPanicked(func() {
		err = x.b.PopBatch(
			func(ds []Delta, init bool) error { batch++; p = x.observe(ds, init); return fail() },
			func(ds []Delta, init bool) error { single++; p = x.observe(ds, init); return fail() })
	})
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
	case fault == faultErr && !errors.Is(err, errProcess):
		return checkkit.Broke(GConsistent, "PopBatch returned %v, want the process func's error", err)
	case fault == faultPanic && !panicked && err == nil:
		return checkkit.Broke(GConsistent, "the process func panicked, and PopBatch neither propagated the panic nor returned an error")
	case fault == noFault && err != nil:
		return checkkit.Broke(GErrors, "PopBatch returned %v, want nil", err)
	case batch+single != 1:
		return checkkit.Broke(GBatch, "PopBatch called its process funcs %d times, want once", batch+single)
	case convErr != nil:
		return checkkit.Broke(GDeltas, "popped deltas: %v", convErr)
	case !same(gotM, wantDs):
		return checkkit.Broke(GBatch, "PopBatch took %s, want %s (up to %d consecutive deltas, not past the initial population, not past a delta that cannot be batched, no key twice)", spec.Deltas(gotM), spec.Deltas(wantDs), spec.DefaultBatchSize)
	case wantSingle != (single == 1):
		return checkkit.Broke(GBatch, "a batch of %d went to the single=%t func, want single=%t", len(gotM), single == 1, wantSingle)
	case p.initial != wantInitial:
		return checkkit.Broke(GInitial, "batch had isInInitialList=%t, want %t", p.initial, wantInitial)
	case x.mode.SyncDuring && p.syncedIn != wantSyncedIn:
		return checkkit.Broke(GSynced, "while the batch was processed the FIFO was synced=%t, want %t", p.syncedIn, wantSyncedIn)
	}
	if x.mode.Pipeline {
		if p.err != nil {
			return checkkit.Broke(GProcess, "Process of %s failed: %v", spec.Deltas(gotM), p.err)
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
	events   []event // the notifications Process made (pipeline mode)
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
