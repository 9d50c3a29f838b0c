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
// counterexample. Leaving NewDelaying, NewRateLimiting and Limiters nil
// leaves out those components' checks; a check the queue cannot take part
// in (metrics from a queue that declares none, pluggable storage,
// priorities) is reported as not offered, with the reason, and never
// fails.
func ExampleChecks() {
	subject := pwq.Subject{
		New: func(d pwq.Deps) pwq.Queue {
			return impl.New(impl.Config[string]{Clock: d.Clock})
		},
	}
	for _, c := range pwq.Checks(subject) {
		offered := "offered"
		if c.NotOffered != "" {
			offered = "not offered"
		}
		fmt.Printf("%-18s %-10s %s\n", c.Name, c.Family, offered)
	}
	// Output:
	// queue/drain        model      offered
	// queue/done-unheld  model      offered
	// queue/exhaustive   exhaustive offered
	// queue/metrics      model      not offered
	// queue/order        model      not offered
	// queue/priority     model      not offered
	// queue/liveness     model      offered
	// queue/retention    retention  offered
	// queue/leak         leak       offered
	// queue/lifecycle    linear     offered
	// queue/model        model      offered
	// queue/race         linear     offered
	// linear/fifo        linear     offered
	// linear/per-key     linear     offered
}

// A queue that differs from client-go on purpose declares where with a
// profile; the checks then hold it to that. A queue whose drain is a
// ShutDown and that takes no clock is not offered the checks its profile
// makes meaningless; they are listed, with the reason.
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
		if c.NotOffered != "" {
			fmt.Printf("%s: not offered: %s\n", c.Name, c.NotOffered)
			continue
		}
		fmt.Println(c.Name)
	}
	// Output:
	// delaying/immediate
	// delaying/liveness
	// delaying/shutdown-unblocks
	// delaying/shutdown-releases-drain: not offered: the queue's profile says its drain is a ShutDown (Profile.DrainIsShutDown): it waits for nothing to be released
	// delaying/leak
	// delaying/retention
	// delaying/one-timer: not offered: the queue takes no clock (Subject.NoClock): the check steps and counts the timers of an injected clock
	// delaying/lifecycle
	// delaying/fake-clock: not offered: the queue takes no clock (Subject.NoClock): the check steps and counts the timers of an injected clock
	// delaying/metrics: not offered: the queue does not declare metrics (Subject.Metrics is false; set it when the factories give Deps.Recorder to the queue's metrics provider)
	// delaying/exhaustive
	// delaying/model
	// delaying/ties
	// delaying/race
	// delaying/scale
	// delaying/deadline
}
