// Command delaying-second-shutdown-keeps-drain shows that a second ShutDown
// of a delaying queue does not release a ShutDownWithDrain that began after
// the first ShutDown. ShutDownWithDrain's doc (k8s.io/client-go@v0.37.2
// util/workqueue/queue.go:323-324) says "ShutDown can be called after
// ShutDownWithDrain to force ShutDownWithDrain to stop waiting", and the
// delaying queue's ShutDown (delaying_queue.go:238-239) "may be invoked more
// than once"; but delayingType.ShutDown runs the inner queue's ShutDown only
// once (stopOnce, delaying_queue.go:240-246), so the second call does nothing.
// Sequence: q := workqueue.NewDelayingQueue(); q.Add("a"); q.Get();
// q.ShutDown(); go q.ShutDownWithDrain(); q.ShutDown() (repeated for 2s).
// The drain keeps waiting for Done("a").
package main

import (
	"fmt"
	"os"
	"time"
)

// queue is the part of workqueue.DelayingInterface the sequence uses.
type queue interface {
	Add(item interface{})
	Get() (item interface{}, shutdown bool)
	Done(item interface{})
	ShutDown()
	ShutDownWithDrain()
}

func main() {
	q := newQueue()
	q.Add("a")
	item, _ := q.Get() // "a" is being processed
	q.ShutDown()

	drained := make(chan struct{})
	go func() {
		q.ShutDownWithDrain() // waits for Done("a")
		close(drained)
	}()
	// Call ShutDown again, every 50ms for 2s, so that some call surely
	// comes after the drain has begun waiting: any of them must release it.
	deadline := time.After(2 * time.Second)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		q.ShutDown()
		select {
		case <-drained:
			fmt.Println("OK: a second ShutDown made the waiting ShutDownWithDrain return")
			return
		case <-deadline:
			q.Done(item)
			fmt.Println("DEFECT: ShutDownWithDrain, begun after ShutDown while \"a\" was being processed, was still waiting after 2s of further ShutDown calls")
			os.Exit(1)
		case <-tick.C:
		}
	}
}
