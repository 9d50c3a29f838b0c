package workqueue_test

import (
	"fmt"

	impl "github.com/kverify/kverify/impl/workqueue"
	pwq "github.com/kverify/kverify/props/workqueue"
	wq "github.com/kverify/kverify/spec/workqueue"
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

// A queue that differs from client-go on purpose declares where with a
// profile; the checks then hold it to that. A queue whose drain is a
// ShutDown, that takes no clock and has priorities is offered
// queue/priority, and not the checks its profile makes meaningless.
func ExampleSubject_profile() {
	subject := pwq.Subject{
		New: func(d pwq.Deps) pwq.Queue {
			return impl.New(impl.Config[string]{Clock: d.Clock}) // stands in for the queue under test
		},
		NewDelaying: func(d pwq.Deps) pwq.Delaying {
			return impl.NewDelaying(impl.DelayingConfig[string]{Config: impl.Config[string]{Clock: d.Clock}})
		},
		Profile: wq.Profile{Name: "mine", DrainIsShutDown: true},
		NoClock: true,
	}
	for _, c := range pwq.DelayingChecks(subject) {
		fmt.Println(c.Name)
	}
	// Output:
	// delaying/immediate
	// delaying/shutdown-unblocks
	// delaying/leak
	// delaying/retention
	// delaying/lifecycle
	// delaying/metrics
	// delaying/model
	// delaying/ties
	// delaying/race
	// delaying/scale
	// delaying/deadline
}
