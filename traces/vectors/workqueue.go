package vectors

import (
	"fmt"
	"math/rand/v2"

	wq "github.com/kverify/kverify/spec/workqueue"
	"github.com/kverify/kverify/traces"
)

// The work queue's vectors come in three kinds, each named by the check
// whose guarantees it exercises: mixed traffic (queue/model), traffic
// that ends in a drain (queue/drain), and Done of items not being
// processed (queue/done-unheld). Outcomes follow spec/workqueue under
// client-go's profile, with kverify's contract where client-go declares a
// divergence (a drain waits for queued items too; Done of an unheld item
// changes nothing).
var workqueueKinds = []struct {
	check      string
	guarantees []string
}{
	{"queue/model", []string{"Fair", "Stingy", "Len law", "Shutdown"}},
	{"queue/drain", []string{"Drain", "Fair", "Stingy", "Shutdown"}},
	{"queue/done-unheld", []string{"Len law", "Stingy", "Fair"}},
}

func workqueueVector(seed uint64) traces.Vector {
	r := rng(seed)
	kind := workqueueKinds[seed%uint64(len(workqueueKinds))]
	keys := 1 + r.IntN(12)
	if seed%7 == 0 {
		keys = 40 + r.IntN(60) // past the ring's first growth
	}
	length := 5 + r.IntN(60)
	if seed%11 == 0 {
		length = 150 + r.IntN(150)
	}
	m := wq.New(wq.ClientGo)
	var steps []traces.VStep
	do := func(op wq.Op) {
		var out wq.Out
		m, out = m.Step(op)
		steps = append(steps, wqStep(op, out))
	}
	key := func() string { return fmt.Sprintf("k%d", r.IntN(keys)) }
	shutdown := kind.check == "queue/model" && r.IntN(3) == 0
	for i := 0; i < length; i++ {
		switch p := r.IntN(100); {
		case p < 40:
			do(wq.Op{Kind: wq.Add, Key: key()})
		case p < 65:
			if m.Enabled(wq.Op{Kind: wq.Get}) {
				do(wq.Op{Kind: wq.Get})
			} else {
				do(wq.Op{Kind: wq.Add, Key: key()})
			}
		case p < 85:
			ks := m.ProcessingKeys()
			switch {
			case kind.check == "queue/done-unheld" && (len(ks) == 0 || r.IntN(2) == 0):
				// Misuse, only in its own kind (as in the checks): Done of
				// a key that may not be processing changes nothing.
				do(wq.Op{Kind: wq.Done, Key: key()})
			case len(ks) > 0:
				do(wq.Op{Kind: wq.Done, Key: ks[r.IntN(len(ks))]})
			default:
				do(wq.Op{Kind: wq.Len})
			}
		case p < 93:
			do(wq.Op{Kind: wq.Len})
		case p < 97:
			do(wq.Op{Kind: wq.ShuttingDown})
		default:
			if shutdown && i > length/2 && !m.IsShuttingDown() {
				do(wq.Op{Kind: wq.ShutDown})
			} else {
				do(wq.Op{Kind: wq.Len})
			}
		}
	}
	if kind.check == "queue/drain" {
		drainQueue(&m, r, do)
	}
	if m.IsShuttingDown() {
		// After shutdown: what is queued is still handed out, then Get
		// says shutdown; Adds are ignored.
		do(wq.Op{Kind: wq.Add, Key: key()})
		for m.Enabled(wq.Op{Kind: wq.Get}) && len(m.Queue()) > 0 {
			do(wq.Op{Kind: wq.Get})
		}
		do(wq.Op{Kind: wq.Get})
		do(wq.Op{Kind: wq.Len})
		do(wq.Op{Kind: wq.ShuttingDown})
	}
	return traces.Vector{Header: traces.Header{Profile: "client-go", Check: kind.check, Guarantees: kind.guarantees,
		Params: map[string]float64{"keys": float64(keys)}}, Steps: steps}
}

// drainQueue hands out and finishes everything (sometimes after a
// ShutDown, which does not release a later drain), then drains: every call
// returns, as a sequential vector needs.
func drainQueue(m *wq.Model, r *rand.Rand, do func(wq.Op)) {
	if r.IntN(4) == 0 {
		do(wq.Op{Kind: wq.ShutDown})
	}
	for len(m.Queue()) > 0 || len(m.ProcessingKeys()) > 0 {
		if ks := m.ProcessingKeys(); len(ks) > 0 && (r.IntN(2) == 0 || len(m.Queue()) == 0) {
			do(wq.Op{Kind: wq.Done, Key: ks[r.IntN(len(ks))]})
		} else {
			do(wq.Op{Kind: wq.Get})
		}
	}
	drain := wq.Op{Kind: wq.ShutDownWithDrain}
	*m = m.Begin(drain)
	if !m.Enabled(drain) {
		panic("vectors: the drain would block with nothing outstanding")
	}
	do(drain)
}

func wqStep(op wq.Op, out wq.Out) traces.VStep {
	s := traces.VStep{Op: op.Kind.String()}
	switch op.Kind {
	case wq.Add, wq.Done:
		s.Key = str(op.Key)
	case wq.Get:
		if out.Shutdown {
			s.Want = &traces.Want{Key: str(""), Shutdown: boolp(true)}
		} else {
			s.Want = &traces.Want{Key: str(out.Key), Shutdown: boolp(false)}
		}
	case wq.Len:
		s.Want = &traces.Want{N: i64(out.N)}
	case wq.ShuttingDown:
		s.Want = &traces.Want{Flag: boolp(out.Flag)}
	}
	return s
}
