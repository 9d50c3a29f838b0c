package knative

import (
	"testing"

	"github.com/kverify/kverify/props/checkkit"
	pctrl "github.com/kverify/kverify/props/controller"
	pwq "github.com/kverify/kverify/props/workqueue"
	"github.com/kverify/kverify/subjects/suite"
	"github.com/kverify/kverify/traces"
)

// Entries bind the work queue family's checks (the plain queue, the
// delaying queue, the rate-limiting queue) to the two-lane queue, and the
// controller component's to controller.Impl (controller.go), with their
// divergences declared. kverify verify --subject knative runs them through
// this module's TestSuite.
func Entries() []suite.Entry {
	return append(suite.WorkqueueFamily(Name, Subject(), QueueDivergences, DelayingDivergences, RateLimitDivergences),
		suite.Entry{Component: pctrl.Component, Subject: Name,
			Checks:      func() []checkkit.Check { return pctrl.Checks(Controller()) },
			Divergences: ControllerDivergences,
			Replay:      func(t *testing.T, tr *traces.Trace) error { return pctrl.Replay(t, Controller(), tr) }})
}

// divergences are every declared divergence, by component.
func divergences() map[string][]checkkit.Divergence {
	return map[string][]checkkit.Divergence{pwq.Component: QueueDivergences, pwq.ComponentDelaying: DelayingDivergences,
		pwq.ComponentRateLimit: RateLimitDivergences, pctrl.Component: ControllerDivergences}
}
