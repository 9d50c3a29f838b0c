package workqueue_test

import (
	"fmt"

	impl "github.com/kverify/kverify/impl/workqueue"
	pwq "github.com/kverify/kverify/props/workqueue"
)

// A conformance test for a work queue is a factory and one call:
//
//	func TestConformance(t *testing.T) {
//		props.Run(t, workqueue.Checks(subject))
//	}
//
// Each check becomes a subtest named after the guarantee it holds the
// queue to; a failure names the broken guarantee and the shortest
// counterexample. Leaving NewWithOrder, NewDelaying, NewRateLimiting and
// Limiters nil skips the checks that need them.
func ExampleChecks() {
	subject := pwq.Subject{
		New: func(d pwq.Deps) pwq.Queue {
			return impl.New(impl.Config[string]{Clock: d.Clock})
		},
	}
	for _, c := range pwq.Checks(subject) {
		fmt.Printf("%-18s %s\n", c.Name, c.Family)
	}
	// Output:
	// queue/drain        model
	// queue/done-unheld  model
	// queue/metrics      model
	// queue/retention    retention
	// queue/leak         leak
	// queue/lifecycle    linear
	// queue/model        model
	// queue/race         linear
	// linear/fifo        linear
	// linear/per-key     linear
}
