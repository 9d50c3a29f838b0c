package knative

import (
	"github.com/kverify/kverify/props/checkkit"
	pwq "github.com/kverify/kverify/props/workqueue"
	"github.com/kverify/kverify/subjects/suite"
)

// Entries bind the work queue family's checks (the plain queue, the
// delaying queue, the rate-limiting queue) to the two-lane queue, with
// its divergences declared. kverify verify --subject knative runs them
// through this module's TestSuite.
func Entries() []suite.Entry {
	return suite.WorkqueueFamily(Name, Subject(), QueueDivergences, DelayingDivergences, RateLimitDivergences)
}

// divergences are every declared divergence, by component.
func divergences() map[string][]checkkit.Divergence {
	return map[string][]checkkit.Divergence{pwq.Component: QueueDivergences, pwq.ComponentDelaying: DelayingDivergences, pwq.ComponentRateLimit: RateLimitDivergences}
}
