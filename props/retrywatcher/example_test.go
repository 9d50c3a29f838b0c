package retrywatcher_test

import (
	"fmt"

	prw "github.com/kverify/kverify/props/retrywatcher"
	"github.com/kverify/kverify/subjects/upstream"
)

// A conformance test for a watch that resumes across failures is a
// subject and one call:
//
//	func TestConformance(t *testing.T) {
//		props.Run(t, retrywatcher.Checks(subject))
//	}
//
// New starts the watcher from a version over the check's server, in the
// check's fake time. Here client-go's tools/watch.RetryWatcher is the
// subject.
func ExampleChecks() {
	for _, c := range prw.Checks(upstream.RetryWatcher()) {
		fmt.Printf("%-23s %s\n", c.Name, c.Family)
	}
	// Output:
	// retrywatcher/model      model
	// retrywatcher/exhaustive exhaustive
	// retrywatcher/bad-input  model
}
