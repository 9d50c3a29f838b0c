package fifo

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/kverify/kverify/props/checkkit"
	spec "github.com/kverify/kverify/spec/fifo"
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
	rec   *checkkit.Recorder
	h     recorder
}

func newMachine(s Subject, mode Mode, rec *checkkit.Recorder) (x *machine, err error) {
	if rec == nil {
		rec = &checkkit.Recorder{}
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
			return checkkit.Broke(GErrors, "%s of a valid object failed: %v", op, err)
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
			return checkkit.Broke(GErrors, "%s of valid objects failed: %v", op, err)
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
			return checkkit.Broke(GErrors, "Resync failed: %v", err)
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
