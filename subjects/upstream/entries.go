package upstream

import (
	"slices"
	"testing"

	"github.com/kverify/kverify/internal/releaserange"
	"github.com/kverify/kverify/props/checkkit"
	"github.com/kverify/kverify/subjects/suite"
	"github.com/kverify/kverify/traces"
)

// Subject is the name client-go's entries carry (subjects.Upstream).
const Subject = "upstream"

// Entries binds every component's checks to client-go at Release, with the
// divergences declared for it (those whose Releases range holds Release).
// The kverify registry takes its upstream side from here, and so does the
// module kverify generates for another release, whose copy of this package
// has the adapters of that release's API era: each group of components
// comes from the adapter file of its era (or, where the release lacks the
// API, from absent.go's not-offered entries).
func Entries() []suite.Entry {
	return slices.Concat(workqueueEntries(), ringEntries(), informerEntries(), fifoEntries(), reflectorEntries(), backoffEntries(), wireEntries(), controllerEntries())
}

// entry binds one component, with the declarations that hold for Release.
func entry(component string, checks func() []checkkit.Check, ds []checkkit.Divergence, replay func(*testing.T, *traces.Trace) error) suite.Entry {
	return suite.Entry{Component: component, Subject: Subject, Checks: checks, Divergences: ForRelease(ds, Release), Replay: replay}
}

// ForRelease returns the declarations of ds that hold for release (see
// InRange). One whose range does not parse is kept, so that it is seen:
// TestDeclarationsParse names it.
func ForRelease(ds []checkkit.Divergence, release string) []checkkit.Divergence {
	var out []checkkit.Divergence
	for _, d := range ds {
		if ok, err := InRange(d.Releases, release); err != nil || ok {
			out = append(out, d)
		}
	}
	return out
}

// InRange reports whether release is in rng (releaserange.InRange: one
// or more intervals joined by "||", each space-separated bounds
// ">=vA.B.C" and "<vX.Y.Z", compared as semantic versions). The range
// form lives in internal/releaserange so that traces/findings reads it
// without building this package.
func InRange(rng, release string) (bool, error) {
	return releaserange.InRange(rng, release)
}
