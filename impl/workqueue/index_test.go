package workqueue

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// The index against a Go map under random adds and removes that fill the
// table to its growth bound and empty it again, so that probe runs wrap
// around the table's end and deletions shift words back across it; every
// key of the universe is looked up after every step.
func TestSlotIndexAgainstMap(t *testing.T) {
	for seed := range uint64(10) {
		r := rand.New(rand.NewPCG(seed, 2))
		var x slotIndex[string]
		universe := 40 + r.IntN(400)
		slots := make([]waitSlot[string], universe)
		for i := range slots {
			slots[i].item = fmt.Sprint("k", i)
		}
		model := map[string]int{}
		for step := range 4000 {
			k := r.IntN(universe)
			item := slots[k].item
			if _, ok := model[item]; ok {
				x.remove(item, x.hash(item), slots)
				delete(model, item)
			} else {
				tag, place, _, ok := x.lookup(item, slots)
				if ok {
					t.Fatalf("seed %d step %d: absent %s found", seed, step, item)
				}
				x.add(tag, place, k)
				model[item] = k
			}
			if x.n != len(model) {
				t.Fatalf("seed %d step %d: n = %d, model %d", seed, step, x.n, len(model))
			}
			for i := range slots {
				_, _, s, ok := x.lookup(slots[i].item, slots)
				want, in := model[slots[i].item]
				if ok != in || ok && s != want {
					t.Fatalf("seed %d step %d: lookup(%s) = %d, %v; model %d, %v", seed, step, slots[i].item, s, ok, want, in)
				}
			}
		}
	}
}

// resize with a renumbering keeps every item findable under its new slot.
func TestSlotIndexResizeRenumbers(t *testing.T) {
	var x slotIndex[string]
	slots := make([]waitSlot[string], 100)
	for i := range slots {
		slots[i].item = fmt.Sprint("k", i)
		tag, place, _, _ := x.lookup(slots[i].item, slots)
		x.add(tag, place, i)
	}
	// Reverse the slab and renumber to match, into the smallest table.
	rev := make([]waitSlot[string], len(slots))
	for i := range slots {
		rev[len(slots)-1-i] = slots[i]
	}
	x.resize(sizeFor(len(slots)), func(s int) int { return len(slots) - 1 - s })
	for i := range rev {
		if _, _, s, ok := x.lookup(rev[i].item, rev); !ok || s != i {
			t.Fatalf("lookup(%s) = %d, %v after renumbering; want %d", rev[i].item, s, ok, i)
		}
	}
}
