// Package vectors generates kverify's golden vectors from the spec models:
// for each component, at least 200 sequences of operations on a fresh
// instance with the outcomes its model expects, in the language-neutral
// vector format (traces.VectorFormat, JSON Lines). Any implementation, in
// any language, replays them without Go (examples/python does, for the
// work queue and the ring). The committed files are in data/; TestCurrent
// fails when they and the models disagree, and make vectors rewrites them.
//
// Operations that would block (a Get on an empty running queue, a drain
// with items outstanding, a Pop on an empty open FIFO) are not in
// vectors: a vector is a sequential script whose every call returns.
package vectors

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"time"

	"github.com/kverify/kverify/traces"
)

// PerComponent is how many vectors each component gets, at least.
const PerComponent = 240

// generators maps a component to its generator: vector i of the component
// is made from seed i.
var generators = map[string]func(seed uint64) traces.Vector{
	"workqueue":    workqueueVector,
	"ring":         ringVector,
	"ratelimit":    ratelimitVector,
	"backoff":      backoffVector,
	"delaying":     delayingVector,
	"deltafifo":    deltafifoVector,
	"realfifo":     realfifoVector,
	"informer":     informerVector,
	"reflector":    reflectorVector,
	"wire":         wireVector,
	"controller":   controllerVector,
	"retrywatcher": retrywatcherVector,
}

// Components lists the components that have vectors, sorted.
func Components() []string {
	var out []string
	for c := range generators {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}

// Generate returns the component's vectors.
func Generate(component string) ([]traces.Vector, error) {
	gen, ok := generators[component]
	if !ok {
		return nil, fmt.Errorf("vectors: no generator for component %q", component)
	}
	vs := make([]traces.Vector, PerComponent)
	for i := range vs {
		vs[i] = gen(uint64(i))
		vs[i].Header.Component, vs[i].Header.Seed = component, uint64(i)
	}
	return vs, nil
}

// rng is the generator's source for seed: PCG, stable across Go versions.
func rng(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x6b766572696679)) }

func str(s string) *string        { return &s }
func i64(n int) *int64            { x := int64(n); return &x }
func i64d(d time.Duration) *int64 { x := int64(d); return &x }
func boolp(b bool) *bool          { return &b }
