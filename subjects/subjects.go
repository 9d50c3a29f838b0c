// Package subjects is the registry of implementations under test: ours, and
// upstream client-go, per component. Mutants are not listed here: a mutant
// is ours built with one file replaced (see package mutants), so it runs
// through the "ours" entry of a test binary built with -overlay.
package subjects

import (
	"slices"
	"strings"
	"testing"

	"github.com/kverify/kverify/props"
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
	Checks      func() []props.Check
	Divergences []props.Divergence
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

// RunGremlins runs, as RunSuite does, our implementation's checks of
// components but the race probes: it is what the impl packages'
// gremlins_test.go run for each go-gremlins operator mutant (make
// gremlins). The race probes (*/race) sweep hundreds of rounds of
// concurrent call pairs whatever the budget (about 28 s of the work
// queue's 37 s without -race) and are built for the race detector, which
// gremlins does not run; the model, linear and witness checks call the
// same operations.
func RunGremlins(t *testing.T, components ...string) {
	t.Helper()
	var entries []Entry
	for _, e := range All() {
		if e.Subject != Ours || !slices.Contains(components, e.Component) {
			continue
		}
		checks := e.Checks
		e.Checks = func() []props.Check {
			return slices.DeleteFunc(checks(), func(c props.Check) bool { return strings.HasSuffix(c.Name, "/race") })
		}
		e.Divergences = slices.DeleteFunc(slices.Clone(e.Divergences), func(d props.Divergence) bool { return strings.HasSuffix(d.Check, "/race") })
		entries = append(entries, e)
	}
	if len(entries) == 0 {
		t.Fatalf("no entries of ours for %v", components)
	}
	RunSuite(t, entries)
}

// Lookup returns the check called name of component on subject, from
// entries (All, or a nested module's own).
func Lookup(entries []Entry, subject, component, name string) (props.Check, bool) {
	for _, e := range entries {
		if e.Component != component || e.Subject != subject {
			continue
		}
		cs := e.Checks()
		if i := slices.IndexFunc(cs, func(c props.Check) bool { return c.Name == name }); i >= 0 {
			return cs[i], true
		}
	}
	return props.Check{}, false
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
