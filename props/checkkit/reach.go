package checkkit

import (
	"flag"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// ReachClass is one class of an operation's legal inputs (or of the states
// it may meet), for a reach test: a test that draws from a check's
// generators many times and fails when a class is never reached, since a
// bug that only that class shows would get past the check (issue 27,
// class 1).
type ReachClass struct {
	Name string
	Why  string // why an implementation may get this class wrong
}

// Tally counts how often a reach test's draws reached each class.
type Tally map[string]int

// Hit counts class c once if reached; a class seen but not reached is
// listed with 0.
func (ta Tally) Hit(c string, reached bool) {
	if reached {
		ta[c]++
	} else if _, ok := ta[c]; !ok {
		ta[c] = 0
	}
}

// Check logs every class's count under what and fails t for each class of
// domains reached fewer than min times, with the reason it matters.
func (ta Tally) Check(t testing.TB, what string, min int, domains ...[]ReachClass) {
	t.Helper()
	width := 0
	for c := range ta {
		width = max(width, len(c))
	}
	var lines []string
	for _, c := range slices.Sorted(maps.Keys(ta)) {
		lines = append(lines, fmt.Sprintf("  %-*s %7d", width, c, ta[c]))
	}
	t.Logf("%s:\n%s", what, strings.Join(lines, "\n"))
	for _, d := range domains {
		for _, c := range d {
			if ta[c.Name] < min {
				t.Errorf("%s: %q reached %d times, want at least %d (%s)", what, c.Name, ta[c.Name], min, c.Why)
			}
		}
	}
}

// Seeded runs rounds of rapid.Check (100 cases each) with fixed seeds, so
// that a reach test measures the same reach at every run.
func Seeded(t *testing.T, rounds int, prop func(*rapid.T)) {
	t.Helper()
	f := flag.Lookup("rapid.seed")
	old := f.Value.String()
	defer func() { _ = f.Value.Set(old) }()
	for r := range rounds {
		if t.Failed() {
			return
		}
		_ = f.Value.Set(strconv.Itoa(27_000 + r))
		rapid.Check(t, prop)
	}
}
