// Command delaying-drain-leaks-waiting-loop shows that ShutDownWithDrain of a
// delaying queue leaves its waitingLoop goroutine running and its timers
// armed. The ShutDown doc (k8s.io/client-go@v0.37.2
// util/workqueue/delaying_queue.go:238-239) says "ShutDown stops the queue",
// and ShutDownWithDrain (queue.go:321-322) "is equivalent to ShutDown but
// waits until all items in the queue have been processed"; but delayingType
// does not override ShutDownWithDrain, so only the inner queue's runs: stopCh
// is not closed and the heartbeat is not stopped (delaying_queue.go:240-246).
// Sequence: q := workqueue.NewDelayingQueueWithCustomClock(clock, "");
// q.AddAfter("a", time.Hour); (wait until waitingLoop arms the timer for "a")
// q.ShutDownWithDrain(). It returns at once, with waitingLoop still blocked in
// its select (:320-324) and both the 10s heartbeat ticker and the timer for
// "a" still registered on the clock. With the real clock the goroutine
// lingers until its next wake-up (the heartbeat, up to 10s later); with a
// fake clock that is not stepped, for ever.
package main

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
	"time"

	"k8s.io/utils/clock"
	testingclock "k8s.io/utils/clock/testing"
)

// queue is the part of workqueue.DelayingInterface the sequence uses.
type queue interface {
	AddAfter(item interface{}, d time.Duration)
	ShutDownWithDrain()
}

// hookedClock is a fake clock that reports each NewTimer call, so that the
// program knows when the queue's goroutine has armed its timer (and is about
// to block in its select).
type hookedClock struct {
	*testingclock.FakeClock
	armed chan struct{}
}

func (c hookedClock) NewTimer(d time.Duration) clock.Timer {
	t := c.FakeClock.NewTimer(d)
	select {
	case c.armed <- struct{}{}:
	default:
	}
	return t
}

func main() {
	c := hookedClock{testingclock.NewFakeClock(time.Now()), make(chan struct{}, 1)}
	before := runtime.NumGoroutine()

	q := newQueue(c)
	q.AddAfter("a", time.Hour)
	select {
	case <-c.armed:
	case <-time.After(time.Second): // an implementation may use no NewTimer
	}
	q.ShutDownWithDrain()

	// Give the queue's goroutine up to 1s to exit.
	deadline := time.Now().Add(time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	extra := runtime.NumGoroutine() - before
	armed := c.HasWaiters()
	if extra > 0 || armed {
		fmt.Printf("DEFECT: 1s after ShutDownWithDrain returned, %d queue goroutine(s) still run (%s) and timers/tickers are still armed on the clock: %v\n",
			extra, loopFrames(), armed)
		os.Exit(1)
	}
	fmt.Println("OK: ShutDownWithDrain returned with no queue goroutine left and no timer or ticker armed on the clock")
}

// loopFrames names the queue goroutine(s) still running, from the goroutine
// profile.
func loopFrames() string {
	var b bytes.Buffer
	pprof.Lookup("goroutine").WriteTo(&b, 1)
	var names []string
	for _, line := range strings.Split(b.String(), "\n") {
		if strings.Contains(line, "waitingLoop") {
			if f := strings.Fields(line); len(f) >= 3 {
				names = append(names, strings.SplitN(f[2], "+", 2)[0])
			}
		}
	}
	if len(names) == 0 {
		return "no waitingLoop frame"
	}
	return strings.Join(names, ", ")
}
