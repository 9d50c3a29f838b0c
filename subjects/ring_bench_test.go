package subjects

// Benchmarks of our ring buffers side by side with k8s.io/utils/buffer's,
// in the style of bench_test.go: every benchmark has one sub-benchmark per
// implementation, impl=ours (Growing), impl=ours-chunked (Chunked),
// impl=upstream (TypedRingGrowing) and impl=upstream-shrinking (Ring), so
//
//	go test -run '^$' -bench BenchmarkRing -benchmem -count 6 ./subjects > ring.out
//	benchstat -col /impl ring.out
//
// compares them. All four are driven through the same small interface, so
// the dispatch cost is the same for all.

import (
	"strconv"
	"testing"

	"github.com/kverify/kverify/impl/ring"
	"k8s.io/utils/buffer"
)

// benchRingBuf is the part of a ring the benchmarks drive.
type benchRingBuf interface {
	WriteOne(string)
	ReadOne() (string, bool)
	Cap() int
}

// listenerRingSize is the size client-go gives a listener's ring
// (initialBufferSize, tools/cache/shared_informer.go:494).
const listenerRingSize = 1024

var ringImpls = []struct {
	name string
	new  func() benchRingBuf
}{
	{Ours, func() benchRingBuf { return ring.NewGrowing[string](listenerRingSize) }},
	{Ours + "-chunked", func() benchRingBuf { return ring.NewChunked[string](listenerRingSize) }},
	{Upstream, func() benchRingBuf {
		return buffer.NewTypedRingGrowing[string](buffer.RingGrowingOptions{InitialSize: listenerRingSize})
	}},
	{Upstream + "-shrinking", func() benchRingBuf {
		return buffer.NewRing[string](buffer.RingOptions{InitialSize: listenerRingSize, NormalSize: listenerRingSize})
	}},
}

// ringValues are the values written, built before any timed region.
var ringValues = func() []string {
	vs := make([]string, 1024)
	for i := range vs {
		vs[i] = "default/object-" + strconv.Itoa(i)
	}
	return vs
}()

// BenchmarkRing:
//   - op=write-read: a listener keeping up, 64 notifications behind: one
//     op is one WriteOne and one ReadOne on a long-lived ring (steady
//     state: no allocation expected from anyone).
//   - op=burst-10k: a long-lived listener hit by bursts: one op is 10,000
//     WriteOnes then 10,000 ReadOnes (the shrinking rings re-grow or
//     re-link every burst).
//   - op=grow-100k: a new listener's one-off burst: one op makes a ring of
//     the listener's size, writes 100,000 values and drains them. B/op is
//     the memory the burst allocates; peak-cap is Cap at the top of the
//     burst and drained-cap Cap once it is drained (the memory kept).
func BenchmarkRing(b *testing.B) {
	b.Run("op=write-read", func(b *testing.B) {
		for _, impl := range inRoundOrder(ringImpls) {
			b.Run("impl="+impl.name, func(b *testing.B) {
				r := impl.new()
				for i := range 64 {
					r.WriteOne(ringValues[i])
				}
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					r.WriteOne(ringValues[i&1023])
					if _, ok := r.ReadOne(); !ok {
						b.Fatal("empty ring")
					}
					i++
				}
			})
		}
	})
	b.Run("op=burst-10k", func(b *testing.B) {
		for _, impl := range inRoundOrder(ringImpls) {
			b.Run("impl="+impl.name, func(b *testing.B) {
				r := impl.new()
				b.ReportAllocs()
				for b.Loop() {
					writeDrain(b, r, 10_000)
				}
			})
		}
	})
	b.Run("op=grow-100k", func(b *testing.B) {
		for _, impl := range inRoundOrder(ringImpls) {
			b.Run("impl="+impl.name, func(b *testing.B) {
				b.ReportAllocs()
				var peak, drained int
				// Untimed bursts first, for every implementation alike
				// (b.Loop starts the timer at its first call): the first
				// implementation in a process ran slower for the whole
				// benchmark, not only its first op. Measured on 2 cores
				// without them, ours/upstream was 1.02x with ours first
				// and 0.86x with upstream first; with them, 0.92x-1.01x in
				// either order. kverify bench also rotates the order
				// (inRoundOrder).
				for range ringWarmUp {
					writeDrain(b, impl.new(), 100_000)
				}
				for b.Loop() {
					r := impl.new()
					peak, drained = writeDrain(b, r, 100_000)
				}
				b.ReportMetric(float64(peak), "peak-cap")
				b.ReportMetric(float64(drained), "drained-cap")
			})
		}
	})
}

// ringWarmUp is the number of untimed bursts grow-100k makes before it
// times any.
const ringWarmUp = 50

// writeDrain writes n values into r and reads them back, returning Cap at
// the top and after the drain.
func writeDrain(b *testing.B, r benchRingBuf, n int) (peak, drained int) {
	for i := range n {
		r.WriteOne(ringValues[i&1023])
	}
	peak = r.Cap()
	for range n {
		if _, ok := r.ReadOne(); !ok {
			b.Fatal("empty ring")
		}
	}
	return peak, r.Cap()
}
