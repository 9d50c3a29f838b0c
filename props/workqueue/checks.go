package workqueue

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"weak"

	"github.com/kverify/kverify/props/checkkit"
	"github.com/kverify/kverify/props/ratelimit"
	wq "github.com/kverify/kverify/spec/workqueue"
	"github.com/kverify/kverify/traces"
	"k8s.io/utils/clock"
	"pgregory.net/rapid"
)

// The kverify components of the work queue family, each with its own
// checks: the plain queue (QueueChecks), the delaying queue
// (DelayingChecks), and the rate limiters with the rate-limiting queue
// (RateLimitChecks). A component is the unit kverify verifies, replays and
// mutates, so that each runs on its own, in seconds.
const (
	Component          = "workqueue"
	ComponentDelaying  = "delaying"
	ComponentRateLimit = ratelimit.Component
)

// Check names, stable: divergences, traces and the kill matrix refer to them.
const (
	CheckModel      = "queue/model"
	CheckDrain      = "queue/drain"
	CheckDoneUnheld = "queue/done-unheld"
	CheckRetention  = "queue/retention"
	CheckLeak       = "queue/leak"
	CheckMetrics    = "queue/metrics"
)

// Checks returns every check of the work queue family that s can take:
// QueueChecks, DelayingChecks and RateLimitChecks.
func Checks(s Subject) []checkkit.Check {
	return slices.Concat(QueueChecks(s), DelayingChecks(s), RateLimitChecks(s))
}

// DelayingChecks are the delaying queue's checks (component delaying); none
// without s.NewDelaying.
func DelayingChecks(s Subject) []checkkit.Check { return delayingChecks(s) }

// RateLimitChecks are the rate limiters' checks and the rate-limiting
// queue's (component ratelimit), the cheap limiter checks first.
func RateLimitChecks(s Subject) []checkkit.Check {
	cs := ratelimit.Checks(s.Limiters)
	// The queue's machines go before the limiters' race probe, the costly
	// one.
	i := slices.IndexFunc(cs, func(c checkkit.Check) bool { return c.Name == ratelimit.CheckRace })
	if i < 0 {
		i = len(cs)
	}
	return slices.Concat(cs[:i], rateLimitingChecks(s), cs[i:])
}

// QueueChecks are the plain queue's checks (component workqueue). They run
// cheapest first, so that a broken queue fails in the first second: the
// machines that target one feature (with bulk steps of at most
// sideMaxBulk), the retention and leak witnesses, then the full machine,
// the race probe, and the real-time linearizability checks.
func QueueChecks(s Subject) []checkkit.Check {
	cs := []checkkit.Check{
		{Name: CheckDrain, Family: checkkit.FamilyModel,
			Guarantee: "ShutDownWithDrain returns only once every item queued before it has been handed out and marked Done",
			Run:       machineCheck(s, CheckDrain, Mode{FullDrain: true})},
		{Name: CheckDoneUnheld, Family: checkkit.FamilyModel,
			Guarantee: "Done of an item that is not being processed changes nothing",
			Run:       machineCheck(s, CheckDoneUnheld, Mode{Misuse: true})},
		// Under a second, and it kills in every run what the random
		// machines find only in some: before them.
		{Name: CheckExhaustive, Family: checkkit.FamilyExhaustive,
			Guarantee: fmt.Sprintf("every sequence of up to %d operations (three keys, three workers, Len, ShuttingDown, ShutDownWithDrain, ShutDown; a Get on an empty queue stays blocked while later steps run), each ending in ShutDown, breadth first with one run per state of the model: the queue machine's guarantees hold after every step", exhaustiveDepth),
			Run:       exhaustiveCheck(s)},
		checkkit.Check{Name: CheckMetrics, Family: checkkit.FamilyModel,
			Guarantee: "with metrics on, depth counts the dirty items, adds the times an item became dirty, queue latency and work duration are observed once per item handed out and once per Done, and the retries counter does not move (the delaying and rate-limiting machines check these on their paths: delaying/metrics, ratelimiting/delegates)",
			Run:       machineCheck(s, CheckMetrics, Mode{Metrics: true})}.OfferedIf(s.Metrics, noMetrics),
		checkkit.Check{Name: CheckOrder, Family: checkkit.FamilyModel,
			Guarantee: "with pluggable storage (client-go's TypedQueueConfig.Queue), the queue Pushes exactly the items that become queued, Touches exactly when an Add collapses into a queued item (never for an item being processed, never after shutdown), Pops once per item handed out, and never Pops an empty storage or Pushes an item it holds",
			Run:       machineCheck(s, CheckOrder, Mode{Order: true})}.OfferedIf(s.NewWithOrder != nil, "the queue takes no pluggable storage (Subject.NewWithOrder is nil)"),
		checkkit.Check{Name: CheckPriority, Family: checkkit.FamilyModel,
			Guarantee: fmt.Sprintf("with priorities (AddWithOpts with a priority, GetWithPriority): the highest priority is handed out first with its priority, FIFO inside a level; re-adding a queued item with a higher priority moves it to the back of its new level, a lower one changes nothing; across bursts of up to %d items at every level, re-adds while processing, delayed and composed adds, with Len checked after every step; with metrics (Subject.Metrics), after every step the metrics are the model's as in delaying/metrics (a raise of a priority counts no add; retries as the profile counts them)", prioMaxBurst),
			Run:       priorityCheck(s)}.OfferedIf(s.NewPrioritized != nil, "the queue has no priorities (Subject.NewPrioritized is nil)"),
		checkkit.Check{Name: CheckLiveness, Family: checkkit.FamilyModel,
			Guarantee: livenessGuarantee(s.Profile),
			Run:       livenessCheck(s)}.OfferedIf(s.Profile.Fairness.Bounded(), fmt.Sprintf("the profile (%s) declares no bound on an item's wait under sustained load (Profile.Fairness is %v)", s.Profile.Name, s.Profile.Fairness)),
		{Name: CheckRetention, Family: checkkit.FamilyRetention,
			Guarantee: "an item that was handed out and marked Done is not referenced by the queue",
			Run:       retention(s)},
		{Name: CheckLeak, Family: checkkit.FamilyLeak,
			Guarantee: "no goroutine of the queue survives ShutDown or ShutDownWithDrain (metrics on)",
			Run:       leak(s)},
		{Name: CheckLifecycle, Family: checkkit.FamilyLinear,
			Guarantee: "ShutDown and ShutDownWithDrain called twice (metrics on), in either order, then at the same instant on two goroutines swept across each other for hundreds of rounds: no panic, both return, and the queue is shut down (ShuttingDown true, Get returns shutdown at once, Add adds nothing)",
			Run:       queueLifecycle(s)},
		{Name: CheckModel, Family: checkkit.FamilyModel,
			Guarantee: fmt.Sprintf("with several workers holding items and bursts, drains and steady traffic of up to %d distinct items: fair FIFO order, stingy (never handed out twice before Done), adds collapse, a re-add during processing comes back exactly once after Done, blocked Gets wake on Add and on shutdown (three at once included), Len counts the FIFO", queueMaxBulk),
			Run:       machineCheck(s, CheckModel, Mode{})},
		{Name: CheckRace, Family: checkkit.FamilyLinear,
			Guarantee: "two calls on the same item at the same instant (Add/Done, Done/Add, Add/Get, Done/Get, Get/Get, Get/Add, Add/Add, ShutDown/Get, Add/ShutDown, Len/Add, Len/Get, Done/Done, ShutDownWithDrain/Done), swept across each other's duration for hundreds of rounds: every round's history is linearizable against the whole-queue model, and a drain returns once the last item is Done",
			Run:       raceCheck(s)},
	}
	cs = append(cs, linearChecks(s)...)
	return checkkit.Replayable(cs, func(t *testing.T, tr *traces.Trace) error { return Replay(t, s, tr) })
}

// noMetrics is why the metrics checks are not offered to a queue that
// does not declare metrics.
const noMetrics = "the queue does not declare metrics (Subject.Metrics is false; set it when the factories give Deps.Recorder to the queue's metrics provider)"

// modeFor maps a machine check to its mode, for replay.
var modeFor = map[string]Mode{
	CheckModel:      {},
	CheckDrain:      {FullDrain: true},
	CheckDoneUnheld: {Misuse: true},
	CheckMetrics:    {Metrics: true},
	CheckOrder:      {Order: true},
	CheckExhaustive: exhaustiveMode,
}

// queueThresholds are the sizes at which a work queue's storage changes
// behaviour: our FIFO ring's first capacity and doublings, the size above
// which it may shrink and its quarter-full mark, and the informer's 1024.
// Bulk steps reach them and go well past the largest (queueMaxBulk).
var queueThresholds = []int{16, 17, 32, 64, 65, 128, 256, 1024, 2048}

// queueMaxBulk is the largest bulk step of the queue machines.
const queueMaxBulk = 4096

// The operations of the queue machines, in stepGen's order: shrinking
// moves towards the first.
const (
	opAdd = iota
	opGet
	opDone
	opLen
	opShuttingDown
	opMisuse
	opDrainShutDown
	opShutDown
	opBurst
	opDrain
	opSteady
)

// stepWeights are the queue machines' operation weights (per 100 steps).
var stepWeights = []int{opAdd: 27, opGet: 23, opDone: 22, opLen: 6, opShuttingDown: 3, opMisuse: 3, opDrainShutDown: 3, opShutDown: 2, opBurst: 4, opDrain: 4, opSteady: 3}

// sideMaxBulk is the largest bulk step of the machines that target one
// feature (drain, misuse, metrics, order): past the ring's first growth
// and shrink points, at a fraction of queue/model's cost.
const sideMaxBulk = 300

// bulkMax is the largest bulk step of a machine in mode.
func bulkMax(mode Mode) int {
	if mode == (Mode{}) {
		return queueMaxBulk
	}
	return sideMaxBulk
}

func stepGen(mode Mode) *rapid.Generator[Step] {
	size := checkkit.Size(bulkMax(mode), queueThresholds...)
	op := checkkit.Choice(stepWeights...)
	worker := rapid.IntRange(0, Workers-1)
	key := rapid.SampledFrom(Keys)
	return rapid.Custom(func(t *rapid.T) Step {
		switch op.Draw(t, "op") {
		case opAdd:
			return Step{Kind: wq.Add, Key: key.Draw(t, "key")}
		case opGet:
			return Step{Kind: wq.Get, Worker: worker.Draw(t, "worker")}
		case opDone:
			return Step{Kind: wq.Done, Worker: worker.Draw(t, "worker")}
		case opLen:
			return Step{Kind: wq.Len}
		case opShuttingDown:
			return Step{Kind: wq.ShuttingDown}
		case opMisuse:
			if mode.Misuse {
				return Step{Kind: wq.Done, Key: key.Draw(t, "key")}
			}
			return Step{Kind: wq.Len}
		case opDrainShutDown:
			return Step{Kind: wq.ShutDownWithDrain}
		case opShutDown:
			return Step{Kind: wq.ShutDown}
		case opBurst:
			return Step{Kind: wq.Add, Bulk: burst, N: size.Draw(t, "n")}
		case opDrain:
			return Step{Kind: wq.Get, Bulk: drain, Worker: worker.Draw(t, "worker"), N: size.Draw(t, "n")}
		default:
			return Step{Kind: wq.Get, Bulk: steady, Worker: worker.Draw(t, "worker"), N: size.Draw(t, "n")}
		}
	})
}

// queueWitnesses are fixed runs every queue/model check makes before its
// random exploration, so that states a random run reaches only now and
// then are reached in every run: several workers blocked in Get when
// ShutDown (or an Add, or a Done that re-queues) comes, and sizes past
// every threshold, with the FIFO wrapped when the ring grows and shrinks.
var queueWitnesses = [][]Step{
	{{Kind: wq.Get, Worker: 0}, {Kind: wq.Get, Worker: 1}, {Kind: wq.Get, Worker: 2}, {Kind: wq.ShutDown}},
	{{Kind: wq.Get, Worker: 0}, {Kind: wq.Get, Worker: 1}, {Kind: wq.Get, Worker: 2}, {Kind: wq.ShutDownWithDrain}},
	{{Kind: wq.Get, Worker: 0}, {Kind: wq.Get, Worker: 1}, {Kind: wq.Add, Key: "a"}, {Kind: wq.Add, Key: "a"}, {Kind: wq.Add, Key: "b"},
		{Kind: wq.Get, Worker: 2}, {Kind: wq.Add, Key: "a"}, {Kind: wq.Done, Worker: 0}, {Kind: wq.Done, Worker: 1}},
	{{Kind: wq.Add, Key: "a"}, {Kind: wq.Get, Worker: 0}, {Kind: wq.Add, Key: "a"}, {Kind: wq.Get, Worker: 1}, {Kind: wq.Get, Worker: 2},
		{Kind: wq.Done, Worker: 0}, {Kind: wq.Add, Key: "b"}, {Kind: wq.ShutDown}},
	{{Kind: wq.Add, Bulk: burst, N: 20}, {Kind: wq.Get, Bulk: drain, N: 10}, {Kind: wq.Add, Bulk: burst, N: 1100},
		{Kind: wq.Get, Bulk: drain, N: 1050}, {Kind: wq.Get, Bulk: steady, N: 2200}, {Kind: wq.Get, Bulk: drain, N: 100}},
	// Turn the FIFO over with a large backlog, drain it below a quarter
	// and keep the traffic steady: a ring that gives memory back shrinks
	// while its items wrap around the array's end.
	{{Kind: wq.Add, Bulk: burst, N: 300}, {Kind: wq.Get, Bulk: steady, N: 250}, {Kind: wq.Get, Bulk: drain, N: 180},
		{Kind: wq.Get, Bulk: steady, N: 600}, {Kind: wq.Add, Key: "a"}, {Kind: wq.Add, Bulk: burst, N: 40}, {Kind: wq.Add, Key: "a"},
		{Kind: wq.Get, Bulk: drain, N: 200}},
}

// fits reports whether a witness's bulk steps are within max.
func fits(steps []Step, max int) bool {
	for _, st := range steps {
		if st.N > max {
			return false
		}
	}
	return true
}

func machineCheck(s Subject, name string, mode Mode) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, cfg checkkit.Config) error {
		for _, steps := range queueWitnesses {
			if !fits(steps, bulkMax(mode)) {
				continue
			}
			rec := checkkit.NewRecorder(cfg.Progress)
			if err := RunSteps(t, s, mode, steps, rec); err != nil {
				return checkkit.Save(t, cfg, Component, name, rec.Attach(err))
			}
		}
		gen := stepGen(mode)
		err := checkkit.Rapid(t, cfg, func(rt *rapid.T, rec *checkkit.Recorder) {
			checkkit.Bubble(t, func() {
				x := newMachine(s, mode, rec)
				defer x.Close()
				rt.Repeat(map[string]func(*rapid.T){
					"step": func(rt *rapid.T) {
						if err := x.Apply(gen.Draw(rt, "step")); err != nil {
							rec.Errorf(rt, err)
						}
					},
				})
				// Every run ends with a checked ShutDown: it must release
				// every blocked Get.
				if err := x.Apply(Step{Kind: wq.ShutDown}); err != nil {
					rec.Errorf(rt, err)
				}
			})
		})
		return checkkit.Save(t, cfg, Component, name, err)
	}
}

// RunSteps runs steps on a fresh queue from s inside a synctest bubble and
// checks every outcome against the model. It is the engine behind the
// rapid checks, trace replay and the fuzz targets. rec may be nil.
func RunSteps(t *testing.T, s Subject, mode Mode, steps []Step, rec *checkkit.Recorder) error {
	if rec == nil {
		rec = &checkkit.Recorder{}
	}
	return checkkit.InBubble(t, func() error {
		x := newMachine(s, mode, rec)
		defer x.Close()
		for _, st := range steps {
			if err := x.Apply(st); err != nil {
				return err
			}
		}
		return nil
	})
}

// retentionProbes is how many finished items the retention check watches.
// One is not enough: a state table that keeps a removed item in its
// emptied place loses it again whenever a neighbour shifts into that
// place, which depends on the hash seed; with this many, interleaved with
// items that stay, some place always keeps its stale item.
const retentionProbes = 32

func retention(s Subject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, _ checkkit.Config) error {
		q := s.New(Deps{Clock: clock.RealClock{}})
		defer q.ShutDown()
		// Heap-allocated keys whose bytes nothing else references; weak
		// pointers to them tell whether the queue still holds them. Between
		// them, keepers that are handed out and never marked Done, so that
		// the queue's tables stay in use around the finished items.
		keys := make([]string, retentionProbes)
		probes := make([]weak.Pointer[byte], retentionProbes)
		for i := range keys {
			keys[i], probes[i] = checkkit.Probe(fmt.Sprintf("item-%d", i))
			q.Add(keys[i])
			q.Add(fmt.Sprintf("keeper-%d", i))
		}
		for range 2 * retentionProbes {
			if k, _ := q.Get(); !strings.HasPrefix(k, "keeper-") {
				q.Done(k)
			}
		}
		clear(keys)
		if held := checkkit.Held(probes...); len(held) > 0 {
			return checkkit.Broke(GNoRetention, "%d of %d items handed out by Get and marked Done are still referenced by the queue (the first: item-%d), while other items are still being processed", len(held), retentionProbes, held[0])
		}
		return nil
	}
}

func leak(s Subject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, _ checkkit.Config) error {
		before := checkkit.CurrentGoroutines()
		for _, drain := range []bool{false, true} {
			q := s.New(Deps{Clock: clock.RealClock{}, Metrics: true})
			q.Add("a")
			k, _ := q.Get()
			q.Done(k)
			stop := q.ShutDown
			if drain {
				stop = q.ShutDownWithDrain
			}
			if !checkkit.ReturnsWithin(checkkit.Watchdog, stop) {
				return checkkit.Broke(GShutdownReturns, "ShutDown (drain=%v) did not return within %v with nothing queued or processing", drain, checkkit.Watchdog)
			}
			if err := checkkit.FindLeaks(before); err != nil {
				return checkkit.Broke(GNoLeak, "after ShutDown (drain=%v): %v", drain, err)
			}
		}
		return nil
	}
}

// Replay runs a saved trace of a queue machine check against s. It returns
// the violation if the trace still breaks the subject.
func Replay(t *testing.T, s Subject, tr *traces.Trace) error {
	if _, ok := dmodeFor[tr.Check]; ok {
		return replayDelaying(t, s, tr)
	}
	if tr.Check == CheckPriority {
		if s.NewPrioritized == nil {
			return fmt.Errorf("workqueue: %s needs a queue with priorities (Subject.NewPrioritized)", tr.Check)
		}
		return replayPriority(t, s, tr.Ops())
	}
	mode, ok := modeFor[tr.Check]
	if !ok {
		return fmt.Errorf("workqueue: check %q has no replayable steps", tr.Check)
	}
	var steps []Step
	for _, op := range tr.Ops() {
		if strings.HasSuffix(op, " returned") {
			continue // an observation, not an operation
		}
		st, err := parseStep(op)
		if err != nil {
			return fmt.Errorf("trace step %q: %w", op, err)
		}
		steps = append(steps, st)
	}
	return RunSteps(t, s, mode, steps, nil)
}
