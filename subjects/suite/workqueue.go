package suite

import (
	"testing"

	"github.com/kverify/kverify/props/checkkit"
	pwq "github.com/kverify/kverify/props/workqueue"
	"github.com/kverify/kverify/traces"
)

// WorkqueueFamily binds the work queue family's checks (the plain queue,
// the delaying queue, the rate-limiting queue) to s as the subject called
// name, with each component's declared divergences; every entry replays
// its traces on s. The nested modules whose subject is a work queue
// (controller-runtime's priority queue, knative's two-lane queue) list
// these entries.
func WorkqueueFamily(name string, s pwq.Subject, queue, delaying, rateLimit []checkkit.Divergence) []Entry {
	replay := func(t *testing.T, tr *traces.Trace) error { return pwq.Replay(t, s, tr) }
	return []Entry{
		{Component: pwq.Component, Subject: name, Checks: func() []checkkit.Check { return pwq.QueueChecks(s) },
			Divergences: queue, Replay: replay},
		{Component: pwq.ComponentDelaying, Subject: name, Checks: func() []checkkit.Check { return pwq.DelayingChecks(s) },
			Divergences: delaying, Replay: replay},
		{Component: pwq.ComponentRateLimit, Subject: name, Checks: func() []checkkit.Check { return pwq.RateLimitChecks(s) },
			Divergences: rateLimit, Replay: replay},
	}
}
