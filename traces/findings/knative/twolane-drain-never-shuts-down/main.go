// Command twolane-drain-never-shuts-down shows that knative's controller
// work queue (the two-lane queue every controller.Impl runs on) does not
// shut down on ShutDownWithDrain, and spins a CPU from then on.
//
// Impl.WorkQueue() returns the two-lane queue as a
// workqueue.RateLimitingInterface. Its ShutDown shuts both lanes down
// (two_lane_queue.go:127-131), but ShutDownWithDrain is the fast lane's,
// promoted from the embedded queue: the slow lane stays open, so the
// consumer goroutine (runConsumer, two_lane_queue.go:77-124) never ends
// and the consumer queue is never shut down. Get then blocks for good
// instead of returning shutdown once the queue is drained, as the
// interface promises (client-go util/workqueue queue.go: "ShutDownWithDrain
// will cause q to ignore all new items added to it. As soon as the worker
// goroutines have "drained" the existing items in the queue, they will be
// instructed to exit"). And once the fast lane's channel is closed,
// runConsumer's second select still receives from it (a closed channel is
// always ready), sets fast=false and loops: it spins at full speed for as
// long as the process lives.
//
// Sequence: impl := controller.NewContext(ctx, r, controller.ControllerOptions{
// WorkQueueName: "q", Logger: logger, Reporter: reporter}); q :=
// impl.WorkQueue(); q.ShutDownWithDrain(); q.Get() (does not return).
package main

import (
	"fmt"
	"os"
	"syscall"
	"time"
)

// queue is the part of the work queue the sequence uses.
type queue interface {
	ShutDownWithDrain()
	ShuttingDown() bool
	Get() (any, bool)
}

func cpu() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func main() {
	q := newQueue() // knative: controller.NewContext(...).WorkQueue()

	q.ShutDownWithDrain() // nothing queued, nothing in flight: returns at once

	got := make(chan bool, 1)
	go func() {
		_, shutdown := q.Get()
		got <- shutdown
	}()
	before := cpu()
	select {
	case shutdown := <-got:
		fmt.Printf("OK: Get returned shutdown=%t after ShutDownWithDrain\n", shutdown)
		return
	case <-time.After(time.Second):
	}
	spent := cpu() - before
	fmt.Printf("DEFECT: after ShutDownWithDrain of an empty two-lane queue, Get did not return within 1s (ShuttingDown=%t), and the process used %v of CPU time in that second\n", q.ShuttingDown(), spent.Round(10*time.Millisecond))
	os.Exit(1)
}
