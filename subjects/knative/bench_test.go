package knative

import (
	"fmt"
	"testing"

	pwq "github.com/kverify/kverify/props/workqueue"
	"github.com/kverify/kverify/subjects/ours"
	"k8s.io/utils/clock"
)

// BenchmarkQueue is props/workqueue.Benchmark (the main module's
// BenchmarkQueue work) on the two-lane queue beside ours, in one run: as
// many producers as workers, each adding its own keys round-robin, the
// workers Getting and marking Done until shutdown. One op is one item (an
// Add, a Get and a Done). Both queues are driven through the suite's Queue
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
					pwq.Benchmark(b, impl.s.New(pwq.Deps{Clock: clock.RealClock{}}), workers)
				})
			}
		})
	}
}
