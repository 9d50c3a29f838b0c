// Command workqueue-drain-skips-queued shows that ShutDownWithDrain returns
// while items are still queued. Its doc (k8s.io/client-go@v0.37.2
// util/workqueue/queue.go:321-322) says "ShutDownWithDrain is equivalent to
// ShutDown but waits until all items in the queue have been processed", but
// it waits only while the processing set is non-empty (queue.go:338):
// q := workqueue.New(); q.Add("a"); q.ShutDownWithDrain() returns at once
// with "a" still queued, never handed out, never processed.
package main

import (
	"fmt"
	"os"
	"time"
)

// queue is the part of workqueue.Interface the sequence uses.
type queue interface {
	Add(item interface{})
	Get() (item interface{}, shutdown bool)
	Done(item interface{})
	Len() int
	ShutDownWithDrain()
}

func main() {
	q := newQueue()
	q.Add("a")

	drained := make(chan int, 1)
	go func() {
		q.ShutDownWithDrain()
		drained <- q.Len()
	}()

	select {
	case n := <-drained:
		fmt.Printf("DEFECT: ShutDownWithDrain returned while %d item(s) were still queued (\"a\" was never handed out nor processed)\n", n)
		os.Exit(1)
	case <-time.After(time.Second):
	}

	// The drain is waiting, as documented: process "a" and it returns.
	item, _ := q.Get()
	q.Done(item)
	select {
	case <-drained:
		fmt.Println("OK: ShutDownWithDrain waited for the queued item \"a\" and returned once it was processed")
		os.Exit(0)
	case <-time.After(2 * time.Second):
		fmt.Println("DEFECT: ShutDownWithDrain still waiting 2s after the last queued item was processed")
		os.Exit(1)
	}
}
