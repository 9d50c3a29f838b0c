package knative

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	pwq "github.com/kverify/kverify/props/workqueue"
	"github.com/kverify/kverify/subjects/ours"
	"k8s.io/utils/clock"
)

// benchKeys are the keys producers add, each again only once a worker has
// marked it Done, so that no Add collapses and every Add is one Get.
var benchKeys = func() []string {
	ks := make([]string, 1024)
	for i := range ks {
		ks[i] = fmt.Sprintf("ns/item-%04d", i)
	}
	return ks
}()

// BenchmarkQueue is the main module's BenchmarkQueue (subjects/bench_test.go)
// on the two-lane queue beside ours, in one run: as many producers as
// workers, each producer adding its own keys round-robin, the workers
// Getting and marking Done until shutdown. One op is one item (an Add, a
// Get and a Done). Both queues are driven through the suite's Queue
// interface, so the adapter's cost is the same on each side.
//
//	go test -run '^$' -bench Queue -benchmem -count 6 . > q.out
//	benchstat -col /impl q.out
func BenchmarkQueue(b *testing.B) {
	impls := []struct {
		name string
		s    pwq.Subject
	}{{"ours", ours.Workqueue()}, {"knative", Subject()}}
	for _, workers := range []int{1, 8} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			for _, impl := range impls {
				b.Run("impl="+impl.name, func(b *testing.B) {
					benchQueue(b, impl.s.New(pwq.Deps{Clock: clock.RealClock{}}), workers)
				})
			}
		})
	}
}

func benchQueue(b *testing.B, q pwq.Queue, workers int) {
	b.ReportAllocs()
	var (
		busy      [1024]atomic.Bool // added, not yet Done
		index     = map[string]int{}
		gets      atomic.Int64
		start     = make(chan struct{})
		producing sync.WaitGroup
		working   sync.WaitGroup
	)
	for i, k := range benchKeys {
		index[k] = i
	}
	for range workers {
		working.Go(func() {
			n := int64(0)
			for {
				item, shutdown := q.Get()
				if shutdown {
					break
				}
				q.Done(item)
				busy[index[item]].Store(false)
				n++
			}
			gets.Add(n)
		})
	}
	for p := range workers {
		lo, hi := b.N*p/workers, b.N*(p+1)/workers
		keys := benchKeys[p*len(benchKeys)/workers : (p+1)*len(benchKeys)/workers]
		producing.Go(func() {
			<-start
			for i := lo; i < hi; i++ {
				key := keys[i%len(keys)]
				flag := &busy[index[key]]
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
	q.ShutDown()
	working.Wait()
	b.StopTimer()
	if n := gets.Load(); n != int64(b.N) {
		b.Fatalf("%d Gets for %d Adds", n, b.N)
	}
}
