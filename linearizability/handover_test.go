package linearizability

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/anishathalye/porcupine"
	wq "github.com/kverify/kverify/spec/workqueue"
)

// The handed-over model (knative's two-lane queue) allows what the queue's
// goroutines make possible between calls, and nothing else.
func TestHandedOverModel(t *testing.T) {
	for _, c := range []struct {
		name       string
		clientGo   porcupine.CheckResult
		handedOver porcupine.CheckResult
		h          []porcupine.Operation
	}{
		{"fifo order", ok, ok, []porcupine.Operation{
			add(0, 1, 2, "a"), add(0, 3, 4, "b"), get(1, 5, 6, "a"), get(1, 7, 8, "b")}},
		{"lifo", illegal, illegal, []porcupine.Operation{
			add(0, 1, 2, "a"), add(0, 3, 4, "b"), get(1, 5, 6, "b")}},
		{"get out of nothing", illegal, illegal, []porcupine.Operation{
			add(0, 1, 2, "a"), get(1, 3, 4, "b")}},
		{"duplicate get", illegal, illegal, []porcupine.Operation{
			add(0, 1, 2, "a"), get(1, 3, 4, "a"), get(2, 5, 6, "a")}},
		// Len is three reads, not one: not judged (see stepLanes).
		{"len 0 right after add", illegal, ok, []porcupine.Operation{
			add(0, 1, 2, "a"), length(0, 3, 4, 0), get(1, 5, 6, "a")}},
		{"len counts an item twice", illegal, ok, []porcupine.Operation{
			add(0, 1, 2, "a"), add(0, 3, 4, "a"), length(0, 5, 6, 2)}},
		{"len 7", illegal, ok, []porcupine.Operation{
			add(0, 1, 2, "a"), length(0, 3, 4, 7)}},
		// Re-added while the mover held it: delivered twice.
		{"re-add while moving delivers twice", illegal, ok, []porcupine.Operation{
			add(0, 1, 2, "a"), add(0, 3, 4, "a"), get(1, 5, 6, "a"), done(1, 7, 8, "a"), get(1, 9, 10, "a")}},
		// ShutDown drains the fast lane before Get reports shutdown.
		{"shutdown after add still delivers", ok, ok, []porcupine.Operation{
			add(0, 1, 2, "a"), shutDown(0, 3, 4), get(1, 5, 6, "a"), get(1, 7, 8, "")}},
		{"shutdown loses an accepted add", illegal, illegal, []porcupine.Operation{
			add(0, 1, 2, "a"), shutDown(0, 3, 4), get(1, 5, 6, "")}},
		{"add after shutdown is dropped", ok, ok, []porcupine.Operation{
			shutDown(0, 1, 2), add(0, 3, 4, "a"), get(1, 5, 6, "")}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := porcupine.CheckOperations(QueueModelFor(wq.ClientGo), c.h); got != (c.clientGo == ok) {
				t.Errorf("client-go model: %v, want %v", got, c.clientGo)
			}
			for name, m := range map[string]porcupine.Model{"fifo": QueueModelFor(wq.Knative), "per-key": PerKeyModelFor(wq.Knative)} {
				want := c.handedOver
				if name == "per-key" && c.name == "lifo" {
					want = ok // order across keys is not per-key's
				}
				if got := porcupine.CheckOperations(m, c.h); got != (want == ok) {
					t.Errorf("handed-over %s model: %v, want %v", name, got, want)
				}
			}
		})
	}
}

// TestHandoverMirrorsSpec runs the compact two-lane states the model
// searches and the spec's TwoLane side by side on random calls and
// internal steps: the same state (as the spec prints it) and the same
// results at every step.
func TestHandoverMirrorsSpec(t *testing.T) {
	keys := []string{"a", "b", "c", "d"}
	for seed := range uint64(2000) {
		rng := rand.New(rand.NewPCG(seed, 0))
		in := &interner{}
		for _, k := range keys { // in sorted order, so that ids sort as names do
			in.id(k)
		}
		spec, mine := wq.NewTwoLane(), twoLane{}
		var trail []string
		for range 40 {
			k := keys[rng.IntN(len(keys))]
			var op string
			switch r := rng.IntN(10); {
			case r < 3:
				op = "internal"
				ss := spec.Internal()
				ns := mine.internal(nil)
				if len(ss) != len(ns) {
					t.Fatalf("seed %d after %v: %d internal steps in the spec, %d in the mirror", seed, trail, len(ss), len(ns))
				}
				if len(ss) > 0 {
					// both list the mover's step first, then the consumer
					// goroutine's
					i := rng.IntN(len(ss))
					spec, mine = ss[i], ns[i]
					op += fmt.Sprint(i)
				}
			case r < 6:
				op = "Add(" + k + ")"
				spec, _ = spec.Step(wq.Op{Kind: wq.Add, Key: k})
				mine.fast.add(in.id(k))
			case r < 8:
				op = "Get"
				enabled := mine.cons.n > 0 || mine.cons.shut
				if enabled != spec.Enabled(wq.Op{Kind: wq.Get}) {
					t.Fatalf("seed %d after %v: Get enabled: spec %v, mirror %v", seed, trail, !enabled, enabled)
				}
				if !enabled {
					break
				}
				var out wq.Out
				spec, out = spec.Step(wq.Op{Kind: wq.Get})
				id, ok := mine.cons.get()
				if ok == out.Shutdown || ok && in.name(id) != out.Key {
					t.Fatalf("seed %d after %v: Get: spec %+v, mirror %q %v", seed, trail, out, in.name(id), ok)
				}
			case r < 9:
				op = "Done(" + k + ")"
				spec, _ = spec.Step(wq.Op{Kind: wq.Done, Key: k})
				mine.cons.done(in.id(k))
			default:
				op = "ShutDown"
				spec, _ = spec.Step(wq.Op{Kind: wq.ShutDown})
				mine.fast.shut = true
			}
			trail = append(trail, op)
			want := "one of " + strings.ReplaceAll(spec.String(), " released", "")
			if got := in.describe(lanes{ts: []twoLane{mine}}); got != want {
				t.Fatalf("seed %d after %v:\nspec   %s\nmirror %s", seed, trail, want, got)
			}
		}
	}
}
