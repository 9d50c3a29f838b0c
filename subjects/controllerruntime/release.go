package controllerruntime

import (
	"slices"

	"github.com/kverify/kverify/props/checkkit"
	"github.com/kverify/kverify/subjects/upstream"
)

// Name is the subject's name in kverify's registry.
const Name = "controller-runtime"

// Release is the controller-runtime release this package is built
// against: in this module the one go.mod pins. For any other release
// kverify generates a module (subjects/releases.PrepareControllerRuntime)
// with a copy of this package, its files chosen by their era tags
// (controllerruntime_before_vX_Y) and this line rewritten, so that the
// declarations' release ranges speak of that release.
const Release = "v0.25.3"

// Version is the release whose code the declarations quote (their
// file:line): the pinned one, whichever release is judged.
const Version = "sigs.k8s.io/controller-runtime@v0.25.3"

// forRelease returns the declarations of ds whose Releases range (a range
// of controller-runtime releases) holds Release, those of one check joined
// into one (Divergence.Or, intermittent only if each is): a check has one
// declaration, and a release may have two defects on one check (one of a
// later release, one of its own).
func forRelease(ds ...[]checkkit.Divergence) []checkkit.Divergence {
	return atRelease(Release, ds...)
}

// atRelease is forRelease for any release: what TestFindings holds each
// release's committed traces to.
func atRelease(release string, ds ...[]checkkit.Divergence) []checkkit.Divergence {
	var out []checkkit.Divergence
	at := map[string]int{}
	for _, d := range slices.Concat(ds...) {
		if ok, err := upstream.InRange(d.Releases, release); err == nil && !ok {
			continue
		}
		i, seen := at[d.Check]
		if !seen {
			at[d.Check] = len(out)
			out = append(out, d)
			continue
		}
		intermittent := out[i].Intermittent && d.Intermittent
		out[i] = out[i].Or(d)
		out[i].Intermittent = intermittent
	}
	return out
}
