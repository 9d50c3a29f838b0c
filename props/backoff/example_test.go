package backoff_test

import (
	"fmt"

	pbo "github.com/kverify/kverify/props/backoff"
	"github.com/kverify/kverify/subjects/upstream"
)

// A conformance test for a backoff is a subject and one call:
//
//	func TestConformance(t *testing.T) {
//		props.Run(t, backoff.Checks(subject))
//	}
//
// New (a backoff from its parameters) is required; Default and NewDelay
// (a delay with a reset interval) add the checks that need them. Here
// k8s.io/apimachinery's wait.Backoff is the subject.
func ExampleChecks() {
	for _, c := range pbo.Checks(upstream.Backoff()) {
		fmt.Printf("%-22s %s\n", c.Name, c.Family)
	}
	// Output:
	// backoff/bad-input      model
	// backoff/nil            witness
	// backoff/default        witness
	// backoff/sequence       model
	// backoff/jitter         model
	// backoff/reset          timing
	// backoff/reset-declared timing
	// backoff/reset-exhaustive exhaustive
	// backoff/race           linear
}
