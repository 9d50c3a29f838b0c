package fifo

import (
	"fmt"
	"testing"
)

func mkObj(key string, v int) Obj { return Obj{Key: key, Version: v} }

// busyDelta is a DeltaFIFO with several keys queued, deltas merged, a
// tombstone, an initial population and a pop behind it: every field set.
func busyDelta() *DeltaFIFO {
	f := NewDeltaFIFO(true, true)
	f.Add(mkObj("a", 1))
	f.Update(mkObj("a", 2))
	f.Add(mkObj("b", 3))
	f.Replace([]Obj{mkObj("b", 4), mkObj("c", 5)}, Known{"k": mkObj("k", 6)})
	f.Delete(mkObj("c", 7), nil)
	if _, _, ok := f.Pop(); !ok {
		panic("nothing to pop")
	}
	f.Popped()
	return f
}

func busyReal() *RealFIFO {
	f := NewRealFIFO(true, true, true)
	f.Add(mkObj("a", 1))
	f.Replace([]Obj{mkObj("b", 2), mkObj("c", 3)}, "3", nil)
	f.Update(mkObj("a", 4))
	f.Bookmark("4")
	f.Resync(nil)
	if _, _, ok := f.Pop(); !ok {
		panic("nothing to pop")
	}
	f.Popped(1)
	return f
}

// mutateDelta drives f through every method that changes it.
func mutateDelta(f *DeltaFIFO) {
	f.Add(mkObj("a", 100))
	f.Update(mkObj("d", 101))
	f.Delete(mkObj("b", 102), nil)
	f.Replace([]Obj{mkObj("d", 103)}, Known{"k": mkObj("k", 104)})
	f.Resync(Known{"z": mkObj("z", 105)})
	for {
		ds, _, ok := f.Pop()
		if !ok {
			break
		}
		for i := range ds {
			ds[i].Obj.Version = -1 // a caller scribbling on what it popped
		}
		f.Popped()
	}
	f.Add(mkObj("e", 106))
	f.Close()
}

func mutateReal(f *RealFIFO) {
	f.Add(mkObj("a", 100))
	f.Delete(mkObj("x", 101))
	f.Replace([]Obj{mkObj("d", 102)}, "102", nil)
	f.Bookmark("103")
	f.Resync(nil)
	if b, _, ok := f.PopBatch(); ok {
		for i := range b {
			b[i].Obj.Version = -1
		}
		f.Popped(len(b))
	}
	for {
		d, _, ok := f.Pop()
		if !ok {
			break
		}
		if len(d.Objects) > 0 {
			d.Objects[0].Version = -1
		}
		f.Popped(1)
	}
	f.Add(mkObj("e", 104))
	f.Close()
}

func TestDeltaFIFOCloneIndependent(t *testing.T) {
	// The clone is stepped: the original must not change.
	orig := busyDelta()
	before, deltas := orig.Key(), deltaContents(orig)
	c := orig.Clone()
	if c.Key() != before {
		t.Fatalf("clone Key %s, original %s", c.Key(), before)
	}
	mutateDelta(c)
	if orig.Key() != before || deltaContents(orig) != deltas {
		t.Fatalf("stepping the clone changed the original:\n got %s\nwant %s", orig.Key(), before)
	}
	if c.Key() == before {
		t.Fatalf("the clone did not change: %s", c.Key())
	}
	// The original is stepped: the clone must not change.
	orig = busyDelta()
	c = orig.Clone()
	before = c.Key()
	mutateDelta(orig)
	if c.Key() != before {
		t.Fatalf("stepping the original changed the clone:\n got %s\nwant %s", c.Key(), before)
	}
	// Both stepped alike stay alike.
	a, b := busyDelta(), busyDelta().Clone()
	mutateDelta(a)
	mutateDelta(b)
	if a.Key() != b.Key() {
		t.Fatalf("the same calls on a model and a clone differ:\n%s\n%s", a.Key(), b.Key())
	}
}

func TestRealFIFOCloneIndependent(t *testing.T) {
	orig := busyReal()
	before, items := orig.Key(), Deltas(orig.Items())
	c := orig.Clone()
	if c.Key() != before {
		t.Fatalf("clone Key %s, original %s", c.Key(), before)
	}
	mutateReal(c)
	if orig.Key() != before || Deltas(orig.Items()) != items {
		t.Fatalf("stepping the clone changed the original:\n got %s\nwant %s", orig.Key(), before)
	}
	if c.Key() == before {
		t.Fatalf("the clone did not change: %s", c.Key())
	}
	orig = busyReal()
	c = orig.Clone()
	before = c.Key()
	mutateReal(orig)
	if c.Key() != before {
		t.Fatalf("stepping the original changed the clone:\n got %s\nwant %s", c.Key(), before)
	}
	a, b := busyReal(), busyReal().Clone()
	mutateReal(a)
	mutateReal(b)
	if a.Key() != b.Key() {
		t.Fatalf("the same calls on a model and a clone differ:\n%s\n%s", a.Key(), b.Key())
	}
}

// TestCloneSharesNoArray catches a clone that copies slice headers: spare
// capacity behind a popped head is where an append of one would land in
// the other.
func TestCloneSharesNoArray(t *testing.T) {
	r := NewRealFIFO(true, false, false)
	for i := range 8 {
		r.Add(mkObj("a", i))
	}
	r.Pop()
	rc := r.Clone()
	r.Add(mkObj("x", 100))
	rc.Add(mkObj("y", 200))
	if got := Deltas(r.Items()); got != "[Added(a@1) Added(a@2) Added(a@3) Added(a@4) Added(a@5) Added(a@6) Added(a@7) Added(x@100)]" {
		t.Fatalf("original after both appended: %s", got)
	}
	if got := Deltas(rc.Items()); got != "[Added(a@1) Added(a@2) Added(a@3) Added(a@4) Added(a@5) Added(a@6) Added(a@7) Added(y@200)]" {
		t.Fatalf("clone after both appended: %s", got)
	}

	d := NewDeltaFIFO(false, false)
	for i := range 8 {
		d.Add(mkObj(fmt.Sprint("k", i), i))
	}
	d.Pop()
	dc := d.Clone()
	d.Add(mkObj("x", 100))
	dc.Add(mkObj("y", 200))
	if got := fmt.Sprint(d.Keys()); got != "[k1 k2 k3 k4 k5 k6 k7 x]" {
		t.Fatalf("original after both appended: %s", got)
	}
	if got := fmt.Sprint(dc.Keys()); got != "[k1 k2 k3 k4 k5 k6 k7 y]" {
		t.Fatalf("clone after both appended: %s", got)
	}
}

func deltaContents(f *DeltaFIFO) string {
	s := ""
	for _, k := range f.Keys() {
		s += k + Deltas(f.Queued(k))
	}
	return s
}

func TestKeyCanonical(t *testing.T) {
	// Built twice by the same calls (map order differs run to run): equal.
	build := func() *DeltaFIFO {
		f := NewDeltaFIFO(false, false)
		for i := range 20 {
			f.Add(mkObj(fmt.Sprint("k", i), i))
		}
		f.Replace([]Obj{mkObj("k3", 50)}, Known{"z": mkObj("z", 1), "y": mkObj("y", 2)})
		return f
	}
	if a, b := build().Key(), build().Key(); a != b {
		t.Fatalf("equal DeltaFIFOs have different Keys:\n%s\n%s", a, b)
	}
	// Anything observable differs.
	base := func() *DeltaFIFO { f := NewDeltaFIFO(false, false); f.Add(mkObj("a", 1)); return f }
	variants := map[string]func(*DeltaFIFO){
		"another version":  func(f *DeltaFIFO) { f.items["a"][0].Obj.Version = 2 },
		"transformed":      func(f *DeltaFIFO) { f.items["a"][0].Obj.Gen = 1 },
		"another type":     func(f *DeltaFIFO) { f.items["a"][0].Type = Updated },
		"tombstone":        func(f *DeltaFIFO) { f.items["a"][0].Tombstone = true },
		"closed":           func(f *DeltaFIFO) { f.Close() },
		"not synced":       func(f *DeltaFIFO) { f.sync.synced = false },
		"initial count":    func(f *DeltaFIFO) { f.sync.count = 1 },
		"emit replaced":    func(f *DeltaFIFO) { f.EmitReplaced = true },
		"a second delta":   func(f *DeltaFIFO) { f.Update(mkObj("a", 2)) },
		"a second key":     func(f *DeltaFIFO) { f.Update(mkObj("b", 2)) },
		"a stray item":     func(f *DeltaFIFO) { f.items["s"] = []Delta{Of(Added, mkObj("s", 1))} },
		"key with a quote": func(f *DeltaFIFO) { f.queue[0] = `a"`; f.items[`a"`] = f.items["a"]; delete(f.items, "a") },
	}
	keys := map[string]string{base().Key(): "base"}
	for name, change := range variants {
		f := base()
		change(f)
		if other, dup := keys[f.Key()]; dup {
			t.Errorf("%s has the Key of %s: %s", name, other, f.Key())
		}
		keys[f.Key()] = name
	}

	r1, r2 := NewRealFIFO(true, false, false), NewRealFIFO(true, false, false)
	r1.Replace(nil, "1", nil)
	r2.Replace([]Obj{}, "1", nil)
	if r1.Key() != r2.Key() {
		t.Fatalf("ReplacedAll of a nil and of an empty list differ:\n%s\n%s", r1.Key(), r2.Key())
	}
	r2.Replace([]Obj{mkObj("a", 1)}, "1", nil)
	r1.Replace([]Obj{mkObj("a", 2)}, "1", nil)
	if r1.Key() == r2.Key() {
		t.Fatalf("ReplacedAll of different lists share a Key: %s", r1.Key())
	}
}
