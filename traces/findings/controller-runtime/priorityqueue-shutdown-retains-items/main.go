// Command priorityqueue-shutdown-retains-items shows that controller-runtime's
// priority queue keeps every item that was waiting when ShutDown was called
// referenced for as long as the queue itself is. After ShutDown no Get hands
// anything out any more (GetWithPriority returns shutdown at once,
// sigs.k8s.io/controller-runtime@v0.25.3
// pkg/controller/priorityqueue/priorityqueue.go:450-453) and the waiting loop
// has exited (:331-333), so the queue no longer needs its items; client-go's
// delaying queue, whose interface the priority queue implements, drops them
// with its waiting loop ("ShutDown stops the queue", k8s.io/client-go@v0.37.2
// util/workqueue/delaying_queue.go:238). But ShutDown only sets the flag and
// closes the done channel (priorityqueue.go:500-503): the items map and the
// waiting B-tree keep every item. Sequence: q := priorityqueue.New[*T]("q");
// q.AddAfter(p_i, time.Hour) for 10 pointers p_i; q.Len() (flushes the add
// buffer); q.ShutDown(); drop p_i; runtime.GC(). None of the 10 is collected
// while q is alive (a controller that keeps its queue after stopping keeps
// them all).
package main

import (
	"fmt"
	"os"
	"runtime"
	"sync/atomic"
	"time"
)

// payload is an item; its finalizer counts it as collected.
type payload struct {
	name string
	_    [64]byte
}

// queue is the part of priorityqueue.PriorityQueue the sequence uses.
type queue interface {
	AddAfter(item *payload, d time.Duration)
	Len() int
	ShutDown()
}

const n = 10

var collected atomic.Int32

func main() {
	q := newQueue()
	add(q)
	q.Len() // the queue takes Adds in through a buffer: flush it
	q.ShutDown()

	deadline := time.Now().Add(2 * time.Second)
	for collected.Load() < n && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(20 * time.Millisecond)
	}
	held := n - collected.Load()
	runtime.KeepAlive(q)
	if held > 0 {
		fmt.Printf("DEFECT: %d of %d items waiting when ShutDown was called are still referenced by the shut-down queue (not collected after GC)\n", held, n)
		os.Exit(1)
	}
	fmt.Printf("OK: all %d items waiting at ShutDown were collected while the queue is still alive\n", n)
}

//go:noinline
func add(q queue) {
	for i := 0; i < n; i++ {
		p := &payload{name: fmt.Sprint("item-", i)}
		runtime.SetFinalizer(p, func(*payload) { collected.Add(1) })
		q.AddAfter(p, time.Hour)
	}
}
