package subjects

// The floors of the benchmarks (issue 9): for each benchmark, the least
// work that could possibly do the job on this machine, run in the same
// process as ours and upstream under impl=floor, so that kverify bench can
// print ours/floor beside ours/upstream. A floor keeps none of the
// guarantees the suite checks (no dedup, no processing set, no delays, no
// lookahead): it is a yardstick, not an implementation.

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kverify/kverify/impl/informer"
	pfifo "github.com/kverify/kverify/props/fifo"
	pinf "github.com/kverify/kverify/props/informer"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
)

// Floor is the name of the floor implementations in benchmark names.
const Floor = "floor"

func init() {
	benchImpls = append(benchImpls, benchImpl{
		name:        Floor,
		newQueue:    func() benchQueue { return newFloorQueue() },
		newDelaying: func() benchDelaying { return &floorDelaying{floorQueue: newFloorQueue()} },
		newRateLimiting: func(*testing.B, time.Duration, time.Duration) benchRateLimiting {
			return &floorRateLimiting{floorDelaying: floorDelaying{floorQueue: newFloorQueue()}, failures: map[string]int{}}
		},
	})
	processorImpls = append(processorImpls, struct {
		name string
		new  func(b *testing.B, hs []*fanOutCounter, gated []informer.Handler) procFanOut
	}{Floor, newFloorProc})
	for _, kind := range []string{"delta", "real"} {
		fifoQueues = append(fifoQueues, struct {
			kind, impl string
			new        func() fifoQueue
		}{kind, Floor, newFloorFIFOQueue})
	}
	floorReplace := func() pfifo.Subject {
		return pfifo.Subject{New: func(o pfifo.Options) (pfifo.FIFO, error) { return &floorFIFO{known: o.Known}, nil }}
	}
	fifoImpls = append(fifoImpls, struct {
		name        string
		delta, real func() pfifo.Subject
	}{Floor, floorReplace, floorReplace})
	ringImpls = append(ringImpls, struct {
		name string
		new  func() benchRingBuf
	}{Floor, func() benchRingBuf { return &floorRing{} }})
	informerImpls = append(informerImpls, struct {
		name string
		new  func() pinf.FanOut
	}{Floor, func() pinf.FanOut { return newFloorInformer() }})
	syncImpls = append(syncImpls, struct {
		name string
		new  func(b *testing.B, lw *syncLW, watchList bool, h *syncCounter) syncInformer
	}{Floor, newFloorSync})
}

// floorQueue is a mutex-guarded slice with a condition variable: no dedup,
// no processing set, Done does nothing.
type floorQueue struct {
	mu    sync.Mutex
	cond  *sync.Cond
	items []string
	head  int
	down  bool
}

func newFloorQueue() *floorQueue {
	q := &floorQueue{}
	q.cond = sync.NewCond(&q.mu)
	return q
}

func (q *floorQueue) Add(item string) {
	q.mu.Lock()
	q.items = append(q.items, item)
	q.mu.Unlock()
	q.cond.Signal()
}

func (q *floorQueue) Get() (string, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.head == len(q.items) && !q.down {
		q.cond.Wait()
	}
	if q.head == len(q.items) {
		return "", true
	}
	item := q.items[q.head]
	q.head++
	if q.head == len(q.items) {
		q.items, q.head = q.items[:0], 0
	}
	return item, false
}

func (q *floorQueue) Done(string) {}

func (q *floorQueue) ShutDown() {
	q.mu.Lock()
	q.down = true
	q.mu.Unlock()
	q.cond.Broadcast()
}

// floorDelaying adds to a bare binary heap of (time, key) under the queue's
// lock; nothing ever moves the heap's items to the queue (the AddAfter
// benchmark never lets anything fire).
type floorDelaying struct {
	*floorQueue
	waiting floorHeap
}

func (q *floorDelaying) AddAfter(item string, d time.Duration) {
	if d <= 0 {
		q.Add(item)
		return
	}
	q.mu.Lock()
	q.waiting.push(floorEntry{at: time.Now().Add(d), item: item})
	q.mu.Unlock()
}

type floorEntry struct {
	at   time.Time
	item string
}

// floorHeap is a bare binary min-heap of values: push appends and sifts
// up, with no boxing and no index.
type floorHeap []floorEntry

func (h *floorHeap) push(e floorEntry) {
	*h = append(*h, e)
	a := *h
	for i := len(a) - 1; i > 0; {
		parent := (i - 1) / 2
		if !a[i].at.Before(a[parent].at) {
			break
		}
		a[i], a[parent] = a[parent], a[i]
		i = parent
	}
}

// floorRateLimiting counts failures per key and re-adds at once: the
// requeue benchmark's delays are at most 32ns anyway.
type floorRateLimiting struct {
	floorDelaying
	fmu      sync.Mutex
	failures map[string]int
}

func (q *floorRateLimiting) AddRateLimited(item string) {
	q.fmu.Lock()
	q.failures[item]++
	q.fmu.Unlock()
	q.Add(item)
}

func (q *floorRateLimiting) Forget(item string) {
	q.fmu.Lock()
	delete(q.failures, item)
	q.fmu.Unlock()
}

func (q *floorRateLimiting) NumRequeues(item string) int {
	q.fmu.Lock()
	defer q.fmu.Unlock()
	return q.failures[item]
}

// floorProc fans out through one buffered channel per handler, with no
// lookahead and no unbounded buffer: a handler that falls 1<<16
// notifications behind blocks the distributor.
type floorProc struct {
	chans []chan informer.Notification
	wg    sync.WaitGroup
}

func newFloorProc(_ *testing.B, cs []*fanOutCounter, extra []informer.Handler) procFanOut {
	hs := floorHandlers(cs, extra)
	p := &floorProc{}
	for _, h := range hs {
		ch := make(chan informer.Notification, 1<<16)
		p.chans = append(p.chans, ch)
		p.wg.Go(func() {
			for n := range ch {
				h.OnUpdate(n.Old, n.New)
			}
		})
	}
	return p
}

func (p *floorProc) distribute(old, new any) {
	n := informer.Notification{Kind: informer.Update, Old: old, New: new}
	for _, ch := range p.chans {
		ch <- n
	}
}

func (p *floorProc) stop() {
	for _, ch := range p.chans {
		close(ch)
	}
	p.wg.Wait()
}

// floorBufferProc is the stalled-burst floor, where a bounded channel
// would block the burst: one unbounded buffer per handler, a mutex-guarded
// slice that the handler's goroutine swaps out whole, with no lookahead, no
// chunking and no bound on what it holds; the spare slice is dropped after
// a burst (over 1024 notifications) so that a drained backlog's memory
// goes.
type floorBufferProc struct {
	ls []*floorListener
	wg sync.WaitGroup
}

type floorListener struct {
	mu      sync.Mutex
	wake    sync.Cond
	pending []informer.Notification
	asleep  bool
	closed  bool
}

func newFloorBufferProc(_ *testing.B, cs []*fanOutCounter, extra []informer.Handler) procFanOut {
	hs := floorHandlers(cs, extra)
	p := &floorBufferProc{}
	for _, h := range hs {
		l := &floorListener{}
		l.wake.L = &l.mu
		p.ls = append(p.ls, l)
		p.wg.Go(func() { l.run(h) })
	}
	return p
}

func (l *floorListener) run(h informer.Handler) {
	var batch []informer.Notification
	for {
		l.mu.Lock()
		for len(l.pending) == 0 && !l.closed {
			l.asleep = true
			l.wake.Wait()
			l.asleep = false
		}
		if len(l.pending) == 0 {
			l.mu.Unlock()
			return
		}
		batch, l.pending = l.pending, batch[:0]
		l.mu.Unlock()
		for _, n := range batch {
			h.OnUpdate(n.Old, n.New)
		}
		clear(batch)
		if cap(batch) > 1024 {
			batch = nil
		}
	}
}

func (p *floorBufferProc) distribute(old, new any) {
	n := informer.Notification{Kind: informer.Update, Old: old, New: new}
	for _, l := range p.ls {
		l.mu.Lock()
		l.pending = append(l.pending, n)
		asleep := l.asleep
		l.mu.Unlock()
		if asleep {
			l.wake.Signal()
		}
	}
}

func (p *floorBufferProc) stop() {
	for _, l := range p.ls {
		l.mu.Lock()
		l.closed = true
		l.mu.Unlock()
		l.wake.Signal()
	}
	p.wg.Wait()
}

// newFloorFIFOQueue is the FIFO Add+Pop floor, the same for DeltaFIFO and
// RealFIFO: the objects in a mutex-guarded slice, with no key, no dedup and
// no deltas; Pop hands the head to the process func.
func newFloorFIFOQueue() fifoQueue {
	var (
		mu   sync.Mutex
		objs []any
		head int
	)
	return fifoQueue{
		add: func(o any) error {
			mu.Lock()
			objs = append(objs, o)
			mu.Unlock()
			return nil
		},
		pop: func() error {
			mu.Lock()
			defer mu.Unlock()
			o := objs[head]
			objs[head] = nil
			head++
			return noop(o, false)
		},
		close: func() {},
	}
}

// floorFIFO is the Replace floor: one pass keys the listed objects into a
// set and appends a Replaced delta for each, a second appends a tombstone
// for every known key not listed. No per-key queue, no dedup, no sync
// bookkeeping. Only Replace and Close are implemented: the benchmark calls
// nothing else.
type floorFIFO struct {
	pfifo.FIFO // nil: any other method panics
	known      pfifo.Known
	deltas     []cache.Delta
}

func (f *floorFIFO) Replace(list []any, _ string) error {
	listed := make(map[string]struct{}, len(list))
	f.deltas = make([]cache.Delta, 0, len(list))
	for _, o := range list {
		key, err := cache.MetaNamespaceKeyFunc(o)
		if err != nil {
			return err
		}
		listed[key] = struct{}{}
		f.deltas = append(f.deltas, cache.Delta{Type: cache.Replaced, Object: o})
	}
	for _, key := range f.known.ListKeys() {
		if _, ok := listed[key]; ok {
			continue
		}
		o, _, _ := f.known.GetByKey(key)
		f.deltas = append(f.deltas, cache.Delta{Type: cache.Deleted, Object: cache.DeletedFinalStateUnknown{Key: key, Obj: o}})
	}
	return nil
}

func (f *floorFIFO) Close() {}

// newFloorSync is the informer sync floor: one goroutine lists (or reads
// the watch-list stream up to its end bookmark), keys every object into a
// map and calls the handler inline. No FIFO, no processor, no watch after
// the sync.
func newFloorSync(_ *testing.B, lw *syncLW, watchList bool, h *syncCounter) syncInformer {
	var synced atomic.Bool
	errs := &atomic.Int64{}
	run := func(ctx context.Context) {
		store := map[string]any{}
		add := func(o *metav1.PartialObjectMetadata) {
			store[o.Namespace+"/"+o.Name] = o
			h.OnAdd(o, true)
		}
		if watchList {
			w, err := lw.WatchWithContext(ctx, metav1.ListOptions{SendInitialEvents: ptr.To(true), AllowWatchBookmarks: true})
			if err != nil {
				errs.Add(1)
				return
			}
			for e := range w.ResultChan() {
				if e.Type == watch.Bookmark {
					break
				}
				add(e.Object.(*metav1.PartialObjectMetadata))
			}
			w.Stop()
		} else {
			for cont := ""; ; {
				obj, err := lw.ListWithContext(ctx, metav1.ListOptions{Limit: syncPageSize, Continue: cont})
				if err != nil {
					errs.Add(1)
					return
				}
				list := obj.(*metav1.PartialObjectMetadataList)
				for i := range list.Items {
					add(&list.Items[i])
				}
				if cont = list.Continue; cont == "" {
					break
				}
			}
		}
		synced.Store(true)
		<-ctx.Done()
	}
	return syncInformer{run: run, hasSynced: synced.Load, watchErrs: errs}
}

// floorRing is the ring floor: a slice used as a queue, appended to and
// read from a head index; once half of it has been read it slides the rest
// down (amortised O(1)). It never shrinks.
type floorRing struct {
	items []string
	head  int
}

func (r *floorRing) WriteOne(v string) { r.items = append(r.items, v) }

func (r *floorRing) ReadOne() (string, bool) {
	if r.head == len(r.items) {
		return "", false
	}
	v := r.items[r.head]
	r.head++
	if r.head >= len(r.items)/2 {
		n := copy(r.items, r.items[r.head:])
		r.items, r.head = r.items[:n], 0
	}
	return v, true
}

func (r *floorRing) Cap() int { return cap(r.items) }

// floorInformer is the informer-level fan-out floor: Emit writes the key
// to a map under a mutex and sends the notification down one buffered
// channel per handler (1<<16 deep, no lookahead, no unbounded buffer). No
// FIFO, no deltas, no sync tracking: registrations are synced at once.
type floorInformer struct {
	mu    sync.Mutex
	store map[string]int // key -> version
	chans []chan floorEvent
	wg    sync.WaitGroup
}

type floorEvent struct {
	kind pinf.Kind
	key  string
}

type floorReg struct{ done chan struct{} }

func (r floorReg) HasSynced() bool       { return true }
func (r floorReg) Done() <-chan struct{} { return r.done }

func newFloorInformer() *floorInformer { return &floorInformer{store: map[string]int{}} }

func (f *floorInformer) AddHandler(h pinf.Handler) (pinf.Registration, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ch := make(chan floorEvent, 1<<16)
	f.chans = append(f.chans, ch)
	for key := range f.store {
		ch <- floorEvent{pinf.Add, key}
	}
	reg := floorReg{done: make(chan struct{})}
	f.wg.Go(func() {
		defer close(reg.done)
		for e := range ch {
			switch e.kind {
			case pinf.Add:
				h.OnAdd(e.key, false)
			case pinf.Update:
				h.OnUpdate(e.key, e.key)
			case pinf.Delete:
				h.OnDelete(e.key)
			}
		}
	})
	return reg, nil
}

// RemoveHandler is not offered: the benchmark never removes a handler.
func (f *floorInformer) RemoveHandler(pinf.Registration) error { return nil }

func (f *floorInformer) Emit(kind pinf.Kind, key string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if kind == pinf.Delete {
		delete(f.store, key)
	} else {
		f.store[key]++
	}
	for _, ch := range f.chans {
		ch <- floorEvent{kind, key}
	}
}

func (f *floorInformer) Start() {}

func (f *floorInformer) Stop() {
	f.mu.Lock()
	for _, ch := range f.chans {
		close(ch)
	}
	f.chans = nil
	f.mu.Unlock()
	f.wg.Wait()
}

// floorHandlers is the handlers a floor processor serves: extra, then the
// counters as impl/informer handlers.
func floorHandlers(cs []*fanOutCounter, extra []informer.Handler) []informer.Handler {
	hs := append([]informer.Handler(nil), extra...)
	for _, c := range cs {
		hs = append(hs, informerCounter{c})
	}
	return hs
}
