package subjects

// BenchmarkInformerSync100k: the initial sync of 100,000 objects through
// the whole informer (reflector, FIFO, store, processor, one handler), ours
// (impl/informer) side by side with client-go's shared informer, by LIST
// and by watch-list. Like the other benchmarks of this package its
// sub-benchmarks end in impl=ours and impl=upstream, so
//
//	go test -run '^$' -bench InformerSync100k -benchmem -benchtime 3x -count 3 ./subjects > sync.out
//	benchstat -col /impl sync.out
//
// (or kverify bench --bench InformerSync100k --benchtime 3x) compares them.
//
// The source is a lean ListerWatcher (syncLW), not the model server, whose
// cost would dominate: 100,000 prebuilt PartialObjectMetadata objects at
// list version "100000". A LIST honours Limit and Continue (the continue
// token is the index of the next object); a watch asking for initial events
// sends an ADDED event per object, then the initial-events-end bookmark,
// then nothing until it is stopped; any other watch sends nothing until it
// is stopped. Every LIST page and every ADDED event carries fresh shallow
// copies of the objects (the strings are shared), as a client's decoder
// would hand out fresh objects: both sides get exactly the same.
//
// One op is one sync: build a fresh informer with one handler that counts
// its adds, run it, and wait until the handler has had 100,000 adds and
// the informer reports HasSynced. Stopping the informer (cancelling its
// context, waiting for Run to return and for every watch stream to be
// stopped) and the checks are outside the timer. Besides time, B/op and
// allocs/op (which count the source's copies too, the same on both sides),
// peak-MB is the mean over the ops of the largest heap (HeapAlloc: live
// and not yet swept, sampled every millisecond during the op) above the
// live heap after a GC just before the op; the prebuilt objects are in that
// baseline.
//
// Each op checks that it measured what it claims: the handler had exactly
// 100,000 initial-list adds and nothing else, and the source saw the
// intended path: one whole paged LIST and no watch-list stream for
// sync=list, one watch-list stream and no LIST for sync=watchlist.

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kverify/kverify/impl/informer"
	"github.com/kverify/kverify/impl/reflector"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// syncObjects is the number of objects BenchmarkInformerSync100k syncs.
const syncObjects = 100_000

// syncPageSize is the LIST page size both reflectors ask for from "0"
// (client-go's pager default, reflector.DefaultPageSize).
const syncPageSize = 500

// syncItems returns the n objects every sync serves: namespace default,
// names o000000.., resource versions "1".."n".
func syncItems(n int) []metav1.PartialObjectMetadata {
	items := make([]metav1.PartialObjectMetadata, n)
	for i := range items {
		items[i] = metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
			Namespace:       "default",
			Name:            fmt.Sprintf("o%06d", i),
			ResourceVersion: strconv.Itoa(i + 1),
		}}
	}
	return items
}

// syncLW is the benchmark's ListerWatcher, fresh for every op: it serves
// the shared items and counts the calls it gets.
type syncLW struct {
	items       []metav1.PartialObjectMetadata
	rv          string // the list's resource version
	noWatchList bool   // IsWatchListSemanticsUnSupported

	lists   atomic.Int64 // LIST calls (pages)
	streams atomic.Int64 // watches with SendInitialEvents=true
	watches atomic.Int64 // other watches
	open    sync.WaitGroup
}

func newSyncLW(items []metav1.PartialObjectMetadata, noWatchList bool) *syncLW {
	return &syncLW{items: items, rv: strconv.Itoa(len(items)), noWatchList: noWatchList}
}

// IsWatchListSemanticsUnSupported makes both reflectors list when true
// (client-go: tools/cache/listwatch.go:149).
func (lw *syncLW) IsWatchListSemanticsUnSupported() bool { return lw.noWatchList }

func (lw *syncLW) List(opts metav1.ListOptions) (kruntime.Object, error) {
	return lw.ListWithContext(context.Background(), opts)
}

func (lw *syncLW) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return lw.WatchWithContext(context.Background(), opts)
}

// ListWithContext returns the page of at most opts.Limit items (all if 0)
// from the index in opts.Continue, as fresh copies.
func (lw *syncLW) ListWithContext(_ context.Context, opts metav1.ListOptions) (kruntime.Object, error) {
	lw.lists.Add(1)
	from := 0
	if opts.Continue != "" {
		i, err := strconv.Atoi(opts.Continue)
		if err != nil || i <= 0 || i >= len(lw.items) {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid continue token %q", opts.Continue))
		}
		from = i
	}
	to := len(lw.items)
	if opts.Limit > 0 && int64(to-from) > opts.Limit {
		to = from + int(opts.Limit)
	}
	list := &metav1.PartialObjectMetadataList{
		ListMeta: metav1.ListMeta{ResourceVersion: lw.rv},
		Items:    slices.Clone(lw.items[from:to]),
	}
	if to < len(lw.items) {
		list.Continue = strconv.Itoa(to)
	}
	return list, nil
}

// WatchWithContext returns a stream: with SendInitialEvents, an ADDED
// event per item (a fresh copy) and the initial-events-end bookmark; then,
// or at once for any other watch, nothing until Stop.
func (lw *syncLW) WatchWithContext(_ context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	initial := opts.SendInitialEvents != nil && *opts.SendInitialEvents
	if initial {
		lw.streams.Add(1)
	} else {
		lw.watches.Add(1)
	}
	s := &syncStream{ch: make(chan watch.Event, watch.DefaultChanSize), stop: make(chan struct{})}
	lw.open.Add(1)
	go func() {
		defer lw.open.Done()
		defer close(s.ch)
		if initial {
			for i := range lw.items {
				obj := lw.items[i]
				if !s.send(watch.Event{Type: watch.Added, Object: &obj}) {
					return
				}
			}
			end := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
				ResourceVersion: lw.rv,
				Annotations:     map[string]string{metav1.InitialEventsAnnotationKey: "true"},
			}}
			if !s.send(watch.Event{Type: watch.Bookmark, Object: end}) {
				return
			}
		}
		<-s.stop
	}()
	return s, nil
}

// waitStreams waits for every stream's goroutine to exit, which it does
// once the stream is stopped.
func (lw *syncLW) waitStreams(b *testing.B) {
	b.Helper()
	done := make(chan struct{})
	go func() {
		lw.open.Wait()
		close(done)
	}()
	waitDone(b, done, "every watch stream to be stopped")
}

// syncStream is a watch.Interface whose goroutine exits on Stop; Stop is
// idempotent (client-go stops a watch-list stream it hands over twice).
type syncStream struct {
	ch   chan watch.Event
	stop chan struct{}
	once sync.Once
}

func (s *syncStream) ResultChan() <-chan watch.Event { return s.ch }
func (s *syncStream) Stop()                          { s.once.Do(func() { close(s.stop) }) }

func (s *syncStream) send(e watch.Event) bool {
	select {
	case s.ch <- e:
		return true
	case <-s.stop:
		return false
	}
}

// syncCounter is the handler: it counts its calls and closes done at the
// syncObjects-th add. Its method set is both impl/informer's handler and
// client-go's ResourceEventHandler.
type syncCounter struct {
	adds, initial, others atomic.Int64
	done                  chan struct{}
}

func (c *syncCounter) OnAdd(_ any, isInInitialList bool) {
	if isInInitialList {
		c.initial.Add(1)
	}
	if c.adds.Add(1) == syncObjects {
		close(c.done)
	}
}
func (c *syncCounter) OnUpdate(any, any) { c.others.Add(1) }
func (c *syncCounter) OnDelete(any)      { c.others.Add(1) }

// syncInformer is an informer with its handler added, not yet running.
type syncInformer struct {
	run       func(context.Context)
	hasSynced func() bool
	// watchErrs counts the errors the reflector reported.
	watchErrs *atomic.Int64
}

var syncImpls = []struct {
	name string
	new  func(b *testing.B, lw *syncLW, watchList bool, h *syncCounter) syncInformer
}{
	{Ours, newOursSync},
	{Upstream, newUpstreamSync},
}

func newOursSync(b *testing.B, lw *syncLW, watchList bool, h *syncCounter) syncInformer {
	errs := &atomic.Int64{}
	mode := reflector.WatchListOff
	if watchList {
		mode = reflector.WatchListAuto
	}
	inf, err := informer.NewInformer(lw, informer.InformerOptions{Reflector: reflector.Options{
		ExpectedType: &metav1.PartialObjectMetadata{},
		WatchList:    mode,
		OnWatchError: func(error) { errs.Add(1) },
	}})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := inf.AddEventHandler(h); err != nil {
		b.Fatal(err)
	}
	return syncInformer{run: inf.Run, hasSynced: inf.HasSynced, watchErrs: errs}
}

func newUpstreamSync(b *testing.B, lw *syncLW, _ bool, h *syncCounter) syncInformer {
	errs := &atomic.Int64{}
	inf := cache.NewSharedIndexInformer(lw, &metav1.PartialObjectMetadata{}, 0, cache.Indexers{})
	if err := inf.SetWatchErrorHandlerWithContext(func(context.Context, *cache.Reflector, error) { errs.Add(1) }); err != nil {
		b.Fatal(err)
	}
	if _, err := inf.AddEventHandler(h); err != nil {
		b.Fatal(err)
	}
	return syncInformer{run: inf.RunWithContext, hasSynced: inf.HasSynced, watchErrs: errs}
}

// sampleHeap samples the heap into m every millisecond until the returned
// function is called, which returns the peak.
func sampleHeap(m *heapMeter) (stop func() uint64) {
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			m.sample()
			select {
			case <-quit:
				m.sample()
				return
			case <-t.C:
			}
		}
	}()
	return func() uint64 {
		close(quit)
		<-done
		return m.peak
	}
}

func BenchmarkInformerSync100k(b *testing.B) {
	items := syncItems(syncObjects)
	for _, mode := range []struct {
		name      string
		watchList bool
	}{{"list", false}, {"watchlist", true}} {
		for _, impl := range inRoundOrder(syncImpls) {
			b.Run(fmt.Sprintf("sync=%s/impl=%s", mode.name, impl.name), func(b *testing.B) {
				benchInformerSync(b, items, mode.watchList, impl.new)
			})
		}
	}
}

func benchInformerSync(b *testing.B, items []metav1.PartialObjectMetadata, watchList bool,
	newInf func(*testing.B, *syncLW, bool, *syncCounter) syncInformer) {
	benchSyncs(b, func(h *syncCounter) (func() syncInformer, func(errs int64)) {
		lw := newSyncLW(items, !watchList)
		return func() syncInformer { return newInf(b, lw, watchList, h) }, func(errs int64) {
			lw.waitStreams(b)
			checkInformerSync(b, lw, h, watchList, errs)
		}
	})
}

// benchSyncs times b.N syncs (after a warm-up one) and reports their mean
// peak heap as peak-MB. For each, prepare (untimed) returns build, which
// makes the informer with h as its handler (timed, with the run until h has
// every add and the informer synced), and check, called once the informer
// stopped with the errors its reflector reported.
func benchSyncs(b *testing.B, prepare func(h *syncCounter) (build func() syncInformer, check func(errs int64))) {
	live := newHeapMeter()
	var peaks float64
	b.ReportAllocs()
	op := func() float64 {
		b.StopTimer()
		h := &syncCounter{done: make(chan struct{})}
		build, check := prepare(h)
		peak := newHeapMeter()
		base := live.live()
		stopSampling := sampleHeap(peak)
		b.StartTimer()

		inf := build()
		ctx, cancel := context.WithCancel(context.Background())
		ran := make(chan struct{})
		go func() {
			defer close(ran)
			inf.run(ctx)
		}()
		waitDone(b, h.done, "the handler to have every add")
		waitFor(b, "the informer to sync", inf.hasSynced)

		b.StopTimer()
		top := mb(stopSampling(), base)
		errs := inf.watchErrs.Load()
		cancel()
		waitDone(b, ran, "Run to return")
		check(errs)
		b.StartTimer()
		return top
	}
	warm(b, func() { op() })
	for range b.N {
		peaks += op()
	}
	b.StopTimer()
	b.ReportMetric(peaks/float64(b.N), "peak-MB")
}

// checkInformerSync fails b unless the op synced every object, by the
// intended path, without errors.
func checkInformerSync(b *testing.B, lw *syncLW, h *syncCounter, watchList bool, errs int64) {
	b.Helper()
	if n, i, o := h.adds.Load(), h.initial.Load(), h.others.Load(); n != syncObjects || i != syncObjects || o != 0 {
		b.Fatalf("handler: %d adds (%d in the initial list) and %d updates or deletes, want %d initial adds and nothing else", n, i, o, syncObjects)
	}
	if errs != 0 {
		b.Fatalf("the reflector reported %d errors during the sync", errs)
	}
	lists, streams, watches := lw.lists.Load(), lw.streams.Load(), lw.watches.Load()
	if watchList {
		if lists != 0 || streams != 1 || watches != 0 {
			b.Fatalf("watch-list sync: %d LIST calls, %d watch-list streams, %d plain watches; want 0, 1, 0", lists, streams, watches)
		}
		return
	}
	if pages := int64(syncObjects / syncPageSize); lists != pages || streams != 0 {
		b.Fatalf("LIST sync: %d LIST calls, %d watch-list streams; want %d pages and no stream", lists, streams, pages)
	}
}
