// Command priorityqueue-get-item-with-shutdown shows that a Get in flight
// when ShutDown is called can return an item together with shutdown=true.
// client-go's Get contract (k8s.io/client-go@v0.37.2
// util/workqueue/queue.go:33, "Get() (item T, shutdown bool)"; queue.go:262-264:
// "Get blocks until it can return an item to be processed. If shutdown = true,
// the caller should end their goroutine. You must call Done with item when you
// have finished processing it.") makes shutdown=true mean "no item": a worker
// that sees it returns without Done, so the item is lost and its key stays
// locked. controller-runtime's GetWithPriority returns w.shutdown.Load()
// beside the item it has just received (sigs.k8s.io/controller-runtime@v0.25.3
// pkg/controller/priorityqueue/priorityqueue.go:470-471), so a ShutDown that
// lands between the hand-off and that load yields (item, true).
// Sequence: q := priorityqueue.New[string]("q", <metrics provider>);
// go q.Get(); q.Add("a"); (the queue hands "a" to the Get); q.ShutDown().
//
// The interleaving is forced, not hoped for: with GOMAXPROCS(1), the
// program's own depth metric, whose Dec the queue calls just before handing
// the item out (priorityqueue.go:411), yields to main, which blocks on the
// queue's lock in Len; the hand-off then makes the Get runnable, and the
// lock's release makes main run first (Go's scheduler runs the goroutine
// readied last first), so ShutDown comes before the Get's goroutine
// resumes. It depends on that scheduling rule, so the program retries up to
// 20 times (within 3s); in practice the first attempt shows it.
package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"sync"
	"time"
)

// queue is the part of priorityqueue.PriorityQueue the sequence uses.
type queue interface {
	Add(item string)
	Get() (item string, shutdown bool)
	Len() int
	ShutDown()
}

// depthGauge is the queue's depth metric; its first Dec after arm calls
// hook.
type depthGauge struct {
	mu   sync.Mutex
	hook func()
}

func (g *depthGauge) Inc() {}
func (g *depthGauge) Dec() {
	g.mu.Lock()
	h := g.hook
	g.hook = nil
	g.mu.Unlock()
	if h != nil {
		h()
	}
}

func (g *depthGauge) arm(h func()) {
	g.mu.Lock()
	g.hook = h
	g.mu.Unlock()
}

// noop is every other metric.
type noop struct{}

func (noop) Inc()            {}
func (noop) Dec()            {}
func (noop) Observe(float64) {}
func (noop) Set(float64)     {}

type result struct {
	item     string
	shutdown bool
}

func main() {
	runtime.GOMAXPROCS(1)
	debug.SetGCPercent(-1)
	deadline := time.Now().Add(3 * time.Second)
	for attempt := 1; attempt <= 20 && time.Now().Before(deadline); attempt++ {
		r := once()
		if r.item != "" && r.shutdown {
			fmt.Printf("DEFECT: Get returned item %q together with shutdown=true (attempt %d): a worker drops it without Done\n", r.item, attempt)
			os.Exit(1)
		}
	}
	fmt.Println("OK: no Get in flight at ShutDown returned an item together with shutdown=true (20 attempts)")
}

func once() result {
	depth := &depthGauge{}
	q := newQueue(depth)

	res := make(chan result, 1)
	go func() {
		item, shutdown := q.Get()
		res <- result{item, shutdown}
	}()
	time.Sleep(20 * time.Millisecond) // let the Get block waiting

	entered := make(chan struct{})
	depth.arm(func() {
		// Called by the queue while it holds its lock, just before the
		// hand-off: let main run and block on that lock.
		close(entered)
		runtime.Gosched()
	})
	q.Add("a")
	<-entered
	q.Len() // blocks until the queue has handed "a" out and unlocked
	q.ShutDown()
	select {
	case r := <-res:
		return r
	case <-time.After(time.Second):
		return result{}
	}
}
