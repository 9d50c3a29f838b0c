package workqueue

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// The state table against a Go map under random sets, overwrites and
// removals that fill it past its growth bound and drain it under its
// shrink bound, phase by phase, so that probe runs wrap around the table's
// end, removals shift entries back across it, and the table both grows and
// shrinks; every key of the universe is looked up after every tenth step.
func TestStatesAgainstMap(t *testing.T) {
	for seed := range uint64(10) {
		r := rand.New(rand.NewPCG(seed, 3))
		s := newStates[string]()
		universe := 40 + r.IntN(600)
		keys := make([]string, universe)
		for i := range keys {
			keys[i] = fmt.Sprint("k", i)
		}
		model := map[string]uint8{}
		grew, shrank := false, false
		for step := range 12000 {
			// Phases of growth and drain; while draining, half the steps
			// toggle one of eight hot keys, the steady traffic under which
			// a drained table shrinks.
			filling := step/3000%2 == 0
			item := keys[r.IntN(universe)]
			hot := false
			if !filling {
				if hot = r.IntN(2) == 0; hot {
					item = keys[r.IntN(8)]
				} else { // the next present key from a random start
					for j, c := 0, r.IntN(universe); j < universe; j++ {
						if k := keys[(c+j)%universe]; model[k] != 0 {
							item = k
							break
						}
					}
				}
			}
			tag := s.tag(item)
			place, got := s.find(item, tag)
			if got != model[item] {
				t.Fatalf("seed %d step %d: find(%s) = %d, model %d", seed, step, item, got, model[item])
			}
			size := len(s.entries)
			switch {
			case got != 0 && (!filling || r.IntN(4) == 0):
				s.remove(place)
				delete(model, item)
			case filling || hot || got != 0:
				st := uint8(1 + r.IntN(3))
				s.set(place, item, tag, st)
				model[item] = st
			}
			grew = grew || len(s.entries) > size
			shrank = shrank || len(s.entries) < size
			if s.n != len(model) {
				t.Fatalf("seed %d step %d: n = %d, model %d", seed, step, s.n, len(model))
			}
			if 4*s.n > 3*len(s.entries) {
				t.Fatalf("seed %d step %d: %d entries in a table of %d", seed, step, s.n, len(s.entries))
			}
			if step%10 != 0 {
				continue
			}
			for _, k := range keys {
				if _, st := s.find(k, s.tag(k)); st != model[k] {
					t.Fatalf("seed %d step %d: find(%s) = %d, model %d", seed, step, k, st, model[k])
				}
			}
		}
		if universe > 100 && (!grew || !shrank) {
			t.Errorf("seed %d: universe %d: grew %v, shrank %v; the test must exercise both", seed, universe, grew, shrank)
		}
	}
}

// A drained table gives its memory back once traffic goes on at a few keys,
// and holds no removed item: a queue that once held many keys does not keep
// a big table for its lifetime (a Go map never shrinks), and a removed item
// is not referenced from a place it left.
func TestStatesShrinkAndRelease(t *testing.T) {
	s := newStates[string]()
	const n = 10_000
	for i := range n {
		k := fmt.Sprint("k", i)
		tag := s.tag(k)
		place, _ := s.find(k, tag)
		s.set(place, k, tag, dirty)
	}
	big := len(s.entries)
	for i := range n {
		k := fmt.Sprint("k", i)
		place, st := s.find(k, s.tag(k))
		if st == 0 {
			t.Fatalf("%s missing", k)
		}
		s.remove(place)
	}
	for i := range 4 * big { // steady traffic at one key: Add, Done, Add...
		k := fmt.Sprint("hot", i%2)
		tag := s.tag(k)
		if place, st := s.find(k, tag); st != 0 {
			s.remove(place)
		} else {
			s.set(place, k, tag, dirty)
		}
	}
	if place, st := s.find("hot1", s.tag("hot1")); st != 0 {
		s.remove(place)
	}
	if len(s.entries) > 2*minStates {
		t.Errorf("table of %d entries after draining %d keys (was %d); want it to shrink", len(s.entries), n, big)
	}
	for i, e := range s.entries {
		if e != (stateEntry[string]{}) {
			t.Errorf("place %d holds %+v after every item was removed", i, e)
		}
	}
}
