package fifo

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/kverify/kverify/props/checkkit"
	spec "github.com/kverify/kverify/spec/fifo"
)

var errProcess = errors.New("process func failed on purpose")

type panicValue struct{}

// machine drives one FIFO and the model side by side.
type machine struct {
	s      Subject
	mode   Mode
	f      FIFO
	b      Batcher
	dm     *spec.DeltaFIFO
	rm     *spec.RealFIFO
	model  *spec.Store // the informer's store, as the model has it
	store  *MapStore   // Process's store, and behind known the FIFO's Known
	faulty *faultyKnown
	made   int                 // objects made so far: the next version is made+1
	last   map[string]spec.Obj // each key's last state made, for Again
	rec    *checkkit.Recorder
	h      recorder
	// taint is the last call that failed or met a faulty collaborator: a
	// later mismatch is reported as a breach of its guarantee.
	taint *tainted
	// firstBy is the PopReplace whose Replace populated the FIFO while a
	// delta popped before it was processed: a later sync mismatch says
	// so, since that is where a FIFO that counts the delta among the
	// Replace's goes wrong, whenever it shows.
	firstBy string
}

type tainted struct {
	op, guarantee string
}

func newMachine(s Subject, mode Mode, rec *checkkit.Recorder) (x *machine, err error) {
	if rec == nil {
		rec = &checkkit.Recorder{}
	}
	x = &machine{s: s, mode: mode, rec: rec, model: spec.NewStore(), store: NewStore(), last: map[string]spec.Obj{}}
	x.faulty = &faultyKnown{s: x.store}
	op := mode.String()
	defer x.catch(op, &err)
	opts := Options{EmitReplaced: mode.EmitReplaced, Atomic: mode.Atomic, Unlock: mode.Unlock, Bookmarks: mode.Bookmarks}
	if mode.Known {
		opts.Known = x.faulty
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
		return nil, checkkit.Broke(GErrors, "New(%s) failed: %v", op, err)
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
		*err = checkkit.Broke(GNoPanic, "%s panicked: %v", op, p)
	}
}

// obj makes a fresh state of key.
func (x *machine) obj(key string) spec.Obj {
	x.made++
	o := spec.Obj{Key: key, Version: x.made}
	x.last[key] = o
	return o
}

// keyName is the key of number n, in namespace ns if ns.
func keyName(n int, ns bool) string {
	if ns {
		return "ns/k" + strconv.Itoa(n)
	}
	return "k" + strconv.Itoa(n)
}

// objFor is the object of an Add, Update, Delete or Know step: a fresh
// state, or with Again the key's last one (a fresh one if it has none),
// rejected as the step's fault says.
func (x *machine) objFor(st Step) spec.Obj {
	key := keyName(st.Key, st.NS)
	o, ok := x.last[key]
	if !st.Again || !ok {
		o = x.obj(key)
	}
	o.Fault = objectFault(st.Fault)
	if o.Fault != spec.NoFault {
		delete(x.last, key) // never delivered again: it is not a state the FIFO saw
	}
	return o
}

// listFor is a Replace step's list: keys k<Off> .. k<Off+N-1> (in
// namespace ns with NS), with Dup the first half of them again (fresh
// states), with Rev in reverse; the At-th object rejected as the step's
// fault says.
func (x *machine) listFor(st Step) []spec.Obj {
	keys := make([]string, 0, st.N+(st.N+1)/2)
	for i := range st.N {
		keys = append(keys, keyName(st.Off+i, st.NS))
	}
	if st.Dup {
		keys = append(keys, keys[:(st.N+1)/2]...)
	}
	if st.Rev {
		slices.Reverse(keys)
	}
	objs := make([]spec.Obj, len(keys))
	for i, k := range keys {
		objs[i] = x.obj(k)
	}
	if f := objectFault(st.Fault); f != spec.NoFault && st.At < len(objs) {
		objs[st.At].Fault = f
		delete(x.last, objs[st.At].Key)
	}
	return objs
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

// Apply runs one step on the FIFO and the model and compares them. Once a
// call failed or met a faulty collaborator (the machine is tainted), a
// later mismatch breaks that call's guarantee: what it left queued shows
// only when it pops. (A shrunk counterexample keeps the call only if the
// mismatch needs it.)
func (x *machine) Apply(st Step) (err error) {
	defer func() {
		var v *checkkit.Violation
		if err != nil && x.firstBy != "" && errors.As(err, &v) && (v.Guarantee == GSynced || v.Guarantee == GInitial) {
			err = checkkit.Broke(v.Guarantee, "%s (the initial population is the one %s's Replace set, made while a delta popped before it was processed)", v.Detail, x.firstBy)
		}
		if err != nil && x.taint != nil {
			var v *checkkit.Violation
			if errors.As(err, &v) && v.Guarantee != x.taint.guarantee && v.Guarantee != GNoPanic {
				err = checkkit.Broke(x.taint.guarantee, "%s (after %s)", v.Detail, x.taint.op)
			}
		}
	}()
	return x.apply(st)
}

func (x *machine) apply(st Step) (err error) {
	op := st.String()
	defer x.catch(op, &err)
	switch st.Kind {
	case Add, Update, Delete:
		o := x.objFor(st)
		l := x.lookupFor(st, o.Key)
		var err, want error
		switch st.Kind {
		case Add:
			err = x.f.Add(input(o))
			want = x.modelAdd(o)
		case Update:
			err = x.f.Update(input(o))
			want = x.modelUpdate(o)
		case Delete:
			err = x.f.Delete(input(o))
			want = x.modelDelete(o, l)
		}
		x.faulty.set(spec.Lookup{})
		x.rec.Step(op, errString(want), errString(err))
		if err := x.compareErr(op, st, want, err); err != nil {
			return err
		}
	case Replace:
		objs := x.listFor(st)
		l := x.lookupFor(st, "")
		rv := strconv.Itoa(x.made)
		err := x.f.Replace(inputsOf(objs), rv)
		var want error
		if x.rm != nil {
			want = x.rm.ReplaceIn(objs, rv, l)
		} else {
			want = x.dm.ReplaceIn(objs, l)
		}
		x.faulty.set(spec.Lookup{})
		x.rec.Step(op, errString(want), errString(err))
		if err := x.compareErr(op, st, want, err); err != nil {
			return err
		}
	case Resync:
		l := x.lookupFor(st, "")
		err := x.f.Resync()
		var want error
		if x.rm != nil {
			want = x.rm.ResyncIn(l)
		} else {
			want = x.dm.ResyncIn(l)
		}
		x.faulty.set(spec.Lookup{})
		x.rec.Step(op, errString(want), errString(err))
		if err := x.compareErr(op, st, want, err); err != nil {
			return err
		}
	case Know:
		if !x.mode.Known {
			x.rec.Step(op, "skipped: no known objects", "")
			return nil
		}
		st.Fault = noFault
		o := x.objFor(st)
		x.model.Objects[o.Key] = o
		_ = x.store.Update(object(o))
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
			return checkkit.Broke(GErrors, "Bookmark failed: %v", err)
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
			sh, err := x.popOne(Pop, nil)
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
		if err := x.popBatch(op, st.Fault); err != nil {
			return err
		}
	case PopReplace:
		if err := x.popReplace(op, st); err != nil {
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
			return checkkit.Broke(GClosed, "IsClosed is false after Close")
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

func (x *machine) modelAdd(o spec.Obj) error {
	if x.rm != nil {
		return x.rm.Add(o)
	}
	return x.dm.Add(o)
}

func (x *machine) modelUpdate(o spec.Obj) error {
	if x.rm != nil {
		return x.rm.Update(o)
	}
	return x.dm.Update(o)
}

func (x *machine) modelDelete(o spec.Obj, l spec.Lookup) error {
	if x.rm != nil {
		return x.rm.Delete(o)
	}
	_, err := x.dm.DeleteIn(o, l)
	return err
}

// compareErr compares a call's error with the model's (whether it failed,
// not how), and taints the machine after a call given an object to reject
// or run against a faulty known-objects store.
func (x *machine) compareErr(op string, st Step, want, got error) error {
	g := GErrors
	switch f := objectFault(st.Fault); {
	case f == spec.NoKey || (f == spec.NoTransform && x.mode.Transform):
		g = GFailedCall
	case knownFault(st.Fault) && x.mode.Known:
		g = GKnownFaults
	}
	if g != GErrors {
		x.taint = &tainted{op: op, guarantee: g}
	}
	switch {
	case want != nil && got == nil:
		return checkkit.Broke(g, "%s returned no error, want one (%v)", op, want)
	case want == nil && got != nil:
		if g == GErrors {
			return checkkit.Broke(g, "%s of valid input failed: %v", op, got)
		}
		return checkkit.Broke(g, "%s failed: %v; want no error", op, got)
	}
	return nil
}

func (x *machine) checkSynced() error {
	got, want := x.f.HasSynced(), x.synced()
	if got != want {
		x.rec.Step("HasSynced", strconv.FormatBool(want), strconv.FormatBool(got))
		return checkkit.Broke(GSynced, "HasSynced is %t, want %t (%s)", got, want, x.syncWhy())
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
	var v *checkkit.Violation
	if !errors.As(err, &v) {
		return err
	}
	return checkkit.Broke(v.Guarantee, "%s (%s)", v.Detail, fmt.Sprintf(format, args...))
}

// finish closes the FIFO and pops everything the model still holds, then
// once more: a FIFO that queued more than the model (a failed call that
// left something behind) hands it out instead of reporting closed.
func (x *machine) finish() error {
	for _, st := range mustSteps("Close Pops(100000) Pop") {
		if err := x.Apply(st); err != nil {
			return err
		}
	}
	return nil
}

// RunSteps makes a FIFO in mode and runs steps on it, checking every
// outcome against the model: the engine behind the rapid checks, trace
// replay and the fuzz targets. rec may be nil.
func RunSteps(s Subject, mode Mode, steps []Step, rec *checkkit.Recorder) error {
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
