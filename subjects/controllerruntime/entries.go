package controllerruntime

import (
	"github.com/kverify/kverify/props/checkkit"
	pctrl "github.com/kverify/kverify/props/controller"
	pwq "github.com/kverify/kverify/props/workqueue"
	"github.com/kverify/kverify/subjects/suite"
)

// Entries bind the work queue family's checks (the plain queue, the
// delaying queue, the rate-limiting queue) to the priority queue under its
// profile, and the controller component's checks to controller-runtime's
// controller (controller.go), with their divergences declared. kverify
// verify --subject controller-runtime runs them through this module's
// TestSuite; the components are listed in the main module's
// subjects.Externals.
func Entries() []suite.Entry {
	return append(suite.WorkqueueFamily(Name, Subject(), QueueDivergences, DelayingDivergences, RateLimitDivergences), controllerEntry())
}

// divergences are every declared divergence, by component.
func divergences() map[string][]checkkit.Divergence {
	return map[string][]checkkit.Divergence{pwq.Component: QueueDivergences, pwq.ComponentDelaying: DelayingDivergences, pwq.ComponentRateLimit: RateLimitDivergences,
		pctrl.Component: ControllerDivergences}
}
