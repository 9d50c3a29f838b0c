package workqueue

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// queueSlots is the key space of BenchmarkQueue: 1024 fixed-width keys
// whose last four characters are their index in queueKeys.
const queueSlots = 1024

var queueKeys = func() []string {
	keys := make([]string, queueSlots)
	for i := range keys {
		keys[i] = fmt.Sprintf("default/object-%04d", i)
	}
	return keys
}()

// queueSlot returns the index of a key of queueKeys.
func queueSlot(key string) int {
	d := key[len(key)-4:]
	return int(d[0]-'0')*1000 + int(d[1]-'0')*100 + int(d[2]-'0')*10 + int(d[3]-'0')
}

// BenchQueue is what Benchmark drives: the plain queue's calls.
type BenchQueue interface {
	Add(item string)
	Get() (item string, shutdown bool)
	Done(item string)
	ShutDown()
}

// Benchmark measures a plain queue under contention, with a backlog: as
// many producers as workers Add keys, and the workers Get and Done them
// until the queue is shut down and empty. One op is one item: one Add, one
// Get and one Done (b.N of each), including the drain after the last Add.
//
// The work is the same for every implementation: producer p owns the keys
// queueKeys[p*1024/P : (p+1)*1024/P] and adds them round-robin, and it adds
// a key again only after a worker has called Done for its previous Add (it
// waits, yielding, on a per-key flag the worker clears after Done). So no
// Add ever finds its key queued or processing, nothing collapses, and every
// Add causes exactly one Get; producers run up to 1024 items ahead of the
// workers. The flags cost a few atomic loads and stores per item, the same
// for every implementation. The main module's BenchmarkQueue (ours and
// client-go) and subjects/knative's (the two-lane queue beside ours) run it.
func Benchmark(b *testing.B, q BenchQueue, workers int) {
	b.ReportAllocs()
	producers := workers
	var (
		busy      [queueSlots]atomic.Bool // added, not yet Done
		gets      atomic.Int64
		start     = make(chan struct{})
		producing sync.WaitGroup
		working   sync.WaitGroup
	)
	for range workers {
		working.Go(func() {
			n := int64(0)
			for {
				item, shutdown := q.Get()
				if shutdown {
					break
				}
				q.Done(item)
				busy[queueSlot(item)].Store(false)
				n++
			}
			gets.Add(n)
		})
	}
	for p := range producers {
		// Producer p does adds [lo, hi) of the b.N, with its own keys.
		lo, hi := b.N*p/producers, b.N*(p+1)/producers
		keys := queueKeys[p*queueSlots/producers : (p+1)*queueSlots/producers]
		producing.Go(func() {
			<-start
			for i := lo; i < hi; i++ {
				key := keys[i%len(keys)]
				flag := &busy[queueSlot(key)]
				for flag.Load() {
					runtime.Gosched()
				}
				flag.Store(true)
				q.Add(key)
			}
		})
	}
	b.ResetTimer()
	close(start)
	producing.Wait()
	q.ShutDown() // workers drain what is queued, then see shutdown
	working.Wait()
	b.StopTimer()
	if n := gets.Load(); n != int64(b.N) {
		b.Fatalf("%d Gets for %d Adds", n, b.N)
	}
}
