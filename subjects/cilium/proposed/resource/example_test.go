package resource_test

import (
	"fmt"

	"github.com/kverify/kverify/subjects/cilium/proposed/resource"
)

// ExampleChecks lists the component's checks for a subject.
func ExampleChecks() {
	for _, c := range resource.Checks(resource.Subject{}) {
		fmt.Println(c.Name, c.Family)
	}
	// Output:
	// resource/level model
}
