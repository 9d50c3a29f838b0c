package controllerruntime

import (
	"testing"

	"github.com/kverify/kverify/props"
	pwq "github.com/kverify/kverify/props/workqueue"
	"github.com/kverify/kverify/subjects"
	"github.com/kverify/kverify/traces"
)

// Components are the components this module registers the priority queue
// for. The delaying and rate-limiting components are not among them: their
// models have no profile for the priority queue yet (see TestSuiteTimed).
var Components = []string{pwq.Component}

// Entries bind the plain queue's checks to the priority queue under its
// profile, with its defects declared (QueueDivergences). kverify verify
// --subject controller-runtime runs them through this module's TestSuite.
func Entries() []subjects.Entry {
	return []subjects.Entry{{
		Component:   pwq.Component,
		Subject:     Name,
		Checks:      func() []props.Check { return pwq.QueueChecks(Subject()) },
		Divergences: QueueDivergences,
		Replay:      func(t *testing.T, tr *traces.Trace) error { return pwq.Replay(t, Subject(), tr) },
	}}
}
