package linearizability

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/anishathalye/porcupine"
)

// reversedAdds is a linearizable whole-queue history that makes the search
// work: n Adds of distinct keys, all concurrent, then n Gets, one after
// the other, that hand the keys out in reverse. The depth-first search
// tries the Adds in the order it meets them and must back out of most
// orders before it finds the one the Gets want.
func reversedAdds(n int) []porcupine.Operation {
	var h []porcupine.Operation
	for i := range n {
		h = append(h, add(i, int64(1+i), int64(100+i), fmt.Sprintf("k%d", i)))
	}
	for i := range n {
		t := int64(200 + 10*i)
		h = append(h, get(n, t, t+1, fmt.Sprintf("k%d", n-1-i)))
	}
	return h
}

// stepsTaken is how many Step calls an unbounded search of history makes
// under model, which must not be partitioned.
func stepsTaken(t *testing.T, model porcupine.Model, history []porcupine.Operation) (int, bool) {
	t.Helper()
	b := budgeted(model, 1<<40)
	ok := porcupine.CheckOperations(b.model, history)
	return b.mostSteps(), ok
}

// A search needs exactly as many steps as the unbounded search takes: one
// step fewer is inconclusive (Unknown, never Illegal), and that many or
// more is Ok. Every run gives the same answer.
func TestStepBudget(t *testing.T) {
	h := reversedAdds(5)
	need, linearizable := stepsTaken(t, QueueModel(), h)
	if !linearizable {
		t.Fatal("the unbounded search finds no linearization")
	}
	if need < 100 {
		t.Fatalf("the search takes %d steps; the test wants a history that makes it work", need)
	}
	t.Logf("%d operations, %d steps", len(h), need)
	for _, c := range []struct {
		steps int
		want  porcupine.CheckResult
	}{
		{1, porcupine.Unknown},
		{need / 2, porcupine.Unknown},
		{need - 1, porcupine.Unknown},
		{need, porcupine.Ok},
		{need + 1, porcupine.Ok},
		{0, porcupine.Ok}, // DefaultSteps
		{DefaultSteps, porcupine.Ok},
	} {
		for run := range 20 {
			res, info := CheckSteps(QueueModel(), h, c.steps)
			if res != c.want {
				t.Fatalf("budget %d, run %d: %s, want %s", c.steps, run, res, c.want)
			}
			if len(info.PartialLinearizations()) != 0 {
				t.Fatalf("budget %d: info for a %s result", c.steps, res)
			}
		}
	}
}

// A history that is not linearizable is Illegal with the default budget,
// on every run, with a search to draw; and a search that needs many steps
// to refute it is Unknown, not Illegal, on a budget too small.
func TestStepBudgetIllegal(t *testing.T) {
	simple := []porcupine.Operation{add(0, 1, 2, "a"), get(1, 3, 4, "b")}
	// reversedAdds with the last Get handing out a key nobody added: the
	// search must try every order of the Adds to refute it.
	hard := reversedAdds(5)
	hard[len(hard)-1] = get(5, 300, 301, "zz")
	need, linearizable := stepsTaken(t, QueueModel(), hard)
	if linearizable {
		t.Fatal("the unbounded search linearizes the hard history")
	}
	t.Logf("refuting the hard history takes %d steps", need)
	for name, h := range map[string][]porcupine.Operation{"simple": simple, "hard": hard} {
		for run := range 20 {
			res, info := CheckSteps(QueueModel(), h, DefaultSteps)
			if res != porcupine.Illegal {
				t.Fatalf("%s, run %d: %s, want Illegal", name, run, res)
			}
			if len(info.PartialLinearizations()) == 0 {
				t.Fatalf("%s: Illegal without a search to draw", name)
			}
		}
	}
	for _, steps := range []int{1, need / 2, need - 1} {
		if res, _ := CheckSteps(QueueModel(), hard, steps); res != porcupine.Unknown {
			t.Errorf("hard history on %d of the %d steps it needs: %s, want Unknown", steps, need, res)
		}
	}
	if res, _ := CheckSteps(QueueModel(), hard, need); res != porcupine.Illegal {
		t.Errorf("hard history on the %d steps it needs: %s, want Illegal", need, res)
	}
}

// With a partitioned model each partition has its own budget and its own
// answer: a genuinely Illegal partition decides whatever another one gave;
// a partition out of steps makes an otherwise Ok history Unknown. The
// answer does not depend on which partition's search ends first, so it is
// the same on every run, with one CPU or several.
func TestStepBudgetPartitions(t *testing.T) {
	// Key "a": an Add and a Get, two steps. Key "b": its own Add twice
	// and a Get each, linearizable, a few steps more. Key "c": handed
	// out without an Add, Illegal at once.
	okA := []porcupine.Operation{add(0, 1, 2, "a"), get(1, 3, 4, "a")}
	okB := []porcupine.Operation{add(0, 10, 20, "b"), get(1, 11, 21, "b"), done(1, 22, 23, "b"),
		add(0, 24, 30, "b"), get(1, 25, 31, "b"), done(1, 32, 33, "b")}
	badC := []porcupine.Operation{get(2, 40, 41, "c")}
	m := PerKeyModel()
	for _, c := range []struct {
		name  string
		h     []porcupine.Operation
		steps int
		want  porcupine.CheckResult
	}{
		{"ok", append(append([]porcupine.Operation{}, okA...), okB...), 0, porcupine.Ok},
		{"b out of steps", append(append([]porcupine.Operation{}, okA...), okB...), 3, porcupine.Unknown},
		{"c illegal, b out of steps", append(append(append([]porcupine.Operation{}, okA...), okB...), badC...), 3, porcupine.Illegal},
		{"c illegal", append(append(append([]porcupine.Operation{}, okA...), okB...), badC...), 0, porcupine.Illegal},
	} {
		for _, procs := range []int{1, 2, 4} {
			prev := runtime.GOMAXPROCS(procs)
			for run := range 20 {
				if res, _ := CheckSteps(m, c.h, c.steps); res != c.want {
					runtime.GOMAXPROCS(prev)
					t.Fatalf("%s, GOMAXPROCS %d, run %d: %s, want %s", c.name, procs, run, res, c.want)
				}
			}
			runtime.GOMAXPROCS(prev)
		}
	}
}

// The wrapper keeps every field of the model working, on the inner state
// only: the meter never makes two states differ.
func TestBudgetedModelFields(t *testing.T) {
	var ctxSteps int
	inner := porcupine.Model{
		Partition:      func(h []porcupine.Operation) [][]porcupine.Operation { return [][]porcupine.Operation{h, h} },
		PartitionEvent: func(h []porcupine.Event) [][]porcupine.Event { return [][]porcupine.Event{h} },
		Init:           func() any { return 0 },
		Step:           func(st, in, out any) (bool, any) { return true, st.(int) + in.(int) },
		StepContext: func(_ context.Context, st, in, out any) (bool, any) {
			ctxSteps++
			return true, st.(int) + in.(int)
		},
		Equal:                     func(a, b any) bool { return a.(int)%10 == b.(int)%10 },
		Hash:                      func(st any) uint64 { return uint64(st.(int) % 10) },
		DescribeOperation:         func(in, out any) string { return fmt.Sprintf("+%d", in) },
		DescribeState:             func(st any) string { return fmt.Sprintf("n=%d", st) },
		DescribeOperationMetadata: func(md any) string { return "md" },
	}
	b := budgeted(inner, 2)
	w := b.model
	if got := len(w.Partition([]porcupine.Operation{{}})); got != 2 {
		t.Errorf("Partition: %d partitions, want 2", got)
	}
	if got := len(w.PartitionEvent([]porcupine.Event{{}})); got != 1 {
		t.Errorf("PartitionEvent: %d partitions, want 1", got)
	}
	if w.DescribeOperation(3, nil) != "+3" || w.DescribeOperationMetadata(nil) != "md" {
		t.Error("DescribeOperation or DescribeOperationMetadata not passed through")
	}
	s0, s1 := w.Init(), w.Init() // two partitions: two meters
	ok, a := w.Step(s0, 1, nil)
	if !ok || w.DescribeState(a) != "n=1" {
		t.Fatalf("Step: %v, %s", ok, w.DescribeState(a))
	}
	ok, c := w.StepContext(context.Background(), s1, 11, nil)
	if !ok || ctxSteps != 1 || w.DescribeState(c) != "n=11" {
		t.Fatalf("StepContext: %v, %d calls, %s", ok, ctxSteps, w.DescribeState(c))
	}
	// 1 and 11 are Equal by the inner model, though their meters differ.
	if !w.Equal(a, c) || w.Hash(a) != w.Hash(c) {
		t.Error("Equal or Hash looks at more than the inner state")
	}
	if ok, _ := w.Step(a, 1, nil); !ok {
		t.Error("the second step of s0's partition failed; the budget is 2")
	}
	if ok, _ := w.Step(a, 1, nil); ok || !b.exhausted() {
		t.Error("the third step of s0's partition succeeded, or the meter did not notice")
	}
	if ok, _ := w.Step(c, 1, nil); !ok {
		t.Error("s1's partition ran out on s0's steps: the meters are shared")
	}

	// Without Equal, Hash and DescribeState the wrapper falls back to
	// porcupine's own defaults on the inner state.
	bare := budgeted(porcupine.Model{Init: inner.Init, Step: inner.Step}, 10).model
	x, y := bare.Init(), bare.Init()
	if !bare.Equal(x, y) || bare.Hash != nil || bare.StepContext != nil || bare.DescribeState(x) != "0" {
		t.Error("the defaults of an unset Equal, Hash, StepContext or DescribeState changed")
	}
}

// A listener search that runs out of steps is Inconclusive, an error that
// is no verdict; values never delivered are still a violation.
func TestListenerStepBudget(t *testing.T) {
	h := []porcupine.Operation{
		addOp(0, 0, "a", 1, 2), addOp(0, 0, "b", 3, 4),
		deliverOp(9, 0, "a", 0, 5), deliverOp(9, 0, "b", 6, 7),
	}
	if err := CheckListenerSteps(h, 0); err != nil {
		t.Fatalf("default budget: %v", err)
	}
	err := CheckListenerSteps(h, 1)
	if !Inconclusive(err) || !strings.Contains(err.Error(), "inconclusive") {
		t.Fatalf("budget 1: %v, want an inconclusive error", err)
	}
	if err := CheckListenerDrainedSteps(h, 1); !Inconclusive(err) {
		t.Fatalf("drained, budget 1: %v, want an inconclusive error", err)
	}
	lost := append(h[:len(h):len(h)], addOp(0, 0, "c", 8, 9))
	if err := CheckListenerDrainedSteps(lost, 1); err == nil || Inconclusive(err) || !strings.Contains(err.Error(), "never delivered") {
		t.Fatalf("a lost value, budget 1: %v, want it reported", err)
	}
	if Inconclusive(nil) || Inconclusive(fmt.Errorf("other")) {
		t.Error("Inconclusive of an error that is not a ListenerError")
	}
}

// lossyFanOut hands every value to nobody: its handlers are never called.
type lossyFanOut struct {
	stopped bool
	mu      sync.Mutex
}

func (*lossyFanOut) AddHandler(func(string)) {}
func (*lossyFanOut) Distribute(string)       {}
func (f *lossyFanOut) Run(ctx context.Context) {
	<-ctx.Done()
	f.mu.Lock()
	f.stopped = true
	f.mu.Unlock()
}

// The listener workload's wait for the handlers ends after IdlePolls polls
// without a delivery, however long they take, then stops the fan-out
// through AwaitStop.
func TestListenerWorkloadIdlePolls(t *testing.T) {
	f := &lossyFanOut{}
	var beats, awaited int
	var mu sync.Mutex
	h := RunListenerWorkload(f, ListenerWorkload{Seed: 1, Listeners: 1, Distributors: 2, Adds: 3, IdlePolls: 20,
		Beat: func() { mu.Lock(); beats++; mu.Unlock() },
		AwaitStop: func(wait func()) bool {
			awaited++
			wait()
			return true
		}})
	if len(h) != 6 || !f.stopped || awaited != 1 {
		t.Fatalf("%d operations, stopped %v, AwaitStop called %d times", len(h), f.stopped, awaited)
	}
	if beats < 6+20 {
		t.Errorf("%d beats, want one per Add and one per poll", beats)
	}
	if err := CheckListenerDrainedSteps(h, 0); err == nil || !strings.Contains(err.Error(), "never delivered") {
		t.Errorf("lost values: %v", err)
	}
}
