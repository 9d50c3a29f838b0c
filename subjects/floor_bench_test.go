package subjects

// The floors of the benchmarks (issue 9): for each benchmark, the least
// work that could possibly do the job on this machine, run in the same
// process as ours and upstream under impl=floor, so that kverify bench can
// print ours/floor beside ours/upstream. A floor keeps none of the
// guarantees the suite checks (no dedup, no processing set, no delays, no
// lookahead): it is a yardstick, not an implementation.

import (
	"sync"
	"testing"
	"time"

	"github.com/kverify/kverify/impl/informer"
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
	hs := append([]informer.Handler(nil), extra...)
	for _, c := range cs {
		hs = append(hs, informerCounter{c})
	}
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
