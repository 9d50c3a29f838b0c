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

// Components lists the component names, in table order.
func Components() []string {
	return []string{"workqueue", "delaying", "ratelimit", "ring", "informer", "deltafifo", "realfifo", "reflector", "backoff"}
}

// All returns every registered entry.
func All() []Entry {
	return slices.Concat(workqueueEntries(), ringEntries(), informerEntries(), fifoEntries(), reflectorEntries(), backoffEntries())
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

// External is a subject registered by a module of its own, nested in this
// repository, so that this module does not gain its dependencies. The
// module's TestSuite and TestReplay call RunSuite and RunReplay with its
// entries; kverify builds and runs them there.
type External struct {
	Name       string
	Dir        string   // the module's directory, relative to this module's root
	Components []string // the components it registers entries for
}

// Externals lists the subjects that live in nested modules.
func Externals() []External {
	return []External{
		// controller-runtime's priority queue (subjects/controllerruntime:
		// Components there).
		{Name: "controller-runtime", Dir: "subjects/controllerruntime", Components: []string{"workqueue", "delaying", "ratelimit"}},
	}
}

// ExternalByName returns the external subject called name.
func ExternalByName(name string) (External, bool) {
	for _, e := range Externals() {
		if e.Name == name {
			return e, true
		}
	}
	return External{}, false
}
