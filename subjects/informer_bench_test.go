package subjects

// Benchmarks of our informer fan-out (impl/informer) side by side with
// client-go's, in the style of bench_test.go: every benchmark has the
// sub-benchmarks impl=ours and impl=upstream, so
//
//	go test -run '^$' -bench 'InformerFanOut|StalledBurst' -benchmem -count 3 ./subjects > informer.out
//	benchstat -col /impl informer.out
//
// compares them. Two levels:
//
//   - level=informer goes through the suite's adapters (ours.Informer,
//     upstream.Informer): Emit of an Update on one key, through client-go's
//     whole pipeline for upstream (fake source, reflector, FIFO, indexer,
//     processor) and through our minimal informer (a key store and the
//     processor) for ours. It is end to end, but the two pipelines are not
//     the same length: upstream pays for the reflector and the FIFO, and
//     its fake source keeps every event it was given (its change log), so
//     its heap grows with b.N.
//   - level=processor hands the same two preallocated objects straight to
//     each processor: ours via Processor.Distribute, client-go's via the
//     shared informer's own OnUpdate (the handler its controller calls,
//     shared_informer.go:1091-1110), which distributes to its
//     sharedProcessor and processorListeners exactly as a watch event
//     would; the informer's reflector runs against a source that lists
//     nothing and never sends. This is the fan-out alone, like for like.
//
// BenchmarkStalledBurst is at the processor level only: a burst behind a
// stalled handler through the fake source would measure the source's
// change log (one Pod per event) more than the listener's buffer.

import (
	"context"
	"fmt"
	"runtime"
	"runtime/metrics"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kverify/kverify/subjects/ours"

	"github.com/kverify/kverify/impl/informer"
	pinf "github.com/kverify/kverify/props/informer"
	"github.com/kverify/kverify/subjects/upstream"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

var informerImpls = []struct {
	name string
	new  func() pinf.FanOut
}{
	{Ours, func() pinf.FanOut { return ours.Informer().New() }},
	{Upstream, func() pinf.FanOut { return upstream.Informer().New() }},
}

// fanOutCounter counts one handler's calls and closes done when every
// handler of a run has had want updates.
type fanOutCounter struct {
	adds, updates atomic.Int64
	want          int64
	left          *atomic.Int64 // handlers still short of want
	done          chan struct{}
}

func newFanOutCounters(handlers int, want int64) []*fanOutCounter {
	left := &atomic.Int64{}
	left.Store(int64(handlers))
	done := make(chan struct{})
	cs := make([]*fanOutCounter, handlers)
	for i := range cs {
		cs[i] = &fanOutCounter{want: want, left: left, done: done}
	}
	return cs
}

func (c *fanOutCounter) update() {
	if c.updates.Add(1) == c.want && c.left.Add(-1) == 0 {
		close(c.done)
	}
}

// The counter as the suite's handler (level=informer) and as impl/informer's.
func (c *fanOutCounter) OnAdd(string, bool)      { c.adds.Add(1) }
func (c *fanOutCounter) OnUpdate(string, string) { c.update() }
func (c *fanOutCounter) OnDelete(string)         {}

type informerCounter struct{ *fanOutCounter }

func (c informerCounter) OnAdd(any, bool)   { c.adds.Add(1) }
func (c informerCounter) OnUpdate(any, any) { c.update() }
func (c informerCounter) OnDelete(any)      {}
func (c *fanOutCounter) funcs() cache.ResourceEventHandlerFuncs {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { c.adds.Add(1) },
		UpdateFunc: func(any, any) { c.update() },
	}
}

// waitFor polls cond until it holds, or fails b after a while.
func waitFor(b *testing.B, what string, cond func() bool) {
	b.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			b.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Microsecond)
	}
}

func waitDone(b *testing.B, done <-chan struct{}, what string) {
	b.Helper()
	select {
	case <-done:
	case <-time.After(5 * time.Minute):
		b.Fatalf("timed out waiting for %s", what)
	}
}

// fanOutWarmUp is the least number of updates distributed before the timer
// of a processor-level benchmark starts; it distributes b.N if that is more.
const fanOutWarmUp = 4096

// fanOutHandlers are the handler counts of BenchmarkInformerFanOut.
var fanOutHandlers = []int{1, 10, 100}

// BenchmarkInformerFanOut measures end-to-end throughput: one op is one
// update emitted (ns/op is per update); the op is done when every handler
// has been called with it. notifications/s counts handler calls: b.N times
// the handlers, over the time from the first emit until the last handler
// has had the last update. Handlers do nothing but count.
func BenchmarkInformerFanOut(b *testing.B) {
	b.Run("level=informer", func(b *testing.B) {
		for _, handlers := range fanOutHandlers {
			b.Run(fmt.Sprintf("handlers=%d", handlers), func(b *testing.B) {
				for _, impl := range inRoundOrder(informerImpls) {
					b.Run("impl="+impl.name, func(b *testing.B) {
						benchInformerLevel(b, impl.new(), handlers)
					})
				}
			})
		}
	})
	b.Run("level=processor", func(b *testing.B) {
		for _, handlers := range fanOutHandlers {
			b.Run(fmt.Sprintf("handlers=%d", handlers), func(b *testing.B) {
				for _, impl := range inRoundOrder(processorImpls) {
					b.Run("impl="+impl.name, func(b *testing.B) {
						benchProcessorLevel(b, impl.new, handlers)
					})
				}
			})
		}
	})
}

func benchInformerLevel(b *testing.B, f pinf.FanOut, handlers int) {
	b.ReportAllocs()
	cs := newFanOutCounters(handlers, int64(b.N))
	for _, c := range cs {
		if _, err := f.AddHandler(c); err != nil {
			b.Fatal(err)
		}
	}
	f.Start()
	defer f.Stop()
	const key = "default-object" // one key: the store holds one object
	f.Emit(pinf.Add, key)
	waitFor(b, "the add to reach every handler", func() bool {
		for _, c := range cs {
			if c.adds.Load() == 0 {
				return false
			}
		}
		return true
	})
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		f.Emit(pinf.Update, key)
	}
	waitDone(b, cs[0].done, "every handler to have every update")
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N)*float64(handlers)/elapsed.Seconds(), "notifications/s")
}

// procFanOut is a processor under the processor-level benchmarks.
type procFanOut interface {
	// distribute hands the update (old -> new) to every listener.
	distribute(old, new any)
	// stop stops the processor and joins its goroutines.
	stop()
}

var processorImpls = []struct {
	name string
	// new starts a processor with one listener per handler; the handlers
	// get updates only.
	new func(b *testing.B, hs []*fanOutCounter, gated []informer.Handler) procFanOut
}{
	{Ours, newOursProc},
	{Upstream, newUpstreamProc},
}

type oursProc struct {
	p      *informer.Processor
	cancel context.CancelFunc
	done   chan struct{}
}

// newOursProc starts impl/informer's Processor with a listener per counter
// and per extra handler.
func newOursProc(b *testing.B, cs []*fanOutCounter, extra []informer.Handler) procFanOut {
	p := informer.NewProcessor(nil)
	hs := slices.Clone(extra)
	for _, c := range cs {
		hs = append(hs, informerCounter{c})
	}
	for _, h := range hs {
		if _, err := p.AddListener(informer.NewListener(h, informer.ListenerOptions{})); err != nil {
			b.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	o := &oursProc{p: p, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(o.done)
		p.Run(ctx)
	}()
	return o
}

func (o *oursProc) distribute(old, new any) {
	o.p.Distribute(informer.Notification{Kind: informer.Update, Old: old, New: new}, false)
}

func (o *oursProc) stop() {
	o.cancel()
	<-o.done
}

// quietSource lists nothing and never sends: client-go's informer then
// runs (and syncs) with an empty store, and only OnUpdate feeds its
// processor. Like upstream.Informer's source it opts out of WatchList.
type quietSource struct{}

func (quietSource) List(metav1.ListOptions) (kruntime.Object, error) {
	return &v1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}}, nil
}
func (quietSource) Watch(metav1.ListOptions) (watch.Interface, error) { return watch.NewFake(), nil }
func (quietSource) IsWatchListSemanticsUnSupported() bool             { return true }

type upstreamProc struct {
	h      cache.ResourceEventHandler
	cancel context.CancelFunc
	done   chan struct{}
}

// newUpstreamProc starts client-go's shared informer over quietSource with
// a handler per counter and per extra handler, and returns it with its
// OnUpdate as the way in.
func newUpstreamProc(b *testing.B, cs []*fanOutCounter, extra []informer.Handler) procFanOut {
	inf := cache.NewSharedIndexInformer(quietSource{}, &v1.Pod{}, 0, cache.Indexers{})
	for _, h := range extra {
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerDetailedFuncs{
			AddFunc:    h.OnAdd,
			UpdateFunc: h.OnUpdate,
			DeleteFunc: h.OnDelete,
		}); err != nil {
			b.Fatal(err)
		}
	}
	for _, c := range cs {
		if _, err := inf.AddEventHandler(c.funcs()); err != nil {
			b.Fatal(err)
		}
	}
	eh, ok := inf.(cache.ResourceEventHandler)
	if !ok {
		b.Fatalf("%T has no OnUpdate", inf)
	}
	ctx, cancel := context.WithCancel(context.Background())
	u := &upstreamProc{h: eh, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(u.done)
		inf.RunWithContext(ctx)
	}()
	waitFor(b, "client-go's informer to sync", inf.HasSynced)
	return u
}

// distribute calls OnUpdate as the informer's controller would (it holds
// blockDeltas there; here nothing else distributes or adds handlers).
func (u *upstreamProc) distribute(old, new any) { u.h.OnUpdate(old, new) }

func (u *upstreamProc) stop() {
	u.cancel()
	<-u.done
}

// benchPods are the update every processor-level benchmark hands out:
// two objects made once, with different resource versions (client-go
// treats an update with an unchanged one as a resync).
var benchPods = [2]*v1.Pod{
	{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "object", ResourceVersion: "1"}},
	{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "object", ResourceVersion: "2"}},
}

func benchProcessorLevel(b *testing.B, newProc func(*testing.B, []*fanOutCounter, []informer.Handler) procFanOut, handlers int) {
	b.ReportAllocs()
	// Warm up before timing, with the traffic the timed run will have, so
	// that B/op is the steady state on both sides. The distributor runs
	// ahead of the handler goroutines for as long as the scheduler lets
	// it, so the listeners' backlogs swing with the length of the run:
	// client-go's rings grow to their largest backlog and keep it, ours
	// take chunks from the shared pool and give them back as they drain.
	// After a warm-up of b.N updates both have met backlogs like the timed
	// run's; with a short one, B/op counted whichever backlog the
	// scheduler happened to make bigger in the timed run.
	warmUp := max(fanOutWarmUp, b.N)
	cs := newFanOutCounters(handlers, int64(b.N+warmUp))
	p := newProc(b, cs, nil)
	defer p.stop()
	old, new := any(benchPods[0]), any(benchPods[1])
	for range warmUp {
		p.distribute(old, new)
	}
	waitFor(b, "the warm-up to reach every handler", func() bool {
		for _, c := range cs {
			if c.updates.Load() < int64(warmUp) {
				return false
			}
		}
		return true
	})
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		p.distribute(old, new)
	}
	waitDone(b, cs[0].done, "every handler to have every update")
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N)*float64(handlers)/elapsed.Seconds(), "notifications/s")
}

// stallBurst is the size of BenchmarkStalledBurst's burst.
const stallBurst = 1_000_000

// stalledHandler blocks in every call until its gate is closed.
type stalledHandler struct {
	gate    chan struct{}
	first   chan struct{} // closed when the first call starts
	once    sync.Once
	updates atomic.Int64
}

func (h *stalledHandler) OnAdd(any, bool) {}
func (h *stalledHandler) OnDelete(any)    {}
func (h *stalledHandler) OnUpdate(any, any) {
	h.updates.Add(1)
	h.once.Do(func() { close(h.first) })
	<-h.gate
}

// heapMeter reads the heap from runtime/metrics without allocating.
type heapMeter struct {
	s    []metrics.Sample
	peak uint64
}

func newHeapMeter() *heapMeter {
	return &heapMeter{s: []metrics.Sample{
		{Name: "/memory/classes/heap/objects:bytes"}, // live and not yet swept: HeapAlloc
		{Name: "/gc/heap/live:bytes"},                // marked live by the last GC
	}}
}

// sample records the heap now towards the peak.
func (m *heapMeter) sample() {
	metrics.Read(m.s[:1])
	m.peak = max(m.peak, m.s[0].Value.Uint64())
}

// live collects garbage and returns the live heap.
func (m *heapMeter) live() uint64 {
	runtime.GC()
	runtime.GC() // the second cycle marks what the first one's finalizers freed
	metrics.Read(m.s[1:])
	return m.s[1].Value.Uint64()
}

func mb(x, base uint64) float64 {
	if x < base {
		return 0
	}
	return float64(x-base) / (1 << 20)
}

// BenchmarkStalledBurst: one listener whose handler is stalled (blocked
// in a call) while a burst of 1,000,000 updates is distributed to it; then
// the handler is released and the backlog drained. Run it with
// -benchtime=1x. All heap figures are above a baseline taken, after a GC,
// with the processor running and the handler already stalled; the updates
// are the same two objects every time, so only the fan-out's own memory
// counts:
//
//   - peak-heap-MB: the largest heap (HeapAlloc: live and not yet freed)
//     seen during the burst and the drain, sampled every 1024 updates and
//     every 50µs while draining;
//   - backlog-MB: the live heap after a GC at the top of the burst, with
//     the whole backlog pending;
//   - retained-heap-MB: the live heap after a GC once the backlog is
//     drained, with the listener still registered and running.
func BenchmarkStalledBurst(b *testing.B) {
	for _, impl := range inRoundOrder(processorImpls) {
		newProc := impl.new
		if impl.name == Floor {
			newProc = newFloorBufferProc // the fan-out floor's bounded channels would block the burst
		}
		b.Run("impl="+impl.name, func(b *testing.B) {
			var peak, backlog, retained float64
			op := func() { peak, backlog, retained = stalledBurst(b, newProc) }
			warm(b, op)
			for range b.N {
				op()
			}
			b.ReportMetric(peak, "peak-heap-MB")
			b.ReportMetric(backlog, "backlog-MB")
			b.ReportMetric(retained, "retained-heap-MB")
		})
	}
}

func stalledBurst(b *testing.B, newProc func(*testing.B, []*fanOutCounter, []informer.Handler) procFanOut) (peak, backlog, retained float64) {
	h := &stalledHandler{gate: make(chan struct{}), first: make(chan struct{})}
	p := newProc(b, nil, []informer.Handler{h})
	defer p.stop()
	old, new := any(benchPods[0]), any(benchPods[1])
	p.distribute(old, new)
	waitDone(b, h.first, "the handler to stall")

	m := newHeapMeter()
	base := m.live()
	m.peak = 0
	for i := range stallBurst {
		p.distribute(old, new)
		if i&1023 == 0 {
			m.sample()
		}
	}
	m.sample()
	top := m.peak
	backlog = mb(m.live(), base)
	m.peak = top // the GCs above are not part of the run

	close(h.gate)
	waitFor(b, "the backlog to drain", func() bool {
		m.sample()
		return h.updates.Load() == stallBurst+1
	})
	retained = mb(m.live(), base)
	return mb(m.peak, base), backlog, retained
}
