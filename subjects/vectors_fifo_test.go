package subjects

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/kverify/kverify/subjects/ours"

	pfifo "github.com/kverify/kverify/props/fifo"
	"github.com/kverify/kverify/subjects/upstream"
	"github.com/kverify/kverify/traces"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// fifoReplayed counts the Len steps a FIFO vector's replay compared and
// those it could not: client-go v0.37.2's DeltaFIFO and RealFIFO export
// no length (nor List or ListKeys), so for them a Len step is skipped
// rather than read from unexported fields.
type fifoReplayed struct{ lenChecked, lenSkipped int }

// replayFIFOVector runs a deltafifo or realfifo vector on a FIFO of s,
// made as the header's params say; the error names the first step whose
// outcome differs, or a call that failed.
func replayFIFOVector(s pfifo.Subject, v traces.Vector) (fifoReplayed, error) {
	var n fifoReplayed
	on := func(param string) bool { return v.Header.Params[param] == 1 }
	opts := pfifo.Options{EmitReplaced: on("emit_replaced"), Atomic: on("atomic"), Unlock: on("unlock"), Bookmarks: on("bookmarks")}
	store := pfifo.NewStore()
	if on("known") {
		opts.Known = store
	}
	if on("transform") {
		opts.Transform = vectorTransform
	}
	f, err := s.New(opts)
	if err != nil {
		return n, fmt.Errorf("New: %v", err)
	}
	// Close also wakes a Pop that blocked against the vector's word (see
	// within), so that it does not outlive the replay.
	defer f.Close()
	length, hasLen := fifoLength(f)
	syncDuring := on("sync_during")
	err = replaySteps(v.Steps, func(st traces.VStep) (got traces.Want, err error) {
		switch st.Op {
		case "Delete", "Replace", "Resync":
			// The known objects are the step's input: the store becomes
			// exactly what the step lists.
			if opts.Known != nil {
				if err := store.Replace(vectorObjects(st.Known), ""); err != nil {
					return got, err
				}
			} else if st.Known != nil {
				return got, errors.New("known objects given to a FIFO made without known objects (params.known is not 1)")
			}
		}
		switch st.Op {
		case "Add", "Update", "Delete":
			if st.Key == nil || st.Value == nil {
				return got, fmt.Errorf("%s without key or value", st.Op)
			}
			obj := vectorObject(traces.VObject{Key: *st.Key, Value: *st.Value})
			switch st.Op {
			case "Add":
				err = f.Add(obj)
			case "Update":
				err = f.Update(obj)
			default:
				err = f.Delete(obj)
			}
		case "Replace":
			err = f.Replace(vectorObjects(st.Objects), deref(st.RV))
		case "Resync":
			err = f.Resync()
		case "Bookmark":
			b, ok := f.(pfifo.Batcher)
			if !ok {
				return got, fmt.Errorf("Bookmark on a FIFO without one (%T)", f)
			}
			err = b.Bookmark(deref(st.RV))
		case "Pop":
			got, err = popVector(f, syncDuring)
		case "PopBatch":
			got, err = popBatchVector(f, syncDuring)
		case "PopReplace":
			got, err = popReplaceVector(f, vectorObjects(st.Objects), deref(st.RV), syncDuring)
		case "Len":
			if !hasLen {
				// Not observable on this FIFO: the step's want is taken as
				// given, and counted.
				n.lenSkipped++
				return *st.Want, nil
			}
			n.lenChecked++
			l := int64(length())
			got = traces.Want{N: &l}
		case "HasSynced":
			b := f.HasSynced()
			got = traces.Want{Flag: &b}
		case "IsClosed":
			b := f.IsClosed()
			got = traces.Want{Flag: &b}
		case "Close":
			f.Close()
		default:
			err = fmt.Errorf("unknown operation %q", st.Op)
		}
		if err != nil {
			err = fmt.Errorf("%s: %w", st.Op, err)
		}
		return got, err
	})
	return n, err
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// vectorObject is the suite's object for a vector's: name key, resource
// version value, generation gen.
func vectorObject(o traces.VObject) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: o.Key, ResourceVersion: o.Value, Generation: o.Gen}}
}

// vectorObjects is vectorObject of each of a list's objects.
func vectorObjects(os []traces.VObject) []any {
	list := make([]any, len(os))
	for i, o := range os {
		list[i] = vectorObject(o)
	}
	return list
}

// vectorTransform is the transformer vectors with params.transform
// assume: a copy with gen + 1.
func vectorTransform(obj any) (any, error) {
	o, ok := obj.(*metav1.PartialObjectMetadata)
	if !ok || o == nil {
		return nil, fmt.Errorf("transform: not a vector object: %T", obj)
	}
	c := o.DeepCopy()
	c.Generation++
	return c, nil
}

func vectorObjectOf(obj any) (traces.VObject, error) {
	o, ok := obj.(*metav1.PartialObjectMetadata)
	if !ok || o == nil {
		return traces.VObject{}, fmt.Errorf("object of type %T, not the vector's", obj)
	}
	return traces.VObject{Key: o.Name, Value: o.ResourceVersion, Gen: o.Generation}, nil
}

// vectorDeltas is how a vector writes the deltas a FIFO popped.
func vectorDeltas(ds []pfifo.Delta) ([]traces.VDelta, error) {
	out := make([]traces.VDelta, len(ds))
	for i, d := range ds {
		v := traces.VDelta{Type: d.Type}
		switch o := d.Object.(type) {
		case pfifo.Tombstone:
			v.Key, v.Tombstone = &o.Key, true
			if o.Obj != nil {
				obj, err := vectorObjectOf(o.Obj)
				if err != nil {
					return nil, fmt.Errorf("delta %d: tombstone %s: %v", i, o.Key, err)
				}
				if obj.Key != o.Key {
					return nil, fmt.Errorf("delta %d: tombstone %s carries an object of key %s", i, o.Key, obj.Key)
				}
				v.Value, v.Gen = &obj.Value, obj.Gen
			}
		case pfifo.ReplacedAll:
			v.RV = &o.ResourceVersion
			for j, x := range o.Objects {
				obj, err := vectorObjectOf(x)
				if err != nil {
					return nil, fmt.Errorf("delta %d: ReplacedAll object %d: %v", i, j, err)
				}
				v.Objects = append(v.Objects, obj)
			}
		case pfifo.Bookmark:
			v.RV = &o.ResourceVersion
		case pfifo.SyncAll:
		default:
			obj, err := vectorObjectOf(d.Object)
			if err != nil {
				return nil, fmt.Errorf("delta %d: %v", i, err)
			}
			v.Key, v.Value, v.Gen = &obj.Key, &obj.Value, obj.Gen
		}
		out[i] = v
	}
	return out, nil
}

// popped is what a pop's process func saw.
type popped struct {
	calls   int
	ds      []pfifo.Delta
	initial bool
	synced  bool // the FIFO's Done was closed while it ran
}

func (p *popped) process(f pfifo.FIFO) func([]pfifo.Delta, bool) error {
	return func(ds []pfifo.Delta, initial bool) error {
		p.calls++
		p.ds, p.initial = ds, initial
		// Done, not HasSynced: a FIFO that processes under its lock
		// cannot be asked HasSynced from here.
		select {
		case <-f.Done():
			p.synced = true
		default:
		}
		return nil
	}
}

// want is the outcome a vector writes for the pop: ok false when the call
// returned an error without calling a process func (a closed, empty
// FIFO).
func (p *popped) want(err error, syncDuring bool) (traces.Want, error) {
	ok := err == nil
	switch {
	case err != nil && p.calls == 0:
		return traces.Want{OK: &ok}, nil
	case err != nil:
		return traces.Want{}, fmt.Errorf("returned %v after its process func returned nil", err)
	case p.calls != 1:
		return traces.Want{}, fmt.Errorf("called its process funcs %d times, want once", p.calls)
	}
	ds, err := vectorDeltas(p.ds)
	if err != nil {
		return traces.Want{}, err
	}
	w := traces.Want{OK: &ok, Deltas: ds, Initial: &p.initial}
	if syncDuring {
		w.Synced = &p.synced
	}
	return w, nil
}

func popVector(f pfifo.FIFO, syncDuring bool) (traces.Want, error) {
	var p popped
	err := within(func() error { _, err := f.Pop(p.process(f)); return err })
	if errors.Is(err, errBlocked) {
		return traces.Want{}, err
	}
	return p.want(err, syncDuring)
}

// popReplaceVector pops with a process func that, once it has seen the
// pop, calls Replace(list, rv): the relist lands while the delta is
// processed (the vector's FIFO processes unlocked). The outcome is the
// pop's; a failed Replace fails the step.
func popReplaceVector(f pfifo.FIFO, list []any, rv string, syncDuring bool) (traces.Want, error) {
	var p popped
	var repErr error
	process := p.process(f)
	err := within(func() error {
		_, err := f.Pop(func(ds []pfifo.Delta, initial bool) error {
			perr := process(ds, initial)
			if p.calls == 1 {
				repErr = f.Replace(list, rv)
			}
			return perr
		})
		return err
	})
	switch {
	case errors.Is(err, errBlocked):
		return traces.Want{}, err
	case repErr != nil:
		return traces.Want{}, fmt.Errorf("the Replace made while the pop was processed: %w", repErr)
	}
	return p.want(err, syncDuring)
}

// popBatchVector pops a batch: one delta must go to the single func, more
// to the batch func (the vector's outcome does not say which was called).
func popBatchVector(f pfifo.FIFO, syncDuring bool) (traces.Want, error) {
	b, ok := f.(pfifo.Batcher)
	if !ok {
		return traces.Want{}, fmt.Errorf("no PopBatch on %T", f)
	}
	var batch, single popped
	err := within(func() error { return b.PopBatch(batch.process(f), single.process(f)) })
	if errors.Is(err, errBlocked) {
		return traces.Want{}, err
	}
	p := batch
	if single.calls > 0 {
		p = single
	}
	switch {
	case batch.calls > 0 && single.calls > 0:
		return traces.Want{}, fmt.Errorf("called the batch func %d times and the single func %d times, want one call", batch.calls, single.calls)
	case p.calls == 1 && (single.calls == 1) != (len(p.ds) == 1):
		return traces.Want{}, fmt.Errorf("handed %d deltas to the single=%t func: one delta goes to the single func, more to the batch func", len(p.ds), single.calls == 1)
	}
	return p.want(err, syncDuring)
}

var errBlocked = errors.New("blocked: a vector asks only calls that return")

// blockedAfter is how long within waits; a test that makes vectors block
// on purpose shortens it.
var blockedAfter = 10 * time.Second

// within runs call, giving up after blockedAfter: a FIFO that blocks
// where the vector says the call returns fails the vector instead of
// hanging the test (the replay's deferred Close wakes it).
func within(call func() error) error {
	done := make(chan error, 1)
	go func() { done <- call() }()
	select {
	case err := <-done:
		return err
	case <-time.After(blockedAfter):
		return fmt.Errorf("%w (for %v)", errBlocked, blockedAfter)
	}
}

// fifoLength is the FIFO's length, where it exports one: ours DeltaFIFO's
// ListKeys, the queued keys.
func fifoLength(f pfifo.FIFO) (func() int, bool) {
	switch l := ours.FIFOImpl(f).(type) {
	case interface{ Len() int }:
		return l.Len, true
	case interface{ ListKeys() []string }:
		return func() int { return len(l.ListKeys()) }, true
	}
	return nil, false
}

// TestVectorsFIFO: our DeltaFIFO and RealFIFO pass every vector meant for
// them; client-go's fail only vectors of the checks they declare a
// divergence for, and a declared divergence of a check that has vectors
// shows in at least one (client-go's DeltaFIFO syncs before the last
// initial pop is processed: deltafifo/synced). Every vector names a check
// the component has.
func TestVectorsFIFO(t *testing.T) {
	divs := slices.Concat(pinned(upstream.DeltaFIFODivergences), pinned(upstream.RealFIFODivergences))
	for _, c := range []struct {
		component string
		ours, up  pfifo.Subject
	}{
		{pfifo.DeltaComponent, ours.DeltaFIFO(), upstream.DeltaFIFO()},
		{pfifo.RealComponent, ours.RealFIFO(), upstream.RealFIFO()},
	} {
		vs := readVectors(t, c.component)
		counts := vectorChecks(t, c.component, vs, pfifo.Checks(c.ours))
		var totals [2]fifoReplayed // ours, upstream
		replayOn := func(s pfifo.Subject, total *fifoReplayed) func(traces.Vector) error {
			return func(v traces.Vector) error {
				n, err := replayFIFOVector(s, v)
				total.lenChecked += n.lenChecked
				total.lenSkipped += n.lenSkipped
				return err
			}
		}
		checkVectorReplays(t, c.component, vs, divs, covered(divs, counts), []vectorSubject{
			{name: Ours, replay: replayOn(c.ours, &totals[0])},
			{name: Upstream, replay: replayOn(c.up, &totals[1]), confirm: func(v traces.Vector) error { return declaredFIFOCase(c.up, v) }},
		})
		for i, name := range []string{Ours, Upstream} {
			t.Logf("%s %s: Len steps compared %d, skipped %d (no length exported)", name, c.component, totals[i].lenChecked, totals[i].lenSkipped)
		}
		if c.component == pfifo.DeltaComponent && totals[0].lenChecked == 0 {
			t.Errorf("no Len step of the deltafifo vectors was compared on ours")
		}
	}
}

// withoutSyncDuring replays v without its wants' synced outcomes, the
// one outcome client-go's declared FIFO divergence (deltafifo/synced)
// concerns: a vector that fails on client-go must pass so, or its failure
// is not the declared one.
// declaredFIFOCase confirms that a client-go FIFO failed a vector of a
// check it declares a divergence for because of the declared case: the
// vector makes its first relist while a delta popped before it is
// processed (a PopReplace before any Replace: RealFIFO's early sync), or
// it passes once the synced-during-processing flags are dropped
// (DeltaFIFO's sync before the last initial item is processed).
func declaredFIFOCase(s pfifo.Subject, v traces.Vector) error {
	for _, st := range v.Steps {
		if st.Op == "Replace" {
			break
		}
		if st.Op == "PopReplace" {
			return nil
		}
	}
	return withoutSyncDuring(s, v)
}

func withoutSyncDuring(s pfifo.Subject, v traces.Vector) error {
	if v.Header.Params["sync_during"] != 1 {
		return errors.New("the vector does not observe synced during processing, the declared divergence")
	}
	v.Header.Params = maps.Clone(v.Header.Params)
	v.Header.Params["sync_during"] = 0
	v.Steps = slices.Clone(v.Steps)
	for i, st := range v.Steps {
		if st.Want != nil && st.Want.Synced != nil {
			st = cloneStep(st)
			st.Want.Synced = nil
			v.Steps[i] = st
		}
	}
	_, err := replayFIFOVector(s, v)
	return err
}

// TestVectorsFIFOCompares: a FIFO vector with one outcome changed (a
// popped delta's value, type or tombstone mark, one delta fewer, the
// initial or synced flag, HasSynced's flag, Len, closed for a Pop that
// pops) fails on ours, and so does one with a changed input (a Replace
// that lists one object fewer, known objects that lose one), so the
// replay compares what the FIFO did, not what the vector says.
func TestVectorsFIFOCompares(t *testing.T) {
	// A changed input can leave a later Pop nothing to pop: it blocks,
	// which fails the vector as well as a wrong outcome does.
	defer func(d time.Duration) { blockedAfter = d }(blockedAfter)
	blockedAfter = 200 * time.Millisecond
	type change struct {
		name  string
		op    string // the first step of this op whose want (or input) the change applies to
		apply func(*traces.VStep) bool
	}
	first := func(s *traces.VStep) *traces.VDelta {
		if s.Want == nil || len(s.Want.Deltas) == 0 || s.Want.Deltas[0].Value == nil {
			return nil
		}
		return &s.Want.Deltas[0]
	}
	changes := []change{
		{"delta value", "Pop", func(s *traces.VStep) bool {
			d := first(s)
			if d == nil {
				return false
			}
			v := *d.Value + "0"
			d.Value = &v
			return true
		}},
		{"delta type", "Pop", func(s *traces.VStep) bool {
			d := first(s)
			if d == nil {
				return false
			}
			d.Type += "x"
			return true
		}},
		{"tombstone mark", "Pop", func(s *traces.VStep) bool {
			d := first(s)
			if d == nil {
				return false
			}
			d.Tombstone = !d.Tombstone
			return true
		}},
		{"one delta fewer", "PopBatch", func(s *traces.VStep) bool {
			if s.Want == nil || len(s.Want.Deltas) < 2 {
				return false
			}
			s.Want.Deltas = s.Want.Deltas[:len(s.Want.Deltas)-1]
			return true
		}},
		{"initial", "Pop", func(s *traces.VStep) bool {
			if s.Want == nil || s.Want.Initial == nil {
				return false
			}
			b := !*s.Want.Initial
			s.Want.Initial = &b
			return true
		}},
		{"synced", "Pop", func(s *traces.VStep) bool {
			if s.Want == nil || s.Want.Synced == nil {
				return false
			}
			b := !*s.Want.Synced
			s.Want.Synced = &b
			return true
		}},
		{"closed", "Pop", func(s *traces.VStep) bool {
			if s.Want == nil || s.Want.OK == nil || !*s.Want.OK {
				return false
			}
			no := false
			s.Want = &traces.Want{OK: &no}
			return true
		}},
		{"HasSynced", "HasSynced", func(s *traces.VStep) bool {
			b := !*s.Want.Flag
			s.Want.Flag = &b
			return true
		}},
		{"Len", "Len", func(s *traces.VStep) bool {
			n := *s.Want.N + 1
			s.Want.N = &n
			return true
		}},
		{"a Replace's list", "Replace", func(s *traces.VStep) bool {
			if len(s.Objects) == 0 {
				return false
			}
			s.Objects = s.Objects[1:]
			return true
		}},
		{"known objects", "Resync", func(s *traces.VStep) bool {
			if len(s.Known) == 0 {
				return false
			}
			s.Known = s.Known[1:]
			return true
		}},
	}
	for _, c := range []struct {
		component string
		ours      pfifo.Subject
	}{{pfifo.DeltaComponent, ours.DeltaFIFO()}, {pfifo.RealComponent, ours.RealFIFO()}} {
		vs := readVectors(t, c.component)
		for _, ch := range changes {
			tried, caught := 0, 0
			for _, v := range vs {
				if tried == 20 {
					break
				}
				steps := slices.Clone(v.Steps)
				i := slices.IndexFunc(steps, func(s traces.VStep) bool {
					if s.Op != ch.op {
						return false
					}
					probe := cloneStep(s)
					return ch.apply(&probe)
				})
				if i < 0 {
					continue
				}
				steps[i] = cloneStep(steps[i])
				ch.apply(&steps[i])
				tried++
				if _, err := replayFIFOVector(c.ours, traces.Vector{Header: v.Header, Steps: steps}); err != nil {
					caught++
				} else if ch.op != "Replace" && ch.op != "Resync" {
					t.Errorf("%s vector %d with its %s changed at step %d passes on ours", c.component, v.Header.Seed, ch.name, i)
				}
			}
			// A changed input need not change every later outcome (an
			// object listed, then popped with nothing else to tell), but
			// must change some.
			switch {
			case tried == 0 && !(c.component == pfifo.RealComponent && ch.op == "Len") && !(c.component == pfifo.DeltaComponent && ch.op == "PopBatch"):
				t.Errorf("no %s vector to change the %s of", c.component, ch.name)
			case tried > 0 && caught == 0:
				t.Errorf("%s: %d vectors with their %s changed all pass on ours", c.component, tried, ch.name)
			}
		}
	}
}

// cloneStep copies s deeply enough for a change to leave the original
// alone.
func cloneStep(s traces.VStep) traces.VStep {
	s.Objects, s.Known, s.Events = slices.Clone(s.Objects), slices.Clone(s.Known), slices.Clone(s.Events)
	if s.Want != nil {
		w := *s.Want
		w.Deltas, w.Calls, w.Objects, w.RVs = slices.Clone(w.Deltas), slices.Clone(w.Calls), slices.Clone(w.Objects), slices.Clone(w.RVs)
		s.Want = &w
	}
	return s
}
