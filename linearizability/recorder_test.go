package linearizability

import (
	"sync"
	"testing"

	wq "github.com/kverify/kverify/spec/workqueue"
)

// The recorder's intervals contain the moment each call took effect: if a
// call returned before another was called, it took effect first.
func TestRecorder(t *testing.T) {
	const clients, per = 8, 500
	var (
		rec  Recorder
		mu   sync.Mutex
		seq  int
		wg   sync.WaitGroup
		when = map[int64]int{} // Call -> the call's effect, in real order
	)
	for id := range clients {
		wg.Go(func() {
			for range per {
				var at int
				rec.Record(id, Input{Op: wq.Len}, func() Output {
					mu.Lock()
					seq++
					at = seq
					mu.Unlock()
					return Output{N: at}
				})
			}
		})
	}
	wg.Wait()
	h := rec.History()
	if len(h) != clients*per {
		t.Fatalf("%d operations, want %d", len(h), clients*per)
	}
	stamps := map[int64]bool{}
	last := map[int]int64{} // client -> last Return
	for i, op := range h {
		if op.Call >= op.Return {
			t.Fatalf("op %d: call %d, return %d", i, op.Call, op.Return)
		}
		if i > 0 && h[i-1].Call >= op.Call {
			t.Fatalf("history not ordered by call at %d", i)
		}
		if stamps[op.Call] || stamps[op.Return] {
			t.Fatalf("op %d: timestamp reused", i)
		}
		stamps[op.Call], stamps[op.Return] = true, true
		if op.ClientId < 0 || op.ClientId >= clients {
			t.Fatalf("op %d: client %d", i, op.ClientId)
		}
		if op.Call <= last[op.ClientId] {
			t.Fatalf("op %d: client %d calls at %d before its previous call returned at %d", i, op.ClientId, op.Call, last[op.ClientId])
		}
		last[op.ClientId] = op.Return
		when[op.Call] = op.Output.(Output).N
	}
	for _, a := range h {
		for _, b := range h[len(h)-200:] {
			if a.Return < b.Call && when[a.Call] >= when[b.Call] {
				t.Fatalf("op [%d,%d] returned before [%d,%d] was called but took effect after it", a.Call, a.Return, b.Call, b.Return)
			}
		}
	}
	// A History is a copy.
	h[0].ClientId = -1
	if rec.History()[0].ClientId == -1 {
		t.Error("History shares the recorder's storage")
	}
}

func TestClientRecordsEveryCall(t *testing.T) {
	var rec Recorder
	q := newToy(defects{})
	c := rec.Client(q, 3)
	c.Add("a")
	c.Add("b")
	if n := c.Len(); n != 2 {
		t.Fatalf("Len %d", n)
	}
	k, shut := c.Get()
	c.Done(k)
	c.ShutDown()
	want := []string{"Add(a)", "Add(b)", "Len() -> 2", `Get() -> "a"`, "Done(a)", "ShutDown()"}
	h := rec.History()
	if k != "a" || shut || len(h) != len(want) {
		t.Fatalf("Get (%q, %v); history %v", k, shut, h)
	}
	for i, op := range h {
		if got := describe(op.Input.(Input), op.Output.(Output)); got != want[i] || op.ClientId != 3 {
			t.Errorf("op %d: %s by %d, want %s by 3", i, got, op.ClientId, want[i])
		}
	}
}
