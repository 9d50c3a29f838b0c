// Package subjects is the registry of implementations under test.
//
// Registry is the one table of components, each bound to our
// implementation (subjects/ours) and to client-go (subjects/upstream);
// every list keyed by component comes from it, and TestRegistryConsistent
// holds the catalogues (mutants, fuzz machines, golden vectors,
// divergences) to it. Externals are the subjects that live in nested
// modules of their own (subjects/controllerruntime). Resolve turns every
// --subject form into the subjects it names; a mutant (mutant:ID) is ours
// built with one file replaced by an overlay (package mutants), run
// through the "ours" entries. RunSuite and RunReplay are what the test
// binaries of this package and of the nested modules run.
package subjects

import (
	"slices"
	"testing"

	"github.com/kverify/kverify/props/checkkit"
	"github.com/kverify/kverify/traces"
)

// Subject names.
const (
	Ours     = "ours"
	Upstream = "upstream"
)

// Entry is one component's checks bound to one subject.
type Entry struct {
	Component   string
	Subject     string
	Checks      func() []checkkit.Check
	Divergences []checkkit.Divergence
	// Replay runs a saved trace of one of the component's checks; nil
	// when the component has no replayable checks.
	Replay func(t *testing.T, tr *traces.Trace) error
}

// Lookup returns the check called name of component on subject, from
// entries (All, or a nested module's own).
func Lookup(entries []Entry, subject, component, name string) (checkkit.Check, bool) {
	for _, e := range entries {
		if e.Component != component || e.Subject != subject {
			continue
		}
		cs := e.Checks()
		if i := slices.IndexFunc(cs, func(c checkkit.Check) bool { return c.Name == name }); i >= 0 {
			return cs[i], true
		}
	}
	return checkkit.Check{}, false
}
