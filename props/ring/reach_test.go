package ring

// The reach of the ring machines' generators (issue 27, class 1): the
// legal inputs of New, WriteOne and ReadOne, classified against the state
// a doubling ring (TypedRingGrowing's layout) would be in, counted over
// ordinary draws with a fixed seed and held to a floor of one, as
// checkkit's sizes_test does for size classes.

import (
	"flag"
	"testing"

	"github.com/kverify/kverify/props/checkkit"
	spec "github.com/kverify/kverify/spec/ring"
	"pgregory.net/rapid"
)

// ringDomain is the legal input domain of the machines' operations. A
// negative size is legal too (New(n < 0) is New(0)); the negative-size
// check makes it, not the machines, because client-go's ring panics there.
var ringDomain = []checkkit.ReachClass{
	{Name: "New 0", Why: "no array until the first write, which takes DefaultSize (a chunked buffer: the default chunk)"},
	{Name: "New 1", Why: "full after one write: growth and wrap-around at every step"},
	{Name: "New power of two", Why: "the sizes a mask-based index gets right by luck"},
	{Name: "New odd", Why: "a mask-based index or a power-of-two rounding breaks here"},
	{Name: "New even, not a power of two", Why: "a rounding to a power of two that spares odd sizes shows here"},
	{Name: "New > DefaultSize", Why: "the initial size must be taken whole, not capped at the default"},
	{Name: "New > 1024", Why: "past the listener's 1024: a chunk larger than the default must stay that large"},
	{Name: "Write into full, unwrapped", Why: "growth copies one run of values"},
	{Name: "Write into full, wrapped", Why: "growth must copy the tail run, then the head run, in order"},
	{Name: "Write wraps the index", Why: "the write position passes the array's end"},
	{Name: "Read on empty", Why: "(zero, false), and nothing moves"},
	{Name: "Read to empty", Why: "the last value: a shrinking ring gives memory back here"},
	{Name: "Read wraps the index", Why: "the read position passes the array's end"},
	{Name: "Burst past growth", Why: "several doublings in one burst"},
	{Name: "Drain past empty", Why: "reads beyond the last value keep returning (zero, false)"},
}

// phys tracks where a doubling ring keeps its values: the array's size,
// the oldest value's index and the count.
type phys struct{ cap, beg, n int }

func (p *phys) write(ta checkkit.Tally) {
	if p.n == p.cap {
		ta.Hit("Write into full, unwrapped", p.beg == 0 && p.n > 0)
		ta.Hit("Write into full, wrapped", p.beg > 0)
		p.cap, p.beg = spec.GrownCap(p.cap), 0
	}
	ta.Hit("Write wraps the index", p.beg+p.n >= p.cap && p.beg > 0)
	p.n++
}

func (p *phys) read(ta checkkit.Tally) {
	ta.Hit("Read on empty", p.n == 0)
	if p.n == 0 {
		return
	}
	ta.Hit("Read to empty", p.n == 1)
	p.beg++
	ta.Hit("Read wraps the index", p.beg == p.cap)
	if p.beg == p.cap {
		p.beg = 0
	}
	p.n--
}

func classifyNew(ta checkkit.Tally, n int) {
	ta.Hit("New 0", n == 0)
	ta.Hit("New 1", n == 1)
	ta.Hit("New power of two", n > 1 && n&(n-1) == 0)
	ta.Hit("New odd", n > 1 && n%2 == 1)
	ta.Hit("New even, not a power of two", n > 1 && n%2 == 0 && n&(n-1) != 0)
	ta.Hit("New > DefaultSize", n > 16)
	ta.Hit("New > 1024", n > 1024)
}

// TestReachRing draws 100 runs of 30 steps from the machines' generators,
// follows each on a doubling ring's layout and counts each class of
// ringDomain; every class must come.
//
// Measured (seed 27000): before the reach work initialSizes was
// {0, 1, 3, 16, 2, 5}, and "New even, not a power of two", "New >
// DefaultSize" and "New > 1024" came 0 times; after ({6, 17, 100, 1025,
// 2000} added) they come 13, 20 and 10 times of 100 runs, and every other
// class as before (Write into full, wrapped 111; Read wraps the index 46;
// Read to empty 173; New odd 29, New power of two 19).
func TestReachRing(t *testing.T) {
	ta := checkkit.Tally{}
	gen := stepGen()
	f := flag.Lookup("rapid.seed")
	old := f.Value.String()
	defer func() { _ = f.Value.Set(old) }()
	_ = f.Value.Set("27000")
	rapid.Check(t, func(rt *rapid.T) {
		size := rapid.SampledFrom(initialSizes).Draw(rt, "initialSize")
		classifyNew(ta, size)
		p := phys{cap: max(size, 0)}
		for range 30 {
			st := gen.Draw(rt, "step")
			switch st.Kind {
			case Write:
				p.write(ta)
			case Read:
				p.read(ta)
			case Burst:
				c := p.cap
				for range st.N {
					p.write(ta)
				}
				ta.Hit("Burst past growth", p.cap > 2*max(c, 8))
			case Drain:
				ta.Hit("Drain past empty", st.N > p.n)
				for range st.N {
					p.read(ta)
				}
			}
		}
	})
	ta.Check(t, "ring machines", 1, ringDomain)
}
