package lasso

import (
	"testing"

	"github.com/kverify/kverify/props/checkkit"
	pctrl "github.com/kverify/kverify/props/controller"
	"github.com/kverify/kverify/props/wire"
	"github.com/kverify/kverify/subjects/suite"
	"github.com/kverify/kverify/traces"
)

// Entries bind the controller component's checks to lasso's shared
// controller (subject.go) and the wire component's to lasso's cache over
// HTTP (wire.go), with their divergences declared. kverify verify --subject
// lasso runs them through this module's TestSuite.
//
// No other component is offered: lasso has no queue, informer, FIFO or
// reflector of its own. Its controller's work queue is client-go's
// NewTypedRateLimitingQueueWithConfig, made inside controller.run and kept
// unexported (controller.go:141); its cache is client-go's
// NewSharedIndexInformer (cache/cache.go:49-57) behind lasso's
// deferredListWatcher. Both are judged as client-go's (subject upstream);
// what lasso adds around them (the deferred ListerWatcher over its REST
// client, its health check, its shared handler and factories) is what the
// controller and wire checks drive here.
func Entries() []suite.Entry {
	return []suite.Entry{{Component: pctrl.Component, Subject: Name,
		Checks:      func() []checkkit.Check { return pctrl.Checks(Controller()) },
		Divergences: ControllerDivergences,
		Replay:      func(t *testing.T, tr *traces.Trace) error { return pctrl.Replay(t, Controller(), tr) }},
		wireEntry()}
}

// divergences are every declared divergence, by component.
func divergences() map[string][]checkkit.Divergence {
	return map[string][]checkkit.Divergence{pctrl.Component: ControllerDivergences, wire.Component: WireDivergences}
}
