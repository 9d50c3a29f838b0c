package checkkit

import (
	"slices"

	"pgregory.net/rapid"
)

// Size returns a generator of sizes for the bulk steps of a machine: how
// many items a burst adds, how many a drain takes. A quarter of the sizes
// are small (1 to 8), where collisions and edge cases live; a quarter land
// just below, on or just above one of the thresholds, the sizes at which
// the subject or client-go changes behaviour (initial capacities, growth
// and shrink points, chunk boundaries, warning thresholds); a quarter are
// of middling size, up to hi/2; and a quarter are large, from hi/2 to hi,
// which callers set well past the largest threshold. Bugs that only appear
// beyond some size are then reached in most cases of a default run,
// whatever that size is. Sizes shrink towards the small ones.
func Size(hi int, thresholds ...int) *rapid.Generator[int] {
	ts := slices.Clone(thresholds)
	slices.Sort(ts)
	return rapid.Custom(func(t *rapid.T) int {
		switch rapid.SampledFrom([]int{0, 1, 2, 3}).Draw(t, "size class") {
		case 0:
			return rapid.IntRange(1, min(8, hi)).Draw(t, "small")
		case 1:
			if len(ts) > 0 {
				th := rapid.SampledFrom(ts).Draw(t, "threshold")
				return max(1, min(hi, th+rapid.IntRange(-1, 1).Draw(t, "offset")))
			}
			return spread(t, 1, hi)
		case 2:
			return spread(t, min(9, hi), max(min(9, hi), hi/2))
		}
		// The top class picks one of four equal bands first: rapid's
		// IntRange(hi/2, hi) almost never left the bottom of its range
		// (0 of 100 draws above 3/4 of hi), and counting down from hi
		// instead would shrink counterexamples towards hi, not hi/2.
		return quarters(t, max(1, hi/2), hi)
	})
}

// spread draws from [lo, hi] with every doubling of the range as likely as
// the others: rapid draws small integers far more often than large ones,
// so an order of magnitude is picked first.
func spread(t *rapid.T, lo, hi int) int {
	var bands [][2]int
	for b := lo; b <= hi; {
		up := min(hi, 2*b)
		bands = append(bands, [2]int{b, up})
		b = up + 1
	}
	return inBand(t, bands)
}

// quarters draws from [lo, hi] with each quarter of the range as likely as
// the others; it shrinks towards lo.
func quarters(t *rapid.T, lo, hi int) int {
	w := max(1, (hi-lo+4)/4)
	var bands [][2]int
	for b := lo; b <= hi; b += w {
		bands = append(bands, [2]int{b, min(hi, b+w-1)})
	}
	return inBand(t, bands)
}

// inBand picks one of bands, then a value in it.
func inBand(t *rapid.T, bands [][2]int) int {
	band := rapid.SampledFrom(bands).Draw(t, "band")
	return rapid.IntRange(band[0], band[1]).Draw(t, "n")
}

// Choice returns a generator of indexes into weights, each drawn with
// probability proportional to its weight. Machines pick their next
// operation with it: rapid's integer draws favour small values so strongly
// that ranges of an IntRange do not get the share their width suggests.
// Shrinking moves towards index 0.
func Choice(weights ...int) *rapid.Generator[int] {
	var idx []int
	for i, w := range weights {
		for range w {
			idx = append(idx, i)
		}
	}
	return rapid.SampledFrom(idx)
}
