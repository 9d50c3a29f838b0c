package linearizability

// A porcupine search bounded by a count of model steps, not by wall time.
//
// A check's verdict must be a function of the subject, the check and the
// seed: never of wall time, nor of how much CPU the process gets. Porcupine
// bounds a search only by a timeout, which on a loaded machine (or under
// -race) runs out on histories that finish easily elsewhere, so the verdict
// would depend on the load. Porcupine has no step limit; budgeted wraps the
// model instead and counts the Step calls of each partition's search.
//
// Why the count is the same on every run. Porcupine v1.3.1's search of one
// partition (checkSingle) is deterministic for a given model and partition:
// it sorts the partition's call and return entries with sort.Sort, whose
// pattern-breaking uses a xorshift seeded by the length, not a random
// source, so equal inputs sort alike; it then walks a linked list of the
// entries in that order, depth first, and its memo (a map from hash to
// states) is only looked up, never iterated. So the sequence of Step calls,
// and the call at which a budget runs out, is a function of the model, the
// partition and the budget. What is not deterministic is porcupine's
// checkParallel: it checks partitions in goroutines and, when not verbose,
// cancels the others as soon as one fails, so which other partitions had
// run out of budget by then depends on scheduling. CheckSteps therefore
// never lets porcupine see more than one partition at a time when it needs
// per-partition answers: it partitions the history itself and checks each
// partition in a search of its own, and combines the answers in a way that
// does not depend on their order. (Our Partition functions sort their map
// keys, so even the order is fixed.) The verbose search it runs for an
// Illegal history's visualisation runs every partition to completion
// (porcupine cancels nothing when verbose), so it too is bounded by the
// budget per partition.

import (
	"context"
	"fmt"
	"runtime"
	"sync"

	"github.com/anishathalye/porcupine"
)

// DefaultSteps is the step budget of a search, per partition: how many
// times porcupine may call the model's Step before the search gives up as
// inconclusive (porcupine.Unknown). It replaces porcupine's wall-clock
// timeout, so that a search gives the same answer on a loaded machine as
// on an idle one.
//
// It is about 23 times the most steps any search took on our own
// histories, measured over the linearizability tests, props/fifo's linear
// tests, subjects' listener tests and the linear checks of subjects/ours
// (a minute of linear/fifo and 20 s of each linear check with -race):
// whole-queue histories of the workqueue linear check (about 270 calls;
// 45,000 searches) took a median of 1,200 steps, 1 in 1,000 more than
// 22,000, and at most 108,994; per-key partitions (2,700 calls) at most
// 15,234; FIFO histories at most 7,861; listener histories at most 1,014;
// the Illegal histories of the broken queues and FIFOs of the tests at
// most 1,787. The whole-queue model takes about 1 µs a step, 3 µs with
// -race, so a search that runs out costs seconds, not minutes.
const DefaultSteps = 2_500_000

// stepMeter counts the Step calls of one partition's search. Porcupine
// runs a partition's search on one goroutine, so it needs no lock.
type stepMeter struct {
	steps, limit int
}

// over reports whether the search asked for more steps than its budget.
func (m *stepMeter) over() bool { return m.steps > m.limit }

// take counts one Step call from state st and reports whether it is
// within the budget. A step from a state that is a set of states (a
// weighed state: the handed-over model's) counts once per member, so
// that the budget bounds the work of a search whatever its model.
func (m *stepMeter) take(st any) bool {
	if w, ok := st.(weighed); ok {
		m.steps += max(1, w.weight())
	} else {
		m.steps++
	}
	return m.steps <= m.limit
}

// weighed is a state whose Step costs as much as weight plain steps.
type weighed interface{ weight() int }

// budgetState is a model state with its partition's meter. The meter
// travels with the states because porcupine calls Init once per partition
// (in the partition's goroutine) and then only passes states around: a
// meter shared by all partitions would mix the counts of searches running
// at once, and the verdict would depend on goroutine scheduling.
type budgetState struct {
	inner any
	meter *stepMeter
}

// budget is a model wrapped so that each partition's search takes at most
// limit Step calls, and the meters of the searches it has started.
type budget struct {
	model porcupine.Model
	limit int

	mu     sync.Mutex
	meters []*stepMeter
}

// budgeted wraps m: every state Init returns carries a fresh meter, and
// once a partition's search has called Step more than steps times, Step
// returns false for every further call of that search, so the depth-first
// search unwinds at once (each remaining candidate fails at its first
// step). A linearization found is therefore made of real steps only (Ok is
// genuine), and a failure is genuine unless the meter ran out (then the
// answer is inconclusive). Every field of m keeps working: Partition and
// PartitionEvent, the describe functions and metadata pass through; Equal,
// Hash and DescribeState see the inner state only, so the meter never makes
// two states differ; Step and StepContext are both wrapped when m has them.
func budgeted(m porcupine.Model, steps int) *budget {
	b := &budget{limit: steps}
	w := porcupine.Model{
		Partition:                 m.Partition,
		PartitionEvent:            m.PartitionEvent,
		DescribeOperation:         m.DescribeOperation,
		DescribeOperationMetadata: m.DescribeOperationMetadata,
	}
	w.Init = func() any {
		meter := &stepMeter{limit: b.limit}
		b.mu.Lock()
		b.meters = append(b.meters, meter)
		b.mu.Unlock()
		return budgetState{inner: m.Init(), meter: meter}
	}
	if m.Step != nil {
		w.Step = func(st, in, out any) (bool, any) {
			s := st.(budgetState)
			if !s.meter.take(s.inner) {
				return false, st
			}
			ok, next := m.Step(s.inner, in, out)
			return ok, budgetState{inner: next, meter: s.meter}
		}
	}
	if m.StepContext != nil {
		w.StepContext = func(ctx context.Context, st, in, out any) (bool, any) {
			s := st.(budgetState)
			if !s.meter.take(s.inner) {
				return false, st
			}
			ok, next := m.StepContext(ctx, s.inner, in, out)
			return ok, budgetState{inner: next, meter: s.meter}
		}
	}
	w.Equal = func(s1, s2 any) bool {
		x, y := s1.(budgetState).inner, s2.(budgetState).inner
		if m.Equal == nil {
			return x == y // porcupine's own fallback, ShallowEqual
		}
		return m.Equal(x, y)
	}
	if m.Hash != nil {
		w.Hash = func(st any) uint64 { return m.Hash(st.(budgetState).inner) }
	}
	w.DescribeState = func(st any) string {
		inner := st.(budgetState).inner
		if m.DescribeState == nil {
			return fmt.Sprintf("%v", inner) // porcupine's default
		}
		return m.DescribeState(inner)
	}
	b.model = w
	return b
}

// exhausted reports whether any search started with b ran out of steps.
// Call it only once the searches have returned.
func (b *budget) exhausted() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, m := range b.meters {
		if m.over() {
			return true
		}
	}
	return false
}

// mostSteps is the largest count of Step calls of a search started with b
// (for one that ran out, the calls refused while it unwound included): how
// many steps a search needs, for the tests that measure it.
func (b *budget) mostSteps() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	most := 0
	for _, m := range b.meters {
		most = max(most, m.steps)
	}
	return most
}

// CheckSteps reports whether history is linearizable under model, giving
// each partition's search (the whole history's, for an unpartitioned
// model) at most steps calls of the model's Step; steps <= 0 means
// DefaultSteps. The result is:
//
//   - porcupine.Illegal when the search of some partition showed, within
//     its budget, that the partition has no linearization: a genuine
//     violation, since a search that runs out of steps never says Illegal
//     (the history is linearizable only if every partition is, so one
//     Illegal partition decides, whatever the others gave);
//   - porcupine.Unknown when no partition is Illegal but some ran out of
//     steps: inconclusive, which is not a verdict on the subject;
//   - porcupine.Ok otherwise.
//
// The same model, history and steps give the same result on every run and
// on any machine (see the note at the top of budget.go).
//
// Partitions are searched concurrently, up to GOMAXPROCS at once, each in
// a porcupine search of its own so that each has its own answer. For Ok
// and Unknown the returned info is empty; only an Illegal history is
// searched again, verbosely, with the same budget, so that the info can be
// drawn by SaveFailure.
func CheckSteps(model porcupine.Model, history []porcupine.Operation, steps int) (porcupine.CheckResult, porcupine.LinearizationInfo) {
	if steps <= 0 {
		steps = DefaultSteps
	}
	parts := [][]porcupine.Operation{history}
	if model.Partition != nil {
		parts = model.Partition(history)
	}
	one := model
	one.Partition, one.PartitionEvent = nil, nil
	results := make([]porcupine.CheckResult, len(parts))
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(1, runtime.GOMAXPROCS(0)))
	for i, part := range parts {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			b := budgeted(one, steps)
			switch {
			case porcupine.CheckOperations(b.model, part):
				results[i] = porcupine.Ok
			case b.exhausted():
				results[i] = porcupine.Unknown
			default:
				results[i] = porcupine.Illegal
			}
		})
	}
	wg.Wait()
	res := porcupine.Ok
	for _, r := range results {
		switch {
		case r == porcupine.Illegal:
			res = porcupine.Illegal
		case r == porcupine.Unknown && res == porcupine.Ok:
			res = porcupine.Unknown
		}
	}
	if res != porcupine.Illegal {
		return res, porcupine.LinearizationInfo{}
	}
	// The same budget per partition, so this finds the same violation;
	// verbose, porcupine runs every partition to its end, cancelling none.
	_, info := porcupine.CheckOperationsVerbose(budgeted(model, steps).model, history, 0)
	return porcupine.Illegal, info
}
