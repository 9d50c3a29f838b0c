package fuzz

import (
	"testing"

	"github.com/kverify/kverify/subjects/ours"

	pring "github.com/kverify/kverify/props/ring"
	"github.com/kverify/kverify/subjects/upstream"
)

// DecodeRingSteps turns bytes into a ring machine run: the first byte picks
// the initial size (0..17: empty, tiny and upstream's 16), each later byte
// one step. The low 3 bits pick the operation; for Burst and Drain the high
// 5 bits are the count minus one (1..32), for byte&7 == 5 bit 3 picks Len
// or Cap.
func DecodeRingSteps(data []byte) (initialSize int, steps []pring.Step) {
	if len(data) == 0 {
		return 0, nil
	}
	initialSize = int(data[0]) % 18
	data = data[1:]
	if len(data) > maxSteps {
		data = data[:maxSteps]
	}
	steps = make([]pring.Step, 0, len(data))
	for _, b := range data {
		var s pring.Step
		switch b & 7 {
		case 0, 1, 2:
			s = pring.Step{Kind: pring.Write}
		case 3, 4:
			s = pring.Step{Kind: pring.Read}
		case 5:
			s = pring.Step{Kind: pring.Len}
			if b&8 != 0 {
				s = pring.Step{Kind: pring.Cap}
			}
		case 6:
			s = pring.Step{Kind: pring.Burst, N: int(b>>3) + 1}
		case 7:
			s = pring.Step{Kind: pring.Drain, N: int(b>>3) + 1}
		}
		steps = append(steps, s)
	}
	return initialSize, steps
}

// FuzzRingOps drives both of our buffers (Growing, Chunked) and both of
// k8s.io/utils/buffer's rings (TypedRingGrowing, Ring) with the same
// operations, each against the model with its capacity law checked after
// every write and read. Our Growing and upstream's TypedRingGrowing share
// the model's exact law, so the run is also a differential test of the two.
func FuzzRingOps(f *testing.F) {
	f.Add([]byte{0x00, 0x00, 0x03, 0x05, 0x0D})       // size 0: write, read, Len, Cap
	f.Add([]byte{0x04, 0x1E, 0x0F, 0x1E, 0xFF, 0x07}) // size 4: grow while wrapped, drain past empty
	f.Add([]byte{0x01, 0xFE, 0x0F, 0xFE, 0xFF, 0x0D}) // size 1 (chunk 1): bursts of 32 across chunks
	f.Add([]byte{0x03, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x03, 0x03, 0x03, 0x03, 0x0D})
	f.Add([]byte{0x10, 0x7E, 0x3F, 0x7E, 0x7F, 0x7F, 0x0D}) // size 16: upstream's default
	subs := []struct {
		name string
		s    pring.Subject
	}{
		{"ours ring", ours.Ring()},
		{"ours chunked", ours.Chunked()},
		{"upstream TypedRingGrowing", upstream.Ring()},
		{"upstream Ring", upstream.ShrinkingRing()},
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		size, steps := DecodeRingSteps(data)
		for _, sub := range subs {
			if err := pring.RunSteps(sub.s, size, pring.Mode{Law: true}, steps, nil); err != nil {
				t.Fatalf("%s: %v\nNew(%d), steps: %v", sub.name, err, size, steps)
			}
		}
	})
}
