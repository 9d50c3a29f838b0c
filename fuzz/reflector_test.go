package fuzz

import (
	"testing"

	"github.com/kverify/kverify/subjects/ours"

	"github.com/kverify/kverify/props/checkkit"
	prefl "github.com/kverify/kverify/props/reflector"
)

// FuzzReflector decodes its input into a server history and fault schedule
// (props/reflector.Decode: malformed events, refusals, errors, slow and
// cut streams included) and runs our reflector through it against the
// model server: no panic, no hang, every invariant of reflector/machine.
func FuzzReflector(f *testing.F) {
	for _, seed := range [][]byte{
		{},
		{0x03, 3, 0}, // watch-list, 3 objects, healthy
		{0x00, 5, 2, 1, 0, 0, 6, 2, 1, 0x08, 0x10, 0x07},   // list, refusal, 429 mid-stream
		{0x03, 4, 3, 10, 0, 1, 10, 1, 3, 7, 0, 0, 0x01, 6}, // malformed: wrong type, non-numeric RV; no end bookmark
		{0x13, 7, 1, 6, 3, 1, 0x05},                        // 508 objects, 410 after 3 events
		{0x02, 2, 2, 11, 0, 0, 8, 2, 0, 0x09, 0x0a, 0x0b},  // too large, slow stream
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sc := prefl.Decode(data)
		if err := prefl.RunSchedule(t, checkkit.Config{}, ours.Reflector(), sc); err != nil {
			t.Fatalf("%s: %v", sc, err)
		}
	})
}
