package modelserver

import (
	"fmt"
	"testing"
)

// TestDecodeFaults pins the fault schedule's encoding: byte 0 mod 9
// faults of 3 bytes each, missing bytes read as 0, so that saved fuzz
// inputs and kverify serve --schedule keep their meaning.
func TestDecodeFaults(t *testing.T) {
	for _, c := range []struct {
		data []byte
		want string
	}{
		{nil, "[]"},
		{[]byte{9, 1, 1, 1}, "[]"},
		{[]byte{3, 1, 0, 0, 2, 1, 0, 6, 2, 1, 0xff}, "[[refuse] [reject=500] [end-after=2/410]]"},
		{[]byte{2, 11}, "[[too-large] healthy]"},
	} {
		if got := fmt.Sprint(DecodeFaults(c.data)); got != c.want {
			t.Errorf("DecodeFaults(%v) = %s, want %s", c.data, got, c.want)
		}
	}
}
