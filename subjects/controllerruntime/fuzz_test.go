package controllerruntime

import (
	"testing"

	"github.com/kverify/kverify/fuzz"
	pwq "github.com/kverify/kverify/props/workqueue"
)

// FuzzPriorityQueueOps holds the priority queue to the queue model under
// its profile (spec/workqueue.ControllerRuntime) on fuzzed step sequences:
// the same decoding as the main module's FuzzWorkqueueOps, with blocked
// Gets, re-adds while processing and bulk steps. Run it with
// go test -fuzz FuzzPriorityQueueOps in this directory.
func FuzzPriorityQueueOps(f *testing.F) {
	f.Add([]byte{0x00, 0x02, 0x08, 0x03, 0x02})             // add a, get, add b, done, get
	f.Add([]byte{0x00, 0x02, 0x00, 0x03, 0x02, 0x03})       // re-add while processing
	f.Add([]byte{0x02, 0x0A, 0x00, 0x08, 0x10, 0x04})       // blocked gets woken by adds
	f.Add([]byte{0x00, 0x08, 0x02, 0xC7, 0x03, 0x02, 0x03}) // drain with a queued item
	s := Subject()
	f.Fuzz(func(t *testing.T, data []byte) {
		steps := fuzz.DecodeQueueSteps(data)
		if err := pwq.RunSteps(t, s, pwq.Mode{}, steps, nil); err != nil {
			t.Fatalf("controller-runtime: %v\nsteps: %v", err, steps)
		}
	})
}
