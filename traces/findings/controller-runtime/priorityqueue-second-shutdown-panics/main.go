// Command priorityqueue-second-shutdown-panics shows that calling ShutDown
// twice on controller-runtime's priority queue panics with "close of closed
// channel". The queue implements client-go's workqueue interface, whose
// delaying queue documents ShutDown as "This method may be invoked more than
// once" (k8s.io/client-go@v0.37.2 util/workqueue/delaying_queue.go:238-239),
// and whose ShutDownWithDrain doc says "ShutDown can be called after
// ShutDownWithDrain" (queue.go:323-324); but priorityqueue.ShutDown closes
// its done channel unconditionally (sigs.k8s.io/controller-runtime@v0.25.3
// pkg/controller/priorityqueue/priorityqueue.go:500-503), and
// ShutDownWithDrain is ShutDown (:505-509). Sequence:
// q := priorityqueue.New[string]("q"); q.ShutDown(); q.ShutDown() (or
// q.ShutDownWithDrain(); q.ShutDown()): the second call panics.
package main

import (
	"fmt"
	"os"
)

// queue is the part of priorityqueue.PriorityQueue the sequence uses.
type queue interface {
	ShutDown()
	ShutDownWithDrain()
}

func main() {
	q := newQueue()
	q.ShutDownWithDrain()
	if p := catch(q.ShutDown); p != nil {
		fmt.Printf("DEFECT: ShutDown after ShutDownWithDrain panicked: %v\n", p)
		os.Exit(1)
	}
	if p := catch(q.ShutDown); p != nil {
		fmt.Printf("DEFECT: a second ShutDown panicked: %v\n", p)
		os.Exit(1)
	}
	fmt.Println("OK: ShutDownWithDrain, then ShutDown twice, returned without panicking")
}

// catch runs f and returns what it panicked with, if anything.
func catch(f func()) (p any) {
	defer func() { p = recover() }()
	f()
	return nil
}
