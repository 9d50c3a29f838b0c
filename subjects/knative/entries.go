package knative

import (
	"testing"

	"github.com/kverify/kverify/props/checkkit"
	pwq "github.com/kverify/kverify/props/workqueue"
	"github.com/kverify/kverify/subjects/suite"
	"github.com/kverify/kverify/traces"
)

// Entries bind the work queue family's checks (the plain queue, the
// delaying queue, the rate-limiting queue) to the two-lane queue, with
// its divergences declared. kverify verify --subject knative runs them
// through this module's TestSuite.
func Entries() []suite.Entry {
	replay := func(t *testing.T, tr *traces.Trace) error { return pwq.Replay(t, Subject(), tr) }
	return []suite.Entry{
		{Component: pwq.Component, Subject: Name, Checks: func() []checkkit.Check { return pwq.QueueChecks(Subject()) },
			Divergences: QueueDivergences, Replay: replay},
		{Component: pwq.ComponentDelaying, Subject: Name, Checks: func() []checkkit.Check { return pwq.DelayingChecks(Subject()) },
			Divergences: DelayingDivergences, Replay: replay},
		{Component: pwq.ComponentRateLimit, Subject: Name, Checks: func() []checkkit.Check { return pwq.RateLimitChecks(Subject()) },
			Divergences: RateLimitDivergences, Replay: replay},
	}
}

// divergences are every declared divergence, by component.
func divergences() map[string][]checkkit.Divergence {
	return map[string][]checkkit.Divergence{pwq.Component: QueueDivergences, pwq.ComponentDelaying: DelayingDivergences, pwq.ComponentRateLimit: RateLimitDivergences}
}
