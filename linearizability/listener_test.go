package linearizability

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

func addOp(client, l int, v string, call, ret int64) porcupine.Operation {
	return porcupine.Operation{ClientId: client, Call: call, Return: ret,
		Input: ListenerInput{Listener: l, Op: ListenerAdd, Value: v}, Output: ListenerOutput{}}
}

func deliverOp(client, l int, v string, call, ret int64) porcupine.Operation {
	return porcupine.Operation{ClientId: client, Call: call, Return: ret,
		Input: ListenerInput{Listener: l, Op: ListenerDeliver}, Output: ListenerOutput{Value: v}}
}

// The model on small hand-made histories.
func TestListenerModel(t *testing.T) {
	cases := []struct {
		name    string
		h       []porcupine.Operation
		ok      bool // CheckListenerSteps
		drained bool // CheckListenerDrainedSteps
		detail  string
	}{
		{"in order", []porcupine.Operation{
			addOp(0, 0, "a", 1, 2), addOp(0, 0, "b", 3, 4),
			deliverOp(9, 0, "a", 0, 5), deliverOp(9, 0, "b", 6, 7),
		}, true, true, ""},
		{"concurrent adds, either order", []porcupine.Operation{
			addOp(0, 0, "a", 1, 4), addOp(1, 0, "b", 2, 3),
			deliverOp(9, 0, "b", 0, 5), deliverOp(9, 0, "a", 6, 7),
		}, true, true, ""},
		{"delivered while its add runs", []porcupine.Operation{
			addOp(0, 0, "a", 1, 4), deliverOp(9, 0, "a", 0, 3),
		}, true, true, ""},
		{"cut short", []porcupine.Operation{
			addOp(0, 0, "a", 1, 2), addOp(0, 0, "b", 3, 4), deliverOp(9, 0, "a", 0, 5),
		}, true, false, "never delivered"},
		{"reordered", []porcupine.Operation{
			addOp(0, 0, "a", 1, 2), addOp(0, 0, "b", 3, 4),
			deliverOp(9, 0, "b", 0, 5), deliverOp(9, 0, "a", 6, 7),
		}, false, false, "overtook"},
		{"duplicated", []porcupine.Operation{
			addOp(0, 0, "a", 1, 2), deliverOp(9, 0, "a", 0, 3), deliverOp(9, 0, "a", 4, 5),
		}, false, false, "twice"},
		{"never added", []porcupine.Operation{
			deliverOp(9, 0, "x", 0, 3),
		}, false, false, "never added"},
		{"delivered before its add", []porcupine.Operation{
			deliverOp(9, 0, "a", 0, 1), addOp(0, 0, "a", 2, 3),
		}, false, false, "before it was added"},
		{"listeners are independent", []porcupine.Operation{
			addOp(0, 0, "a", 1, 2), addOp(0, 1, "a", 1, 2), addOp(0, 0, "b", 3, 4), addOp(0, 1, "b", 3, 4),
			deliverOp(9, 1, "a", 0, 5), deliverOp(8, 0, "a", 0, 6), deliverOp(9, 1, "b", 7, 8), deliverOp(8, 0, "b", 7, 9),
		}, true, true, ""},
		{"second listener reordered", []porcupine.Operation{
			addOp(0, 0, "a", 1, 2), addOp(0, 1, "a", 1, 2), addOp(0, 0, "b", 3, 4), addOp(0, 1, "b", 3, 4),
			deliverOp(8, 0, "a", 0, 5), deliverOp(9, 1, "b", 0, 6), deliverOp(8, 0, "b", 7, 8), deliverOp(9, 1, "a", 7, 9),
		}, false, false, "listener 1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := CheckListenerSteps(c.h, DefaultSteps)
			if (err == nil) != c.ok {
				t.Errorf("CheckListenerSteps: %v, want ok=%v", err, c.ok)
			}
			derr := CheckListenerDrainedSteps(c.h, DefaultSteps)
			if (derr == nil) != c.drained {
				t.Errorf("CheckListenerDrainedSteps: %v, want ok=%v", derr, c.drained)
			}
			if c.detail != "" && (derr == nil || !strings.Contains(derr.Error(), c.detail)) {
				t.Errorf("error %v, want it to say %q", derr, c.detail)
			}
			// The partitioned models agree with the per-listener checks.
			if res := porcupine.CheckOperations(ListenerModel(), StampListener(c.h)); res != c.ok {
				t.Errorf("partitioned model: %v, want %v", res, c.ok)
			}
			if res := porcupine.CheckOperations(ListenerFIFOModel(), c.h); res != c.ok {
				t.Errorf("partitioned FIFO model: %v, want %v", res, c.ok)
			}
		})
	}
}

// ListenerModel (outstanding set + real-time rule) accepts exactly what
// ListenerFIFOModel (the spec's Delivery, step for step) accepts, on
// random small histories: adds with random intervals, deliveries of a
// random pick of values (sometimes repeated or never added) with random,
// sometimes overlapping intervals.
func TestListenerModelsAgree(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 0))
	var ok, illegal int
	for i := range 20000 {
		n := 1 + rng.IntN(6)
		var h []porcupine.Operation
		vals := make([]string, n)
		for j := range n {
			vals[j] = string(rune('a' + j))
			call := int64(rng.IntN(40))
			h = append(h, addOp(j%3, 0, vals[j], call, call+1+int64(rng.IntN(12))))
		}
		rng.Shuffle(n, func(a, b int) { vals[a], vals[b] = vals[b], vals[a] })
		k := rng.IntN(n + 1)
		dels := vals[:k]
		if rng.IntN(8) == 0 && k > 0 {
			dels = append(dels, dels[rng.IntN(k)]) // a duplicate
		}
		if rng.IntN(16) == 0 {
			dels = append(dels, "x") // never added
		}
		at := int64(rng.IntN(10))
		for _, v := range dels {
			call := at
			ret := call + 1 + int64(rng.IntN(15))
			h = append(h, deliverOp(9, 0, v, call, ret))
			at = ret + int64(rng.IntN(6)) - 2 // now and then overlapping (a broken fan-out)
		}
		fifo := porcupine.CheckOperations(ListenerFIFOModel(), h)
		set := porcupine.CheckOperations(ListenerModel(), StampListener(h))
		if fifo != set {
			t.Fatalf("seed %d, history %d: FIFO model %v, ListenerModel %v:\n%s", seed, i, fifo, set, formatListenerHistory(h))
		}
		if fifo {
			ok++
		} else {
			illegal++
		}
	}
	t.Logf("seed %d: %d linearizable, %d not", seed, ok, illegal)
}

func formatListenerHistory(h []porcupine.Operation) string {
	var b strings.Builder
	for _, op := range h {
		fmt.Fprintf(&b, "  [%d,%d] %s\n", op.Call, op.Return,
			describeListenerOp(op.Input.(ListenerInput), op.Output.(ListenerOutput)))
	}
	return b.String()
}
