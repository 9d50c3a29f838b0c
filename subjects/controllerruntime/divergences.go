package controllerruntime

import (
	"github.com/kverify/kverify/props"
	pwq "github.com/kverify/kverify/props/workqueue"
)

// QueueDivergences are the priority queue's defects under its own profile
// (spec/workqueue.ControllerRuntime): what the profile declares as
// deliberate passes; these are not in any profile.
var QueueDivergences = []props.Divergence{
	{
		Check:    pwq.CheckLifecycle,
		Reason:   "a second ShutDown (or ShutDownWithDrain, which is ShutDown) closes the done channel again and panics: close of closed channel",
		Upstream: Version + "/pkg/controller/priorityqueue/priorityqueue.go:500-510",
	},
	{
		Check:    pwq.CheckRace,
		Reason:   "a Get in flight when ShutDown is called can return an item together with shutdown=true (GetWithPriority returns w.shutdown.Load() beside the item it received); a caller that sees shutdown drops the item without Done, so its key stays locked",
		Upstream: Version + "/pkg/controller/priorityqueue/priorityqueue.go:449-473",
	},
	{
		Check:        pwq.CheckLinearFIFO,
		Reason:       "the Get that returns an item with shutdown=true (see queue/race) makes the history unlinearizable when a Get is in flight at the workload's ShutDown",
		Upstream:     Version + "/pkg/controller/priorityqueue/priorityqueue.go:449-473",
		Intermittent: true,
	},
	{
		Check:        pwq.CheckLinearPerKey,
		Reason:       "the same Get that returns an item with shutdown=true, seen per key",
		Upstream:     Version + "/pkg/controller/priorityqueue/priorityqueue.go:449-473",
		Intermittent: true,
	},
}
