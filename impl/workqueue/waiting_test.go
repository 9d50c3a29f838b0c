package workqueue

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// The waiting set against a plain model (a map of ready times and a linear
// scan for the minimum) under random inserts, lowerings and pops over a
// small key space, with slots reused and the slab compacted after bursts.
func TestWaitingAgainstModel(t *testing.T) {
	for seed := range uint64(20) {
		r := rand.New(rand.NewPCG(seed, 1))
		var w waiting[string]
		type entry struct {
			at  time.Duration
			seq int
		}
		model := map[string]entry{}
		seq := 0
		keys := 3 + r.IntN(300)
		for step := range 5000 {
			if r.IntN(3) > 0 || len(model) == 0 {
				k := fmt.Sprint("k", r.IntN(keys))
				at := time.Duration(r.IntN(50))
				head := w.insert(k, at)
				changed := false
				if e, ok := model[k]; !ok || at < e.at {
					seq++
					model[k] = entry{at, seq}
					changed = true
				}
				min := ""
				for mk, e := range model {
					if m, ok := model[min]; min == "" || !ok || e.at < m.at || e.at == m.at && e.seq < m.seq {
						min = mk
					}
				}
				// head reports a change of the head: a discarded ready time
				// changes nothing, even for the head's own item.
				if head != (changed && min == k) {
					t.Fatalf("seed %d step %d: insert(%s, %v) head = %v, model head %s", seed, step, k, at, head, min)
				}
			} else {
				min := ""
				for mk, e := range model {
					if m, ok := model[min]; min == "" || !ok || e.at < m.at || e.at == m.at && e.seq < m.seq {
						min = mk
					}
				}
				if got := w.pop(); got != min {
					t.Fatalf("seed %d step %d: pop = %s, model %s", seed, step, got, min)
				}
				delete(model, min)
			}
			if w.len() != len(model) || w.index.n != len(model) {
				t.Fatalf("seed %d step %d: len %d, index %d, model %d", seed, step, w.len(), w.index.n, len(model))
			}
		}
		for len(model) > 0 {
			delete(model, w.pop())
		}
		if w.len() != 0 || w.index.n != 0 {
			t.Fatalf("seed %d: drained to len %d, index %d", seed, w.len(), w.index.n)
		}
	}
}

// No allocation per item in steady state: once the set has grown, refilling
// it after pops (that stay above a quarter, so nothing is compacted)
// allocates nothing.
func TestWaitingNoAllocation(t *testing.T) {
	var w waiting[string]
	keys := make([]string, 1000)
	for i := range keys {
		keys[i] = fmt.Sprint("key-", i)
	}
	fill := func() {
		for i, k := range keys {
			w.insert(k, time.Duration(i))
		}
		for w.len() > 300 { // above a quarter: no compaction
			w.pop()
		}
	}
	fill()
	if n := testing.AllocsPerRun(10, fill); n > 0 {
		t.Errorf("%v allocations per refill of %d items", n, len(keys))
	}
}
