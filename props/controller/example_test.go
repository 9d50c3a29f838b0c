package controller_test

import (
	"fmt"

	pctrl "github.com/kverify/kverify/props/controller"
	"github.com/kverify/kverify/subjects/ours"
)

// A conformance test for a controller is a subject and one call:
//
//	func TestConformance(t *testing.T) {
//		props.Run(t, controller.Checks(subject))
//	}
//
// The subject builds the controller over the check's server: its informer
// lists and watches Setup.Server, its handler calls Setup.Notified and
// enqueues the key, its workers call Setup.Reconcile with a reader of the
// cache. Here it is ours (impl/controller).
func ExampleChecks() {
	for _, c := range pctrl.Checks(ours.Controller()) {
		fmt.Println(c.Name, c.Family)
	}
	// Output:
	// controller/bad-input model
	// controller/retry timing
	// controller/wakeup model
	// controller/isolation model
	// controller/sync timing
	// controller/stop leak
	// controller/outcomes-exhaustive exhaustive
	// controller/converge model
}
