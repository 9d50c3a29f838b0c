// Package releaserange reads the release ranges that divergences
// (checkkit.Divergence.Releases) and findings (traces/findings'
// finding.json) carry. It imports nothing of client-go, so that a
// package which only needs the range, such as traces/findings, does not
// build the upstream subject (subjects/upstream, which re-exports InRange).
package releaserange

import (
	"fmt"
	"strings"

	"golang.org/x/mod/semver"
)

// InRange reports whether release is in rng: one or more intervals
// joined by "||", each space-separated bounds ">=vA.B.C" and "<vX.Y.Z"
// (either or both; an empty range is every release), compared as semantic
// versions, so that v0.38.0-beta.0 < v0.38.0.
func InRange(rng, release string) (bool, error) {
	if !semver.IsValid(release) {
		return false, fmt.Errorf("release %q is not a semantic version", release)
	}
	in := false
	for _, alt := range strings.Split(rng, "||") {
		ok, err := inInterval(alt, release)
		if err != nil {
			return false, fmt.Errorf("release range %q: %v", rng, err)
		}
		in = in || ok
	}
	return in, nil
}

func inInterval(bounds, release string) (bool, error) {
	if strings.Contains(bounds, "|") {
		return false, fmt.Errorf("%q: join intervals with ||", bounds)
	}
	ok := true
	for _, b := range strings.Fields(bounds) {
		var v string
		switch {
		case strings.HasPrefix(b, ">="):
			v = b[2:]
			ok = ok && semver.Compare(release, v) >= 0
		case strings.HasPrefix(b, "<"):
			v = b[1:]
			ok = ok && semver.Compare(release, v) < 0
		default:
			return false, fmt.Errorf("bound %q is neither >=vX.Y.Z nor <vX.Y.Z", b)
		}
		if !semver.IsValid(v) {
			return false, fmt.Errorf("%q is not a semantic version", v)
		}
	}
	return ok, nil
}
