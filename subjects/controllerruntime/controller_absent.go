//go:build controllerruntime_before_v0_15

package controllerruntime

import "github.com/kverify/kverify/subjects/suite"

// controllerComponent is props/controller.Component, named here because
// that package does not build against this release's apimachinery.
const controllerComponent = "controller"

// controllerEntries: before v0.15.0 controller-runtime requires a
// client-go older than v0.27, whose apimachinery lacks what kverify's
// model API server speaks (ListOptions.SendInitialEvents, watch-list), so
// the controller checks cannot be served to it.
func controllerEntries() []suite.Entry {
	return absentEntries("controller-runtime before v0.15.0 requires client-go older than v0.27.0, whose apimachinery lacks ListOptions.SendInitialEvents, which kverify's model API server (props/modelserver) speaks", controllerComponent)
}
