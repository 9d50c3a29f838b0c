// Package subjects is the registry of implementations under test: ours, and
// upstream client-go, per component. Mutants are not listed here: a mutant
// is ours built with one file replaced (see package mutants), so it runs
// through the "ours" entry of a test binary built with -overlay.
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
