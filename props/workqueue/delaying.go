package workqueue

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kverify/kverify/props/checkkit"
	"github.com/kverify/kverify/traces"
	"pgregory.net/rapid"
)

// Check names of the delaying queue, stable: divergences, traces and the
// kill matrix refer to them.
const (
	CheckDelayingModel     = "delaying/model"
	CheckDelayingTies      = "delaying/ties"
	CheckDelayingDeadline  = "delaying/deadline"
	CheckDelayingImmediate = "delaying/immediate"
	CheckDelayingShutdown  = "delaying/shutdown-unblocks"
	CheckDelayingRelease   = "delaying/shutdown-releases-drain"
	CheckDelayingLeak      = "delaying/leak"
	CheckDelayingMetrics   = "delaying/metrics"
)

// maxWait is the longest a delaying queue may keep an item waiting after
// its ready time: client-go's heartbeat, maxWait in
// util/workqueue/delaying_queue.go:273. The model checks hold a subject to
// the exact ready time; delaying/deadline allows this much lateness.
const maxWait = 10 * time.Second

// farAway is beyond any time a check sleeps to: a ready time further than
// this from now never comes during a run.
const farAway = 1000 * time.Hour

// delayingChecks returns the delaying queue checks; none without NewDelaying.
func delayingChecks(s Subject) []checkkit.Check {
	if s.NewDelaying == nil {
		return nil
	}
	// Cheapest first: the fixed scenarios, then the machines, then the
	// race probe and the deadline walk.
	cs := []checkkit.Check{
		{Name: CheckDelayingImmediate, Family: checkkit.FamilyTiming,
			Guarantee: "AddAfter with d <= 0 (0, -1ns, -1h, math.MinInt64) adds the item before it returns: Len counts it at once, whether or not the item also waits",
			Run:       immediateCheck(s)},
		checkkit.Check{Name: CheckDelayingLiveness, Family: checkkit.FamilyModel,
			Guarantee: delayingLivenessGuarantee(),
			Run:       delayingLivenessCheck(s)}.OfferedIf(s.Profile.Fairness.Bounded(), fmt.Sprintf("the profile (%s) declares no bound on an item's wait under sustained load (Profile.Fairness is %v)", s.Profile.Name, s.Profile.Fairness)),
		{Name: CheckDelayingShutdown, Family: checkkit.FamilyTiming,
			Guarantee: "ShutDown and ShutDownWithDrain return, wake every blocked Get with shutdown, let every concurrent AddAfter caller return, and drop waiting items; AddAfter afterwards returns and adds nothing",
			Run:       shutdownCheck(s)},
		{Name: CheckDelayingRelease, Family: checkkit.FamilyWitness,
			Guarantee: "ShutDown makes a ShutDownWithDrain in progress return at once, even when ShutDown had already been called before the drain began",
			Run:       releaseCheck(s)},
		{Name: CheckDelayingLeak, Family: checkkit.FamilyLeak,
			Guarantee: "no goroutine of the delaying queue survives ShutDown or ShutDownWithDrain (metrics on, items waiting)",
			Run:       delayingLeak(s)},
		{Name: CheckDelayingRetention, Family: checkkit.FamilyRetention,
			Guarantee: "an item the delaying queue no longer needs (moved and marked Done, with items still waiting; after its ready time was lowered; after a burst of 300; added with d <= 0; dropped by ShutDown or ShutDownWithDrain; added after shutdown) is not referenced by the queue, which is still alive",
			Run:       delayingRetention(s)},
		{Name: CheckDelayingOneTimer, Family: checkkit.FamilyLeak,
			Guarantee: "counted on the injected clock, the queue holds at most one live timer or ticker whatever the AddAfter calls and clock steps (new heads, lowered heads, huge and immediate delays, a burst of 200 new heads), and none once ShutDown or ShutDownWithDrain has returned",
			Run:       oneTimer(s)},
		{Name: CheckDelayingLifecycle, Family: checkkit.FamilyLinear,
			Guarantee: "with items waiting, ShutDown and ShutDownWithDrain called twice, in either order, then at the same instant on two goroutines swept across each other for hundreds of rounds: no panic, both return, and the queue is shut down (ShuttingDown true, Get returns shutdown at once, Add and AddAfter add nothing)",
			Run:       delayingLifecycle(s)},
		{Name: CheckDelayingFakeClock, Family: checkkit.FamilyTiming,
			Guarantee: "on an injected k8s.io/utils FakeClock: a step far past several ready times moves every due item, in ready-time order, and re-arms the timer for the next (not ready 1ns early, ready on time); AddAfter calls made as a step fires the timer are neither lost nor reordered",
			Run:       fakeClockCheck(s)},
		{Name: CheckDelayingMetrics, Family: checkkit.FamilyModel,
			Guarantee: "with metrics on, after every step, at every ready time and 1ns before it: the retries counter counts every AddAfter made before shutdown, whatever its delay (0, negative, huge, or later than the item's waiting entry), and nothing else, as client-go's does; depth counts the dirty items and adds the times an item became dirty, an item becoming ready included (nothing when it collapses into one queued or re-added while processing, nothing while it waits); queue latency and work duration are observed once per item handed out and per Done; and the unfinished-work and longest-running gauges hold the sum and the maximum of the ages of the items being processed at the last 500ms refresh before shutdown",
			Run:       delayingMachineCheck(s, CheckDelayingMetrics, dMode{Metrics: true})},
		{Name: CheckDelayingExhaustive, Family: checkkit.FamilyExhaustive,
			Guarantee: fmt.Sprintf("every sequence of up to %d steps (AddAfter of two keys by 1s and 2s, Add of a waiting key, Gets and Dones by two workers, sleeping to the next ready time and by a second, Len, ShutDown), each ending in ShutDown, breadth first with one run per state (the queue, the waiting entries relative to now, the workers): delaying/model's guarantees after every step, to the nanosecond", delayingDepth),
			Run:       delayingExhaustive(s, CheckDelayingExhaustive, dMode{}, delayingAlphabet, delayingDepth)},
		{Name: CheckDelayingModel, Family: checkkit.FamilyModel,
			Guarantee: fmt.Sprintf("AddAfter against the model, to the nanosecond: an item is not ready 1ns before its ready time and is ready at it, the earlier of two AddAfter calls wins (and a wait past both brings the item once), waiting items become ready in ready-time order, d <= 0 adds at once, huge delays never fire, shutdown drops waiting items; with workers getting and marking done, horizons up to an hour past client-go's 10s heartbeat, and bursts of up to %d waiting items", delayingMaxBulk),
			Run:       delayingMachineCheck(s, CheckDelayingModel, dMode{})},
		{Name: CheckDelayingTies, Family: checkkit.FamilyModel,
			Guarantee: "items waiting for the same ready time become ready in the order their ready times were set (a lowered ready time goes behind those already set), bursts of thousands of ties included",
			Run:       tiesCheck(s)},
		{Name: CheckDelayingRace, Family: checkkit.FamilyLinear,
			Guarantee: "two calls on the same item at the same instant (AddAfter/Get, AddAfter/AddAfter with different delays, AddAfter/Add, AddAfter/ShutDown, Len/AddAfter), and a call racing the waiting loop as it moves the item (AddAfter, Get), swept across each other for hundreds of rounds: the queue then behaves as one of the two serial orders does, to the nanosecond",
			Run:       delayingRaceCheck(s)},
		{Name: CheckDelayingScale, Family: checkkit.FamilyTiming,
			Guarantee: "with thousands of keys waiting, taken, re-added while waiting (earlier and later), re-added after being taken, drained to a tenth and all re-added: every round brings exactly the keys whose ready time has come, each once, in ready-time order; an AddAfter of a waiting key finds it however many keys came and went before",
			Run:       scaleCheck(s)},
		{Name: CheckDelayingDeadline, Family: checkkit.FamilyTiming,
			Guarantee: "an item added with AddAfter(x, d) is never ready before now+d and always ready by now+d+10s (client-go's heartbeat), huge delays (math.MaxInt64) never fire, and items become ready in ready-time order",
			Run:       deadlineCheck(s)},
	}
	// Not offered: the release witness to a queue whose drain waits for
	// nothing, the fake-clock walk and the timer count (which counts the
	// timers of the injected clock) to a queue that takes no clock.
	for i, c := range cs {
		switch {
		case c.Name == CheckDelayingRelease && s.Profile.DrainIsShutDown:
			cs[i].NotOffered = "the queue's profile says its drain is a ShutDown (Profile.DrainIsShutDown): it waits for nothing to be released"
		case c.Name == CheckDelayingMetrics && !s.Metrics:
			cs[i].NotOffered = noMetrics
		case (c.Name == CheckDelayingFakeClock || c.Name == CheckDelayingOneTimer) && s.NoClock:
			cs[i].NotOffered = "the queue takes no clock (Subject.NoClock): the check steps and counts the timers of an injected clock"
		}
	}
	return checkkit.Replayable(cs, func(t *testing.T, tr *traces.Trace) error { return replayDelaying(t, s, tr) })
}

func delayingMachineCheck(s Subject, name string, mode dMode) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, cfg checkkit.Config) error {
		var witnesses [][]dStep
		switch {
		case mode == (dMode{}):
			witnesses = delayingWitnesses
		case mode.Metrics:
			witnesses = metricsWitnesses
		}
		for _, steps := range witnesses {
			if err := runDSteps(t, s, mode, steps); err != nil {
				return checkkit.Save(t, cfg, componentOf(mode), name, err)
			}
		}
		gen := delayingStepGen(mode)
		err := checkkit.Rapid(t, cfg, func(rt *rapid.T, rec *checkkit.Recorder) {
			checkkit.Bubble(t, func() {
				x := newDelayingMachine(s, mode, rec)
				defer x.Close()
				rt.Repeat(map[string]func(*rapid.T){
					"step": func(rt *rapid.T) {
						if err := x.Apply(gen.Draw(rt, "step")); err != nil {
							rec.Errorf(rt, err)
						}
					},
				})
				if err := x.Apply(finalStep); err != nil {
					rec.Errorf(rt, err)
				}
			})
		})
		return checkkit.Save(t, cfg, componentOf(mode), name, err)
	}
}

// componentOf is the component a machine check belongs to.
func componentOf(mode dMode) string {
	if mode.RateLimited {
		return ComponentRateLimit
	}
	return ComponentDelaying
}

// tieWitnesses pin the order of ties before the random exploration: three
// items set for the same time, a lowered ready time that meets two others,
// and a repeated AddAfter of an equal ready time (discarded: the item keeps
// its place).
var tieWitnesses = [][]dStep{
	{{Kind: dAddAfter, Key: "a", D: time.Second}, {Kind: dAddAfter, Key: "b", D: time.Second}, {Kind: dAddAfter, Key: "c", D: time.Second},
		{Kind: dSleep, D: time.Second}, {Kind: dGet, Worker: 0}, {Kind: dGet, Worker: 1}, {Kind: dGet, Worker: 2}},
	{{Kind: dAddAfter, Key: "a", D: 3 * time.Second}, {Kind: dAddAfter, Key: "b", D: time.Second}, {Kind: dAddAfter, Key: "c", D: time.Second},
		{Kind: dAddAfter, Key: "a", D: time.Second}, {Kind: dSleep, D: time.Second}, {Kind: dGet, Worker: 0}, {Kind: dGet, Worker: 1}, {Kind: dGet, Worker: 2}},
	{{Kind: dAddAfter, Key: "a", D: time.Second}, {Kind: dAddAfter, Key: "b", D: time.Second}, {Kind: dAddAfter, Key: "c", D: time.Second},
		{Kind: dAddAfter, Key: "b", D: time.Second}, {Kind: dSleep, D: time.Second}, {Kind: dGet, Worker: 0}, {Kind: dGet, Worker: 1}, {Kind: dGet, Worker: 2}},
}

func tiesCheck(s Subject) func(*testing.T, checkkit.Config) error {
	machine := delayingMachineCheck(s, CheckDelayingTies, dMode{Ties: true})
	return func(t *testing.T, cfg checkkit.Config) error {
		for _, steps := range tieWitnesses {
			if err := runDSteps(t, s, dMode{Ties: true}, steps); err != nil {
				return checkkit.Save(t, cfg, ComponentDelaying, CheckDelayingTies, err)
			}
		}
		return machine(t, cfg)
	}
}

// finalStep ends every machine run: the subject must shut down as the model
// says (blocked Gets and a drain in flight released) before Close cleans up.
var finalStep = dStep{Kind: dShutDown}

// runDSteps runs steps, then a ShutDown, on a fresh delaying (or, by mode,
// rate-limiting) queue from s inside a synctest bubble and checks every
// outcome against the model. A violation comes back with the steps run as its trace.
func runDSteps(t *testing.T, s Subject, mode dMode, steps []dStep) error {
	var ops []traces.Step
	err := checkkit.InBubble(t, func() error {
		x := newDelayingMachine(s, mode, &checkkit.Recorder{})
		defer x.Close()
		for _, st := range append(slices.Clip(steps), finalStep) {
			ops = append(ops, traces.Step{Op: st.String()})
			if err := x.Apply(st); err != nil {
				return err
			}
		}
		return nil
	})
	if v, ok := err.(*checkkit.Violation); ok && v.Trace == nil {
		v.Trace = &traces.Trace{Steps: ops}
	}
	return err
}

// replayDelaying runs a saved trace of a delaying or rate-limiting machine
// check (delaying/model, delaying/ties, ratelimiting/model,
// ratelimiting/delegates) against s. It returns the violation if the trace
// still breaks the subject.
func replayDelaying(t *testing.T, s Subject, tr *traces.Trace) error {
	mode, ok := dmodeFor[tr.Check]
	if !ok {
		return fmt.Errorf("workqueue: check %q has no replayable steps", tr.Check)
	}
	if tr.Check == CheckRateLimitingDelegate {
		mode = delegatesMode(s)
	}
	var steps []dStep
	for _, op := range tr.Ops() {
		if strings.HasSuffix(op, " returned") || strings.HasPrefix(op, "@") {
			continue // an observation, not an operation
		}
		st, err := parseDStep(op)
		if err != nil {
			return fmt.Errorf("trace step %q: %w", op, err)
		}
		steps = append(steps, st)
	}
	return runDSteps(t, s, mode, steps)
}

// timersEpoch is where the fake clocks of the delaying checks start.
var timersEpoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// takeAll gets and marks Done every item queued now, in order. It stops
// at a Get that reports shutdown, and after checkkit.DrainLimit items (a
// queue that hands out items for ever): what it got then differs from
// what the caller wants, which reports it.
func takeAll(q Queue) []string {
	var got []string
	for q.Len() > 0 && len(got) < checkkit.DrainLimit {
		k, shut := q.Get()
		if shut {
			break
		}
		q.Done(k)
		got = append(got, k)
	}
	return got
}
