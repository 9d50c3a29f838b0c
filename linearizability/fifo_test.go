package linearizability

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/anishathalye/porcupine"
	spec "github.com/kverify/kverify/spec/fifo"
)

// Hand-written FIFO histories. Each call is (client, call, return).

func fop(c int, call, ret int64, in FIFOInput, out FIFOOutput) porcupine.Operation {
	return porcupine.Operation{ClientId: c, Call: call, Return: ret, Input: in, Output: out}
}

func fobj(key string, v int) spec.Obj { return spec.Obj{Key: key, Version: v} }

func fAdd(c int, call, ret int64, key string, v int) porcupine.Operation {
	return fop(c, call, ret, FIFOInput{Op: FIFOAdd, Obj: fobj(key, v)}, FIFOOutput{})
}

func fUpdate(c int, call, ret int64, key string, v int) porcupine.Operation {
	return fop(c, call, ret, FIFOInput{Op: FIFOUpdate, Obj: fobj(key, v)}, FIFOOutput{})
}

func fDelete(c int, call, ret int64, key string, v int) porcupine.Operation {
	return fop(c, call, ret, FIFOInput{Op: FIFODelete, Obj: fobj(key, v)}, FIFOOutput{})
}

func fReplace(c int, call, ret int64, rv string, list ...spec.Obj) porcupine.Operation {
	return fop(c, call, ret, FIFOInput{Op: FIFOReplace, List: list, RV: rv}, FIFOOutput{})
}

func fPop(c int, call, ret int64, initial bool, ds ...spec.Delta) porcupine.Operation {
	return fop(c, call, ret, FIFOInput{Op: FIFOPop}, FIFOOutput{Deltas: spec.Deltas(ds), Initial: initial})
}

func fPopClosed(c int, call, ret int64) porcupine.Operation {
	return fop(c, call, ret, FIFOInput{Op: FIFOPop}, FIFOOutput{Closed: true})
}

func fClose(c int, call, ret int64) porcupine.Operation {
	return fop(c, call, ret, FIFOInput{Op: FIFOClose}, FIFOOutput{})
}

func fSynced(c int, call, ret int64, synced bool) porcupine.Operation {
	return fop(c, call, ret, FIFOInput{Op: FIFOHasSynced}, FIFOOutput{Synced: synced})
}

func added(key string, v int) spec.Delta   { return spec.Of(spec.Added, fobj(key, v)) }
func updated(key string, v int) spec.Delta { return spec.Of(spec.Updated, fobj(key, v)) }
func deleted(key string, v int) spec.Delta { return spec.Of(spec.Deleted, fobj(key, v)) }

var (
	deltaFIFO = FIFOConfig{}
	realFIFO  = FIFOConfig{Real: true}
)

var fifoCases = []struct {
	name string
	c    FIFOConfig
	want porcupine.CheckResult
	h    []porcupine.Operation
}{
	{"deltas accumulate per key", deltaFIFO, porcupine.Ok, []porcupine.Operation{
		fAdd(0, 1, 2, "a", 1), fAdd(0, 3, 4, "b", 2), fUpdate(0, 5, 6, "a", 3),
		fPop(1, 7, 8, false, added("a", 1), updated("a", 3)), fPop(1, 9, 10, false, added("b", 2))}},
	{"DeltaFIFO pops LIFO", deltaFIFO, porcupine.Illegal, []porcupine.Operation{
		fAdd(0, 1, 2, "a", 1), fAdd(0, 3, 4, "b", 2), fPop(1, 5, 6, false, added("b", 2))}},
	{"RealFIFO one delta per event", realFIFO, porcupine.Ok, []porcupine.Operation{
		fAdd(0, 1, 2, "a", 1), fUpdate(0, 3, 4, "a", 2),
		fPop(1, 5, 6, false, added("a", 1)), fPop(1, 7, 8, false, updated("a", 2))}},
	{"RealFIFO merges deltas", realFIFO, porcupine.Illegal, []porcupine.Operation{
		fAdd(0, 1, 2, "a", 1), fUpdate(0, 3, 4, "a", 2),
		fPop(1, 5, 6, false, added("a", 1), updated("a", 2))}},
	{"concurrent adds pop in either order", deltaFIFO, porcupine.Ok, []porcupine.Operation{
		fAdd(0, 1, 4, "a", 1), fAdd(1, 2, 3, "b", 2),
		fPop(2, 5, 6, false, added("b", 2)), fPop(2, 7, 8, false, added("a", 1))}},
	{"a blocked pop takes what comes later", realFIFO, porcupine.Ok, []porcupine.Operation{
		fPop(1, 1, 10, false, added("a", 1)), fAdd(0, 5, 6, "a", 1)}},
	{"a pop returns what nobody added", realFIFO, porcupine.Illegal, []porcupine.Operation{
		fPop(1, 1, 4, false, added("a", 1)), fAdd(0, 5, 6, "a", 1)}},
	{"close releases a blocked pop", deltaFIFO, porcupine.Ok, []porcupine.Operation{
		fPopClosed(1, 1, 10), fClose(0, 2, 3), fPopClosed(2, 11, 12)}},
	{"closed before close", deltaFIFO, porcupine.Illegal, []porcupine.Operation{
		fPopClosed(1, 1, 2), fClose(0, 3, 4)}},
	{"pop reports closed with items queued", deltaFIFO, porcupine.Illegal, []porcupine.Operation{
		fAdd(0, 1, 2, "a", 1), fClose(0, 3, 4), fPopClosed(1, 5, 6)}},
	{"queued items pop after close", deltaFIFO, porcupine.Ok, []porcupine.Operation{
		fAdd(0, 1, 2, "a", 1), fClose(0, 3, 4), fPop(1, 5, 6, false, added("a", 1)), fPopClosed(1, 7, 8)}},
	{"duplicate pop", realFIFO, porcupine.Illegal, []porcupine.Operation{
		fAdd(0, 1, 2, "a", 1), fPop(1, 3, 6, false, added("a", 1)), fPop(2, 4, 5, false, added("a", 1))}},
	{"delete of an unqueued key is dropped without known objects", deltaFIFO, porcupine.Ok, []porcupine.Operation{
		fDelete(0, 1, 2, "a", 1), fAdd(0, 3, 4, "b", 2), fPop(1, 5, 6, false, added("b", 2))}},
	{"delete of a queued key accumulates", deltaFIFO, porcupine.Ok, []porcupine.Operation{
		fAdd(0, 1, 2, "a", 1), fDelete(0, 3, 4, "a", 2), fPop(1, 5, 6, false, added("a", 1), deleted("a", 2))}},
	{"initial list: pops flagged, synced after the last", deltaFIFO, porcupine.Ok, []porcupine.Operation{
		fReplace(0, 1, 2, "9", fobj("a", 1), fobj("b", 2)), fSynced(0, 3, 4, false),
		fPop(1, 5, 6, true, spec.Of(spec.Sync, fobj("a", 1))), fSynced(0, 7, 8, false),
		fPop(1, 9, 10, true, spec.Of(spec.Sync, fobj("b", 2))), fSynced(0, 11, 12, true)}},
	{"synced before the initial list popped", deltaFIFO, porcupine.Illegal, []porcupine.Operation{
		fReplace(0, 1, 2, "9", fobj("a", 1)), fSynced(0, 3, 4, true)}},
	{"synced concurrent with the last initial pop", realFIFO, porcupine.Ok, []porcupine.Operation{
		fReplace(0, 1, 2, "9", fobj("a", 1)), fPop(1, 3, 8, true, spec.Delta{Type: spec.ReplacedAll, Objects: []spec.Obj{fobj("a", 1)}, RV: "9"}),
		fSynced(0, 4, 5, false), fSynced(0, 6, 7, true)}},
	{"synced reverts", realFIFO, porcupine.Illegal, []porcupine.Operation{
		fReplace(0, 1, 2, "9", fobj("a", 1)), fPop(1, 3, 8, true, spec.Delta{Type: spec.ReplacedAll, Objects: []spec.Obj{fobj("a", 1)}, RV: "9"}),
		fSynced(0, 9, 10, true), fSynced(0, 11, 12, false)}},
	{"an error is never linearizable", realFIFO, porcupine.Illegal, []porcupine.Operation{
		fop(0, 1, 2, FIFOInput{Op: FIFOAdd, Obj: fobj("a", 1)}, FIFOOutput{Err: "boom"})}},
}

func TestFIFOModel(t *testing.T) {
	for _, c := range fifoCases {
		t.Run(c.name, func(t *testing.T) {
			res, info := CheckSteps(FIFOModel(c.c), c.h, DefaultSteps)
			if res != c.want {
				t.Fatalf("%s on\n%s\nwant %s", res, DescribeFIFOHistory(c.h), c.want)
			}
			if res != porcupine.Illegal {
				return
			}
			dir := t.TempDir()
			html, js, err := SaveFIFOFailure(dir, "case "+c.name, c.c, c.h, info)
			if err != nil || html == "" || js == "" {
				t.Fatalf("SaveFIFOFailure: %q %q %v", html, js, err)
			}
			f, h, err := LoadFIFOHistory(js)
			if err != nil {
				t.Fatal(err)
			}
			if f.Config != c.c {
				t.Fatalf("loaded config %+v, saved %+v", f.Config, c.c)
			}
			if got, want := DescribeFIFOHistory(h), DescribeFIFOHistory(c.h); got != want {
				t.Fatalf("loaded history\n%s\nsaved\n%s", got, want)
			}
			if res, _ := CheckSteps(FIFOModel(f.Config), h, DefaultSteps); res != porcupine.Illegal {
				t.Fatalf("the loaded history checks %s", res)
			}
			if filepath.Dir(html) != dir || !strings.HasSuffix(html, ".html") {
				t.Fatalf("visualisation at %s", html)
			}
		})
	}
}

// TestFIFOModelPure: a step never changes the state it was given, and the
// transform and emit-replaced options reach the spec.
func TestFIFOModelPure(t *testing.T) {
	m := FIFOModel(FIFOConfig{EmitReplaced: true, Transform: true})
	s0 := m.Init()
	before := s0.(infState).key
	ok, s1 := m.Step(s0, FIFOInput{Op: FIFOReplace, List: []spec.Obj{fobj("a", 1)}, RV: "1"}, FIFOOutput{})
	if !ok || s0.(infState).key != before || s0.(infState).d.Key() != before {
		t.Fatalf("Replace changed its input state or failed: ok=%t, %s", ok, s0.(infState).d.Key())
	}
	want := spec.Deltas([]spec.Delta{spec.Of(spec.Replaced, spec.Obj{Key: "a", Version: 1, Gen: 1})})
	mid := s1.(infState).key
	if ok, _ := m.Step(s1, FIFOInput{Op: FIFOPop}, FIFOOutput{Deltas: want, Initial: true}); !ok {
		t.Fatalf("Pop of %s not accepted in %s", want, m.DescribeState(s1))
	}
	if s1.(infState).key != mid || s1.(infState).d.Key() != mid {
		t.Fatalf("Pop changed its input state")
	}
	if ok, _ := m.Step(m.Init(), FIFOInput{Op: FIFOPop}, FIFOOutput{Closed: true}); ok {
		t.Fatalf("a Pop on an empty open FIFO was enabled")
	}
}
