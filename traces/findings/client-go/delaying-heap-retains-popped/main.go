// Command delaying-heap-retains-popped shows that a delaying queue keeps
// every item that waited in its heap referenced after the item was moved to
// the queue, handed out and marked Done. The heap's Pop
// (k8s.io/client-go@v0.37.2 util/workqueue/delaying_queue.go:224-230)
// shortens the slice without clearing the vacated slot, although the
// container/heap convention it follows, and Done's doc ("Done marks item as
// done processing", queue.go:286-288), leave the queue no reason to hold the
// item: the *waitFor entry, and with it the item, stays reachable from the
// heap's backing array until a later AddAfter overwrites the slot.
// Sequence: q := workqueue.NewDelayingQueueWithCustomClock(clock, "");
// q.AddAfter(p_i, (10-i)s) for 10 pointers p_i (waiting for each to reach the
// heap); clock.Step(10s); q.Get() and q.Done(p_i) for each; drop p_i;
// runtime.GC(). None of the 10 items is collected.
package main

import (
	"fmt"
	"os"
	"runtime"
	"sync/atomic"
	"time"

	"k8s.io/utils/clock"
	testingclock "k8s.io/utils/clock/testing"
)

// queue is the part of workqueue.DelayingInterface the sequence uses.
type queue interface {
	AddAfter(item interface{}, d time.Duration)
	Get() (item interface{}, shutdown bool)
	Done(item interface{})
}

// hookedClock is a fake clock that reports each time a timer is armed (made
// or reset), so that the program knows an item reached the waiting heap.
type hookedClock struct {
	*testingclock.FakeClock
	armed chan struct{}
}

func (c hookedClock) NewTimer(d time.Duration) clock.Timer {
	t := hookedTimer{c.FakeClock.NewTimer(d), c.armed}
	t.signal()
	return t
}

type hookedTimer struct {
	clock.Timer
	armed chan struct{}
}

func (t hookedTimer) Reset(d time.Duration) bool {
	r := t.Timer.Reset(d)
	t.signal()
	return r
}

func (t hookedTimer) signal() {
	select {
	case t.armed <- struct{}{}:
	default:
	}
}

// payload is an item; its finalizer counts it as collected.
type payload struct {
	name string
	_    [64]byte
}

const n = 10

var collected atomic.Int32

func main() {
	c := hookedClock{testingclock.NewFakeClock(time.Now()), make(chan struct{}, 1)}
	q := newQueue(c)

	run(q, c)

	deadline := time.Now().Add(2 * time.Second)
	for collected.Load() < n && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(20 * time.Millisecond)
	}
	if held := n - collected.Load(); held > 0 {
		fmt.Printf("DEFECT: %d of %d items that waited, were handed out and marked Done are still referenced by the queue (not collected after GC)\n", held, n)
		os.Exit(1)
	}
	fmt.Printf("OK: all %d items were collected once handed out and marked Done\n", n)
	runtime.KeepAlive(q)
}

//go:noinline
func run(q queue, c hookedClock) {
	for i := 0; i < n; i++ {
		p := &payload{name: fmt.Sprint("item-", i)}
		runtime.SetFinalizer(p, func(*payload) { collected.Add(1) })
		// Earliest last, so that each item becomes the heap's head and the
		// queue re-arms its timer for it.
		q.AddAfter(p, time.Duration(n-i)*time.Second)
		select {
		case <-c.armed:
		case <-time.After(time.Second):
		}
	}
	c.Step(n * time.Second)
	for i := 0; i < n; i++ {
		item, _ := q.Get()
		q.Done(item)
	}
}
