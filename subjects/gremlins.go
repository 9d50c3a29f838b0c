//go:build gremlins

package subjects

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/kverify/kverify/props/checkkit"
)

// Under the gremlins build tag (make gremlins) a test binary runs only
// TestGremlins, the impl packages' gremlins_test.go: go-gremlins runs every
// test of the mutated package, and a unit test that hangs on a gremlin
// waits for gremlins' timeout (minutes), where the suite's watchdog names
// the hang in seconds. The flag is read when the test binary's main parses
// its command line, after every init.
func init() { os.Args = append(os.Args, "-test.run=^TestGremlins$") }

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
		e.Checks = func() []checkkit.Check {
			return slices.DeleteFunc(checks(), func(c checkkit.Check) bool { return strings.HasSuffix(c.Name, "/race") })
		}
		e.Divergences = slices.DeleteFunc(slices.Clone(e.Divergences), func(d checkkit.Divergence) bool { return strings.HasSuffix(d.Check, "/race") })
		entries = append(entries, e)
	}
	if len(entries) == 0 {
		t.Fatalf("no entries of ours for %v", components)
	}
	RunSuite(t, entries)
}
