package fuzz

import (
	"testing"

	"github.com/kverify/kverify/subjects/ours"

	pwq "github.com/kverify/kverify/props/workqueue"
	"github.com/kverify/kverify/subjects/upstream"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// FuzzWorkqueueOps checks our queue against the model on the whole
// contract (drain and Done misuse included), and client-go's queue on the
// part where the two are specified to agree: a differential oracle through
// the model.
func FuzzWorkqueueOps(f *testing.F) {
	f.Add([]byte{0x00, 0x02, 0x08, 0x03, 0x02})             // add a, get, add b, done, get
	f.Add([]byte{0x00, 0x02, 0x00, 0x03, 0x02, 0x03})       // re-add while processing
	f.Add([]byte{0x02, 0x0A, 0x00, 0x08, 0x10, 0x04})       // blocked gets woken by adds
	f.Add([]byte{0x00, 0x08, 0x02, 0xC7, 0x03, 0x02, 0x03}) // drain with a queued item
	f.Add([]byte{0x05, 0x00, 0x05, 0x04, 0x02})             // Done of items never handed out
	ours := ours.Workqueue()
	up := upstream.Workqueue()
	f.Fuzz(func(t *testing.T, data []byte) {
		steps := DecodeQueueSteps(data)
		if err := pwq.RunSteps(t, ours, pwq.Mode{FullDrain: true, Misuse: true}, steps, nil); err != nil {
			t.Fatalf("ours: %v\nsteps: %v", err, steps)
		}
		if err := pwq.RunSteps(t, up, pwq.Mode{}, steps, nil); err != nil {
			t.Fatalf("upstream: %v\nsteps: %v", err, steps)
		}
	})
}
