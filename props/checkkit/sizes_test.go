package checkkit

import (
	"fmt"
	"testing"

	"pgregory.net/rapid"
)

// Size must reach every part of its range in an ordinary run: small sizes,
// each threshold's neighbours, and the top quarter.
func TestSizeReachesPastThresholds(t *testing.T) {
	var small, near, large int
	rapid.Check(t, func(rt *rapid.T) {
		n := Size(4096, 1024).Draw(rt, "n")
		switch {
		case n < 1 || n > 4096:
			rt.Fatalf("size %d outside [1, 4096]", n)
		case n <= 8:
			small++
		case n >= 1023 && n <= 1025:
			near++
		case n > 3072:
			large++
		}
	})
	got := fmt.Sprintf("100 draws: %d small, %d at 1024±1, %d above 3072", small, near, large)
	t.Log(got)
	if small == 0 || near == 0 || large == 0 {
		t.Fatal(got + "; want some of each")
	}
}

func TestChoiceFollowsWeights(t *testing.T) {
	var got [3]int
	rapid.Check(t, func(rt *rapid.T) { got[Choice(1, 0, 3).Draw(rt, "i")]++ })
	if got[1] != 0 || got[2] <= got[0] {
		t.Fatalf("weights 1, 0, 3 gave %v", got)
	}
}
