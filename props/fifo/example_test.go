package fifo_test

import (
	"fmt"

	pfifo "github.com/kverify/kverify/props/fifo"
	"github.com/kverify/kverify/subjects/upstream"
)

// A conformance test for an informer queue is a subject and one call:
//
//	func TestConformance(t *testing.T) {
//		props.Run(t, fifo.Checks(subject))
//	}
//
// The subject makes FIFOs for the options a check asks for and translates
// the implementation's deltas into the suite's; Real selects RealFIFO's
// checks (PopBatch, atomic mode). Leaving Process nil skips the pipeline
// check, which needs the implementation's processDeltas. Here client-go's
// RealFIFO is the subject.
func ExampleChecks() {
	for _, c := range pfifo.Checks(upstream.RealFIFO()) {
		fmt.Printf("%-22s %s\n", c.Name, c.Family)
	}
	// Output:
	// realfifo/rules         witness
	// realfifo/close         timing
	// realfifo/bad-input     witness
	// realfifo/slow-warning  timing
	// realfifo/retention     retention
	// realfifo/unlock        timing
	// realfifo/bad-options   witness
	// realfifo/race          linear
	// realfifo/synced        model
	// realfifo/model         model
	// realfifo/atomic        model
	// realfifo/batch         model
	// realfifo/faults        model
	// realfifo/error-paths   model
	// realfifo/collaborators model
	// realfifo/pipeline      model
	// realfifo/replace       model
	// realfifo/exhaustive    exhaustive
	// realfifo/linear        linear
}

// DeltaFIFO (component deltafifo) takes the same checks without Real:
// RealFIFO's batch and atomic machines give way to DeltaFIFO's known-object
// rules. Here client-go's DeltaFIFO is the subject.
func ExampleChecks_deltaFIFO() {
	for _, c := range pfifo.Checks(upstream.DeltaFIFO()) {
		fmt.Printf("%-24s %s\n", c.Name, c.Family)
	}
	// Output:
	// deltafifo/rules          witness
	// deltafifo/close          timing
	// deltafifo/bad-input      witness
	// deltafifo/slow-warning   timing
	// deltafifo/retention      retention
	// deltafifo/race           linear
	// deltafifo/synced         model
	// deltafifo/model          model
	// deltafifo/no-known       model
	// deltafifo/dedup          model
	// deltafifo/faults         model
	// deltafifo/error-paths    model
	// deltafifo/collaborators  model
	// deltafifo/pipeline       model
	// deltafifo/replace        model
	// deltafifo/exhaustive     exhaustive
	// deltafifo/linear         linear
}
