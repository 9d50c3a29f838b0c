package subjects

import (
	"fmt"
	"runtime"
	"strconv"
	"testing"

	"github.com/kverify/kverify/subjects/ours"

	"github.com/kverify/kverify/impl/deltafifo"
	"github.com/kverify/kverify/impl/realfifo"
	pfifo "github.com/kverify/kverify/props/fifo"
	"github.com/kverify/kverify/subjects/upstream"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

// fifoImpls are the FIFO subjects the benchmarks compare, each a DeltaFIFO
// and a RealFIFO.
var fifoImpls = []struct {
	name        string
	delta, real func() pfifo.Subject
}{
	{"ours", ours.DeltaFIFO, ours.RealFIFO},
	{"upstream", upstream.DeltaFIFO, upstream.RealFIFO},
}

// benchObjects returns n distinct objects k<from>..k<from+n-1>.
func benchObjects(from, n int) []any {
	out := make([]any, n)
	for i := range n {
		out[i] = &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
			Namespace: "default", Name: "k" + strconv.Itoa(from+i), ResourceVersion: strconv.Itoa(i + 1)}}
	}
	return out
}

// benchKnown is a plain map as a FIFO's known objects: the same for both
// implementations, and cheaper than the suite's sorted store, so that the
// FIFO's own work dominates.
type benchKnown map[string]any

func (k benchKnown) ListKeys() []string {
	out := make([]string, 0, len(k))
	for key := range k {
		out = append(out, key)
	}
	return out
}

func (k benchKnown) GetByKey(key string) (any, bool, error) { o, ok := k[key]; return o, ok, nil }

func newBenchFIFO(b *testing.B, s pfifo.Subject, opts pfifo.Options) pfifo.FIFO {
	f, err := s.New(opts)
	if err != nil {
		b.Fatal(err)
	}
	return f
}

// fifoQueue is a FIFO as the Add+Pop benchmark drives it: the
// implementations themselves, not the suite's adapters (which translate
// every popped delta).
type fifoQueue struct {
	add   func(any) error
	pop   func() error
	close func()
}

func noop(any, bool) error { return nil }

var fifoQueues = []struct {
	kind, impl string
	new        func() fifoQueue
}{
	{"delta", "ours", func() fifoQueue {
		f := deltafifo.New(deltafifo.Options{})
		return fifoQueue{f.Add, func() error { _, err := f.Pop(noop); return err }, f.Close}
	}},
	{"delta", "upstream", func() fifoQueue {
		f := cache.NewDeltaFIFOWithOptions(cache.DeltaFIFOOptions{})
		return fifoQueue{f.Add, func() error { _, err := f.Pop(noop); return err }, f.Close}
	}},
	{"real", "ours", func() fifoQueue {
		f, err := realfifo.New(realfifo.Options{Atomic: true, UnlockWhileProcessing: true})
		if err != nil {
			panic(err)
		}
		return fifoQueue{f.Add, func() error { _, err := f.Pop(noop); return err }, f.Close}
	}},
	{"real", "upstream", func() fifoQueue {
		f := cache.NewRealFIFOWithOptions(cache.RealFIFOOptions{AtomicEvents: true, UnlockWhileProcessing: true})
		return fifoQueue{f.Add, func() error { _, err := f.Pop(noop); return err }, f.Close}
	}},
}

// BenchmarkFIFOAddPop: Add n distinct objects, then Pop them all, per op:
// DeltaFIFO without known objects, RealFIFO as informers make it (atomic
// events, unlocked while processing).
func BenchmarkFIFOAddPop(b *testing.B) {
	for _, n := range []int{1_000, 100_000} {
		objs := benchObjects(0, n)
		for _, q := range fifoQueues {
			b.Run(fmt.Sprintf("fifo=%s/keys=%d/impl=%s", q.kind, n, q.impl), func(b *testing.B) {
				b.ReportAllocs()
				op := func() {
					f := q.new()
					for _, o := range objs {
						if err := f.add(o); err != nil {
							b.Fatal(err)
						}
					}
					for range n {
						if err := f.pop(); err != nil {
							b.Fatal(err)
						}
					}
					f.close()
				}
				warm(b, op)
				for range b.N {
					op()
				}
			})
		}
	}
}

// BenchmarkFIFOReplace100k: Replace of 100,000 objects into a FIFO whose
// known objects hold 100,000, half of them listed again (50,000 updates,
// 50,000 new objects, 50,000 tombstones). DeltaFIFO with known objects,
// RealFIFO in its non-atomic mode (the one with known objects). Besides
// time and allocations, held-MB is the live heap the FIFO holds after the
// Replace (after a GC, above a baseline taken with the FIFO empty).
func BenchmarkFIFOReplace100k(b *testing.B) {
	const n = 100_000
	known := benchKnown{}
	for _, o := range benchObjects(0, n) {
		m := o.(*metav1.PartialObjectMetadata)
		known[m.Namespace+"/"+m.Name] = o
	}
	list := benchObjects(n/2, n)
	for _, kind := range []string{"delta", "real"} {
		for _, impl := range inRoundOrder(fifoImpls) {
			b.Run(fmt.Sprintf("fifo=%s/impl=%s", kind, impl.name), func(b *testing.B) {
				s := impl.delta()
				if kind == "real" {
					s = impl.real()
				}
				m := newHeapMeter()
				var held float64
				b.ReportAllocs()
				op := func() {
					b.StopTimer()
					f := newBenchFIFO(b, s, pfifo.Options{Known: known})
					base := m.live()
					b.StartTimer()
					if err := f.Replace(list, "1"); err != nil {
						b.Fatal(err)
					}
					b.StopTimer()
					held = mb(m.live(), base)
					runtime.KeepAlive(f)
					f.Close()
					b.StartTimer()
				}
				warm(b, op)
				for range b.N {
					op()
				}
				b.ReportMetric(held, "held-MB")
			})
		}
	}
}
