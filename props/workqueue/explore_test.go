package workqueue

import (
	"slices"
	"strings"
	"testing"

	"github.com/kverify/kverify/props/checkkit"
	wq "github.com/kverify/kverify/spec/workqueue"
	"pgregory.net/rapid"
)

// transition is one step taken from one abstract state. Workers are
// interchangeable (the key sorts them), so a worker's step is named by
// the worker's state, not its number: "Get by idle", "Done by hold:a".
type transition struct{ from, step string }

func transitionOf(x *machine, st Step) transition {
	name := st.String()
	if st.Kind == wq.Get || (st.Kind == wq.Done && st.Key == "") {
		w := x.workers[st.Worker]
		role := "idle"
		switch {
		case w.getting != nil:
			role = "get"
		case w.holding:
			role = "hold:" + w.held
		}
		name = st.Kind.String() + " by " + role
	}
	return transition{x.key(), name}
}

// TestExhaustiveVersusRandom measures what queue/exhaustive explores
// against what the random machines that share its alphabet reach
// (queue/model and queue/drain, 100 runs of 30 drawn steps each with the
// fixed seed of the reach tests, witnesses first, as the checks run): the
// abstract states and transitions each reaches that the other does not.
// It fails if the exhaustive search misses a transition of its own
// alphabet that a random run took in a state inside its space: the bound
// would then be too small to close.
func TestExhaustiveVersusRandom(t *testing.T) {
	s := reachSubject()
	exStates, exTrans := map[string]bool{}, map[transition]bool{}
	cov, err := checkkit.Explore(checkkit.Config{}, checkkit.Space[Step]{
		Name: "queue ops", Steps: queueAlphabet, Depth: exhaustiveDepth,
		Run: func(steps []Step) (key string, enabled []int, err error) {
			err = checkkit.InBubble(t, func() error {
				x := newMachine(s, exhaustiveMode, &checkkit.Recorder{})
				defer x.Close()
				for _, st := range steps {
					exStates[x.key()] = true
					exTrans[transitionOf(x, st)] = true
					if err := x.Apply(st); err != nil {
						return err
					}
				}
				key = x.key()
				exStates[key] = true
				for i, st := range queueAlphabet {
					if x.Enabled(st) {
						enabled = append(enabled, i)
					}
				}
				return nil
			})
			return key, enabled, err
		},
	})
	if err != nil {
		t.Fatalf("exhaustive on our queue: %v", err)
	}
	union, unionStates := map[transition]bool{}, map[string]bool{}
	for _, mode := range []Mode{{}, {FullDrain: true}} {
		rdStates, rdTrans := map[string]bool{}, map[transition]bool{}
		visit := func(x *machine, st Step) {
			rdStates[x.key()] = true
			if x.Enabled(st) {
				rdTrans[transitionOf(x, st)] = true
			}
		}
		for _, steps := range queueWitnesses {
			if !fits(steps, bulkMax(mode)) {
				continue
			}
			checkkit.Bubble(t, func() {
				x := newMachine(s, mode, &checkkit.Recorder{})
				defer x.Close()
				for _, st := range steps {
					visit(x, st)
					if err := x.Apply(st); err != nil {
						t.Fatalf("%s on our queue: %v", st, err)
					}
				}
			})
		}
		gen := stepGen(mode)
		checkkit.Seeded(t, 1, func(rt *rapid.T) {
			checkkit.Bubble(t, func() {
				x := newMachine(s, mode, &checkkit.Recorder{})
				defer x.Close()
				for range reachSteps {
					st := gen.Draw(rt, "step")
					visit(x, st)
					if err := x.Apply(st); err != nil {
						rt.Fatalf("%s on our queue: %v", st, err)
					}
				}
				st := Step{Kind: wq.ShutDown}
				visit(x, st)
				if err := x.Apply(st); err != nil {
					rt.Fatalf("%s on our queue: %v", st, err)
				}
			})
		})
		inside, outside := 0, 0
		for k := range rdStates {
			if exStates[k] {
				inside++
				unionStates[k] = true
			} else {
				outside++
			}
		}
		tInside, missed := 0, 0
		for tr := range rdTrans {
			if !exStates[tr.from] || isBulk(tr.step) {
				continue
			}
			tInside++
			union[tr] = true
			if !exTrans[tr] {
				missed++
				t.Errorf("mode %+v: random took %s in state %q, which the exhaustive search never did", mode, tr.step, tr.from)
			}
		}
		t.Logf("mode %+v: random reached %d of the %d exhaustive states and %d states outside its space (bulk sizes, fresh keys); took %d of its %d transitions",
			mode, inside, len(exStates), outside, tInside, len(exTrans))
	}
	var never []string
	for tr := range exTrans {
		if !union[tr] {
			never = append(never, tr.step+" in "+tr.from)
		}
	}
	slices.Sort(never)
	var unreached []string
	for k := range exStates {
		if !unionStates[k] {
			unreached = append(unreached, k)
		}
	}
	slices.Sort(unreached)
	t.Logf("%d of the %d exhaustive states no random run reached:\n  %s", len(unreached), len(exStates), strings.Join(unreached, "\n  "))
	t.Logf("exhaustive: %s; %d of its transitions no random run took, e.g.:\n  %s", cov, len(never), strings.Join(never[:min(len(never), 40)], "\n  "))
}

// isBulk reports whether a step name is a random machine's bulk step,
// which the exhaustive alphabet leaves out.
func isBulk(step string) bool {
	return strings.HasPrefix(step, "Burst(") || strings.Contains(step, ":Drain(") || strings.Contains(step, ":Steady(")
}
