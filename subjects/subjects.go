// Package subjects is the registry of implementations under test: ours, and
// upstream client-go, per component. Mutants are not listed here: a mutant
// is ours built with one file replaced (see package mutants), so it runs
// through the "ours" entry of a test binary built with -overlay.
package subjects

import (
	"slices"
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
