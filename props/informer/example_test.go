package informer_test

import (
	"fmt"

	pinf "github.com/kverify/kverify/props/informer"
	"github.com/kverify/kverify/subjects/upstream"
)

// A conformance test for a shared informer's fan-out (listeners and the
// processor) is a subject and one call:
//
//	func TestConformance(t *testing.T) {
//		props.Run(t, informer.Checks(subject))
//	}
//
// Here client-go's sharedProcessor is the subject: it exposes no pump
// decision function, so pump/step is not offered.
func ExampleChecks() {
	for _, c := range pinf.Checks(upstream.Informer()) {
		note := ""
		if c.NotOffered != "" {
			note = " (not offered)"
		}
		fmt.Printf("%s %s%s\n", c.Name, c.Family, note)
	}
	// Output:
	// pump/step model (not offered)
	// processor/isolation timing
	// processor/sync timing
	// processor/shutdown leak
	// informer/lifecycle leak
	// listener/retention retention
	// listener/burst-memory retention
	// processor/start witness
	// listener/lookahead witness
	// processor/phases witness
	// resync/schedule timing
	// resync/sync-only timing
	// listener/slow-warning timing
	// processor/faults timing
	// processor/race linear
	// listener/delivery model
	// linear/listener linear (not offered)
	// listener/exhaustive exhaustive
}
