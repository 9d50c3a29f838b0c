package fifo

import (
	"errors"
	"testing"
)

func o(key string, v int) Obj { return Obj{Key: key, Version: v} }

func bad(key string, v int, f Fault) Obj { return Obj{Key: key, Version: v, Fault: f} }

// popAll pops a model DeltaFIFO dry, processing each pop.
func popAllDelta(f *DeltaFIFO) []string {
	var out []string
	for {
		ds, initial, ok := f.Pop()
		if !ok {
			return out
		}
		f.Popped()
		s := Deltas(ds)
		if initial {
			s += " initial"
		}
		out = append(out, s)
	}
}

func popAllReal(f *RealFIFO) []string {
	var out []string
	for {
		d, initial, ok := f.Pop()
		if !ok {
			return out
		}
		f.Popped(1)
		s := d.String()
		if initial {
			s += " initial"
		}
		out = append(out, s)
	}
}

func same(t *testing.T, what string, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: popped %q, want %q", what, got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%s: popped %q, want %q", what, got, want)
		}
	}
}

// A relist may list a key twice (client-go's Replace takes the list as
// given): a delta per listing, the key counted once in the initial
// population (delta_fifo.go:631-640, 692-696).
func TestDeltaReplaceDuplicateKeys(t *testing.T) {
	f := NewDeltaFIFO(false, false)
	f.Replace([]Obj{o("a", 1), o("b", 2), o("a", 3)}, Known{})
	if got := popAllDelta(f); len(got) != 2 || !f.Synced() {
		t.Fatalf("popped %q, synced=%t; want a's two syncs and b's, synced after two pops", got, f.Synced())
	}
	same(t, "after", func() []string { f.Add(o("c", 4)); return popAllDelta(f) }(), []string{"[Added(c@4)]"})
}

// An empty relist tombstones everything queued and known, and is the
// initial population like any first Replace.
func TestEmptyReplace(t *testing.T) {
	d := NewDeltaFIFO(true, false)
	d.Add(o("a", 1))
	d.Replace(nil, Known{"k": o("k", 9)})
	same(t, "DeltaFIFO", popAllDelta(d), []string{"[Added(a@1) Deleted(DFSU a@1)]", "[Deleted(DFSU k@9)]"})

	r := NewRealFIFO(false, false, false)
	r.Replace(nil, "1", Known{"k": o("k", 9)})
	if r.Synced() {
		t.Fatal("RealFIFO synced before its initial tombstone popped")
	}
	same(t, "RealFIFO", popAllReal(r), []string{"Deleted(DFSU k@9) initial"})
	if !r.Synced() {
		t.Fatal("RealFIFO not synced after its initial population")
	}
}

// Producers given an object without a key: DeltaFIFO's Add and Update, and
// every RealFIFO producer, populate the FIFO first; DeltaFIFO's Delete keys
// first and does not.
func TestRejectedProducers(t *testing.T) {
	d := NewDeltaFIFO(false, false)
	if _, err := d.DeleteIn(bad("a", 1, NoKey), Lookup{}); !errors.Is(err, ErrKey) || d.Populated() {
		t.Fatalf("DeltaFIFO Delete without a key: %v, populated=%t; want ErrKey, unpopulated", err, d.Populated())
	}
	if err := d.Update(bad("a", 1, NoKey)); !errors.Is(err, ErrKey) || !d.Synced() || d.Len() != 0 {
		t.Fatalf("DeltaFIFO Update without a key: %v, synced=%t, %d queued; want ErrKey, synced, nothing", err, d.Synced(), d.Len())
	}
	r := NewRealFIFO(true, false, false)
	if err := r.Delete(bad("a", 1, NoKey)); !errors.Is(err, ErrKey) || !r.Synced() || r.Len() != 0 {
		t.Fatalf("RealFIFO Delete without a key: %v, synced=%t; want ErrKey, synced", err, r.Synced())
	}
}

// The transformer's rejection: an error, nothing queued, populated; a
// DeltaFIFO Delete the rules drop never meets the transformer.
func TestTransformRejected(t *testing.T) {
	d := NewDeltaFIFO(false, true)
	if ok, err := d.DeleteIn(bad("a", 1, NoTransform), LookupOf(Known{})); ok || err != nil || !d.Synced() {
		t.Fatalf("dropped Delete: %t, %v; want dropped, no error, populated", ok, err)
	}
	if _, err := d.DeleteIn(bad("k", 2, NoTransform), LookupOf(Known{"k": o("k", 1)})); !errors.Is(err, ErrTransform) {
		t.Fatalf("Delete of a known key: %v, want ErrTransform", err)
	}
	if err := d.Add(bad("b", 3, NoTransform)); !errors.Is(err, ErrTransform) || d.Len() != 0 {
		t.Fatalf("Add: %v, %d queued", err, d.Len())
	}
	// Without a transformer the object is an ordinary one.
	n := NewDeltaFIFO(false, false)
	if err := n.Add(bad("b", 3, NoTransform)); err != nil || n.Len() != 1 {
		t.Fatalf("Add without a transformer: %v, %d queued", err, n.Len())
	}
}

// A Replace whose list holds a rejected object: an error, the FIFO as it
// was and not populated (the suite's all-or-nothing contract).
func TestFailedReplaceChangesNothing(t *testing.T) {
	for _, f := range []Fault{NoKey, NoTransform} {
		d := NewDeltaFIFO(false, true)
		d.Resync(Known{"k": o("k", 1)})
		if err := d.ReplaceIn([]Obj{o("a", 2), bad("b", 3, f)}, LookupOf(Known{"k": o("k", 1)})); err == nil || d.Populated() {
			t.Fatalf("DeltaFIFO %s: %v, populated=%t", f, err, d.Populated())
		}
		same(t, "DeltaFIFO "+f.String(), popAllDelta(d), []string{"[Sync(k@1)] initial"})

		for _, atomic := range []bool{false, true} {
			r := NewRealFIFO(atomic, true, false)
			r.Add(o("q", 1))
			var known Known
			if !atomic {
				known = Known{"k": o("k", 1)}
			}
			if err := r.ReplaceIn([]Obj{o("a", 2), bad("b", 3, f)}, "3", LookupOf(known)); err == nil {
				t.Fatalf("RealFIFO atomic=%t %s: no error", atomic, f)
			}
			same(t, "RealFIFO "+f.String(), popAllReal(r), []string{"Added(q@1/t1)"})
		}
	}
}

// A failing known-objects store: DeltaFIFO's Delete queues what it cannot
// look up and drops a key the store lists but does not have; Replace
// tombstones without an object (with the keyless one the store returned);
// Resync skips, and stops with an error at a keyless object.
func TestKnownFaults(t *testing.T) {
	known := Known{"a": o("a", 1), "b": o("b", 2), "c": o("c", 3)}
	d := NewDeltaFIFO(false, false)
	if ok, err := d.DeleteIn(o("x", 4), Lookup{Objects: known, Failing: map[string]bool{"x": true}}); !ok || err != nil {
		t.Fatalf("Delete with a failed lookup: %t, %v; want queued", ok, err)
	}
	if ok, _ := d.DeleteIn(o("a", 5), Lookup{Objects: known, Ghost: "a"}); ok {
		t.Fatal("Delete of a key the store does not have: queued, want dropped")
	}
	popAllDelta(d)
	l := Lookup{Objects: known, Failing: map[string]bool{"a": true}, Ghost: "g", Foreign: bad("c", 7, NoKey)}
	d.ReplaceIn([]Obj{o("z", 8)}, l)
	same(t, "Replace", popAllDelta(d), []string{"[Sync(z@8)]", "[Deleted(DFSU a <nil>)]", "[Deleted(DFSU b@2)]", "[Deleted(DFSU c@7!nokey)]", "[Deleted(DFSU g <nil>)]"})

	d.Add(o("b", 9))
	if err := d.ResyncIn(Lookup{Objects: known, Failing: map[string]bool{"a": true}, Foreign: bad("b", 10, NoKey)}); !errors.Is(err, ErrKey) {
		t.Fatalf("DeltaFIFO Resync at a keyless object (its key queued): %v, want ErrKey", err)
	}
	same(t, "DeltaFIFO Resync", popAllDelta(d), []string{"[Added(b@9)]"})

	r := NewRealFIFO(false, false, false)
	r.Add(o("b", 9))
	if err := r.ResyncIn(Lookup{Objects: known, Failing: map[string]bool{"a": true}, Foreign: bad("b", 10, NoKey)}); err != nil {
		t.Fatalf("RealFIFO Resync: %v; the keyless object's key is queued, so it is not looked up", err)
	}
	same(t, "RealFIFO Resync", popAllReal(r), []string{"Added(b@9)", "Sync(c@3)"})
	if err := r.ResyncIn(Lookup{Objects: known, Ghost: "a", Foreign: bad("b", 10, NoKey)}); !errors.Is(err, ErrKey) {
		t.Fatalf("RealFIFO Resync at a keyless object: %v, want ErrKey", err)
	}
	same(t, "RealFIFO Resync stopped", popAllReal(r), nil)
}

// An atomic relist listing a key twice: the ReplacedAll lists it twice;
// processing compares each listing with the store before the relist (two
// adds), and the store keeps the last (controller.go:972-1016).
func TestReplacedAllDuplicateKeys(t *testing.T) {
	r := NewRealFIFO(true, false, false)
	r.Replace([]Obj{o("a", 1), o("a", 2)}, "2", nil)
	d, _, _ := r.Pop()
	s := NewStore()
	ev := s.Process([]Delta{d}, true)
	if len(ev) != 2 || ev[0].Kind != "add" || ev[1].Kind != "add" || s.Objects["a"] != o("a", 2) {
		t.Fatalf("events %v, store %v; want two adds, a@2 stored", ev, s.Objects)
	}
}
