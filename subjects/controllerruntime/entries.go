package controllerruntime

import "github.com/kverify/kverify/subjects/suite"

// Entries bind the work queue family's checks (the plain queue, the
// delaying queue, the rate-limiting queue) to the priority queue under its
// profile, and the controller component's checks to controller-runtime's
// controller (controller.go), with their divergences declared. kverify
// verify --subject controller-runtime runs them through this module's
// TestSuite; the components are listed in the main module's
// subjects.Externals.
func Entries() []suite.Entry {
	return append(queueEntries(), controllerEntries()...)
}
