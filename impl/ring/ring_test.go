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
