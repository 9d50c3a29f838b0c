package ring_test

import (
	"fmt"

	pring "github.com/kverify/kverify/props/ring"
	"github.com/kverify/kverify/subjects/upstream"
)

// A conformance test for a ring buffer is a subject and one call:
//
//	func TestConformance(t *testing.T) {
//		props.Run(t, ring.Checks(subject))
//	}
//
// The subject makes buffers and names its capacity law (Subject.Law); the
// checks hold it to that law, and the shrink witness is not offered to a
// law that never shrinks. Here client-go's Ring is the subject.
func ExampleChecks() {
	for _, c := range pring.Checks(upstream.Ring()) {
		fmt.Printf("%-26s %s\n", c.Name, c.Family)
	}
	// Output:
	// ring/fifo                  model
	// ring/cap-law               model
	// ring/retention             retention
	// ring/negative-size         witness
	// ring/shrink                witness
	// ring/exhaustive            exhaustive
}
