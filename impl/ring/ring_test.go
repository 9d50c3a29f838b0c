package ring

import (
	"math/rand/v2"
	"slices"
	"testing"

	"k8s.io/utils/buffer"
)

// TestGrowingUpstreamProbes pins the probes of upstream-behaviour.md §1.3.
func TestGrowingUpstreamProbes(t *testing.T) {
	r := NewGrowing[int](1)
	for i := range 10 {
		r.WriteOne(i)
	}
	if r.Cap() != 16 {
		t.Fatalf("initial 1, 10 writes: cap %d, want 16", r.Cap())
	}
	var z Growing[int]
	z.WriteOne(1)
	if z.Cap() != DefaultSize {
		t.Fatalf("zero value after a write: cap %d, want %d", z.Cap(), DefaultSize)
	}
	// Growth while wrapped: cap 4, write 0..3, read 2, write 4,5,6.
	w := NewGrowing[int](4)
	for i := range 4 {
		w.WriteOne(i)
	}
	w.ReadOne()
	w.ReadOne()
	for i := 4; i < 7; i++ {
		w.WriteOne(i)
	}
	var got []int
	for {
		x, ok := w.ReadOne()
		if !ok {
			break
		}
		got = append(got, x)
	}
	if !slices.Equal(got, []int{2, 3, 4, 5, 6}) || w.Cap() != 8 {
		t.Fatalf("wrapped growth: got %v cap %d, want [2 3 4 5 6] cap 8", got, w.Cap())
	}
}

func TestNegativeSizes(t *testing.T) {
	g := NewGrowing[int](-5)
	if g.Cap() != 0 || g.Len() != 0 {
		t.Fatalf("NewGrowing(-5): len %d cap %d", g.Len(), g.Cap())
	}
	g.WriteOne(1)
	if g.Cap() != DefaultSize {
		t.Fatalf("NewGrowing(-5) after a write: cap %d", g.Cap())
	}
	c := NewChunked[int](-5)
	if c.ChunkSize() != DefaultChunkSize || c.Cap() != 0 {
		t.Fatalf("NewChunked(-5): chunk %d cap %d", c.ChunkSize(), c.Cap())
	}
	c.WriteOne(1)
	if c.Cap() != DefaultChunkSize {
		t.Fatalf("NewChunked(-5) after a write: cap %d", c.Cap())
	}
}

// TestAgainstUpstream drives Growing and Chunked next to upstream's
// TypedRingGrowing with a random workload and compares every result.
func TestAgainstUpstream(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, size := range []int{0, 1, 3, 16} {
		up := buffer.NewTypedRingGrowing[int](buffer.RingGrowingOptions{InitialSize: size})
		g := NewGrowing[int](size)
		c := NewChunked[int](size)
		next := 0
		for range 20000 {
			if rng.IntN(100) < 52 {
				up.WriteOne(next)
				g.WriteOne(next)
				c.WriteOne(next)
				next++
			} else {
				ux, uok := up.ReadOne()
				gx, gok := g.ReadOne()
				cx, cok := c.ReadOne()
				if gx != ux || gok != uok || cx != ux || cok != uok {
					t.Fatalf("size %d: read upstream (%d,%v) growing (%d,%v) chunked (%d,%v)", size, ux, uok, gx, gok, cx, cok)
				}
			}
			if g.Len() != up.Len() || g.Cap() != up.Cap() || c.Len() != up.Len() {
				t.Fatalf("size %d: upstream len %d cap %d, growing len %d cap %d, chunked len %d", size, up.Len(), up.Cap(), g.Len(), g.Cap(), c.Len())
			}
			k := c.ChunkSize()
			if c.Cap()%k != 0 || c.Cap() < c.Len() || (c.Len() > 0 && c.Cap() > c.Len()+3*k-2) {
				t.Fatalf("size %d: chunked len %d cap %d (chunk %d)", size, c.Len(), c.Cap(), k)
			}
		}
	}
}

// TestChunkedGivesMemoryBack: after a burst drains, one chunk is left.
func TestChunkedGivesMemoryBack(t *testing.T) {
	c := NewChunked[int](0)
	for i := range 100_000 {
		c.WriteOne(i)
	}
	for i := range 100_000 {
		if x, ok := c.ReadOne(); !ok || x != i {
			t.Fatalf("read %d: (%d,%v)", i, x, ok)
		}
	}
	if c.Cap() != DefaultChunkSize || c.Len() != 0 {
		t.Fatalf("after the drain: len %d cap %d, want 0 and %d", c.Len(), c.Cap(), DefaultChunkSize)
	}
}

// TestSteadyStateAllocs: a write-read loop allocates nothing once warm, for
// both buffers, including a backlog that crosses chunk boundaries.
func TestSteadyStateAllocs(t *testing.T) {
	g := NewGrowing[int](1024)
	c := NewChunked[int](0)
	for i := range 100 {
		g.WriteOne(i)
		c.WriteOne(i)
	}
	for range 5000 { // warm: the chunked buffer acquires its spare
		c.WriteOne(1)
		c.ReadOne()
	}
	if n := testing.AllocsPerRun(5000, func() { g.WriteOne(1); g.ReadOne() }); n != 0 {
		t.Errorf("Growing: %v allocs per write-read", n)
	}
	if n := testing.AllocsPerRun(5000, func() { c.WriteOne(1); c.ReadOne() }); n != 0 {
		t.Errorf("Chunked: %v allocs per write-read", n)
	}
}

// Shrink reallocates only when the values fit and keeps them in order,
// also when they wrap around the end of the array.
func TestGrowingShrink(t *testing.T) {
	var r Growing[int]
	for i := range 100 {
		r.WriteOne(i)
	}
	for range 90 {
		r.ReadOne()
	}
	for i := 100; i < 110; i++ { // wraps: the array holds 128
		r.WriteOne(i)
	}
	if r.Shrink(19) {
		t.Fatalf("Shrink(19) with %d values succeeded", r.Len())
	}
	if r.Shrink(r.Cap()) {
		t.Fatal("Shrink to the current capacity succeeded")
	}
	if !r.Shrink(32) || r.Cap() != 32 {
		t.Fatalf("Shrink(32) failed: cap %d", r.Cap())
	}
	for want := 90; want < 110; want++ {
		if got, ok := r.ReadOne(); !ok || got != want {
			t.Fatalf("ReadOne = %d, %v; want %d", got, ok, want)
		}
	}
}

// TestChunkedReset: Reset drops the values and every chunk, a pooled
// buffer's chunks go back to its pool (kept ones first, cleared), and the
// buffer is usable again.
func TestChunkedReset(t *testing.T) {
	p := NewPool[*int](4, 8)
	c := p.New()
	for i := range 11 { // three chunks, the last one partly filled
		c.WriteOne(&i)
	}
	c.ReadOne() // a head chunk partly read
	c.Reset()
	if c.Len() != 0 || c.Cap() != 0 {
		t.Fatalf("after Reset: len %d cap %d, want 0 0", c.Len(), c.Cap())
	}
	if _, ok := c.ReadOne(); ok {
		t.Fatal("ReadOne after Reset returned a value")
	}
	if got := len(p.free.free); got != 3 {
		t.Fatalf("pool holds %d free chunks after Reset, want the buffer's 3", got)
	}
	for _, ch := range p.free.free {
		if ch.next != nil || slices.ContainsFunc(ch.slots, func(v *int) bool { return v != nil }) {
			t.Fatalf("a chunk given back by Reset is linked or holds values: %v", ch.slots)
		}
	}
	for i := range 6 {
		c.WriteOne(&i)
	}
	for i := range 6 {
		if v, ok := c.ReadOne(); !ok || *v != i {
			t.Fatalf("read %d after Reset: (%v, %v)", i, v, ok)
		}
	}
	var unpooled Chunked[int]
	unpooled.WriteOne(1)
	unpooled.Reset()
	if unpooled.Len() != 0 || unpooled.Cap() != 0 {
		t.Fatalf("unpooled after Reset: len %d cap %d", unpooled.Len(), unpooled.Cap())
	}
}

// TestPoolSpill: a pool keeps its bound of free chunks for good and hands
// out the ones beyond it too, until the garbage collector takes them.
func TestPoolSpill(t *testing.T) {
	p := NewPool[int](2, 1)
	a, b := &chunk[int]{slots: make([]int, 2)}, &chunk[int]{slots: make([]int, 2)}
	p.put(a)
	p.put(b) // beyond the bound: spilled
	if len(p.free.free) != 1 || p.free.free[0] != a {
		t.Fatalf("kept %v, want only the first chunk", p.free.free)
	}
	if got := p.get(); got != a {
		t.Fatalf("first get: %p, want the kept chunk %p", got, a)
	}
	// The spill is a sync.Pool: under the race detector it drops some of
	// what it is given on purpose, so only the kept chunk is certain.
	if got := p.get(); got != nil && got != b {
		t.Fatalf("second get: %p, want the spilled chunk %p or nil", got, b)
	}
}
