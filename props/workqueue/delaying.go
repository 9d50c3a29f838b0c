package workqueue

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kverify/kverify/props"
	"github.com/kverify/kverify/spec/delaying"
	wq "github.com/kverify/kverify/spec/workqueue"
	"github.com/kverify/kverify/traces"
	"go.uber.org/goleak"
	"k8s.io/utils/clock"
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

// MaxWait is the longest a delaying queue may keep an item waiting after
// its ready time: client-go's heartbeat, maxWait in
// util/workqueue/delaying_queue.go:273. The model checks hold a subject to
// the exact ready time; delaying/deadline allows this much lateness.
const MaxWait = 10 * time.Second

// The guarantees the delaying and rate-limiting checks name in violations.
const (
	GNotEarly         = "Not before readyAt"
	GOnTime           = "Ready at readyAt"
	GWithinMaxWait    = "Ready within maxWait"
	GEarlierWins      = "Earlier AddAfter wins"
	GReadyOrder       = "ReadyAt order"
	GTieOrder         = "Tie order"
	GImmediate        = "Immediate"
	GHugeNever        = "Huge delay never fires"
	GShutdownReturns  = "Shutdown returns"
	GShutdownUnblocks = "Shutdown unblocks Get"
	GReleasesDrain    = "ShutDown releases drain"
	GAddAfterReturns  = "AddAfter returns"
	GDropsWaiting     = "Shutdown drops waiting"
	GNoLeak           = "No leak"
	GNoPanic          = "No panic"
)

// farAway is beyond any time a check sleeps to: a ready time further than
// this from now never comes during a run.
const farAway = 1000 * time.Hour

// delayingChecks returns the delaying queue checks; none without NewDelaying.
func delayingChecks(s Subject) []props.Check {
	if s.NewDelaying == nil {
		return nil
	}
	// Cheapest first: the fixed scenarios, then the machines, then the
	// race probe and the deadline walk.
	return []props.Check{
		{Name: CheckDelayingImmediate, Family: props.FamilyTiming,
			Guarantee: "AddAfter with d <= 0 (0, -1ns, -1h, math.MinInt64) adds the item before it returns: Len counts it at once, whether or not the item also waits",
			Run:       immediateCheck(s)},
		{Name: CheckDelayingShutdown, Family: props.FamilyTiming,
			Guarantee: "ShutDown and ShutDownWithDrain return, wake every blocked Get with shutdown, let every concurrent AddAfter caller return, and drop waiting items; AddAfter afterwards returns and adds nothing",
			Run:       shutdownCheck(s)},
		{Name: CheckDelayingRelease, Family: props.FamilyWitness,
			Guarantee: "ShutDown makes a ShutDownWithDrain in progress return at once, even when ShutDown had already been called before the drain began",
			Run:       releaseCheck(s)},
		{Name: CheckDelayingLeak, Family: props.FamilyLeak,
			Guarantee: "no goroutine of the delaying queue survives ShutDown or ShutDownWithDrain (metrics on, items waiting)",
			Run:       delayingLeak(s)},
		{Name: CheckDelayingFakeClock, Family: props.FamilyTiming,
			Guarantee: "on an injected k8s.io/utils FakeClock: a step far past several ready times moves every due item, in ready-time order, and re-arms the timer for the next (not ready 1ns early, ready on time); AddAfter calls made as a step fires the timer are neither lost nor reordered",
			Run:       fakeClockCheck(s)},
		{Name: CheckDelayingMetrics, Family: props.FamilyModel,
			Guarantee: "with metrics on, the retries counter counts every AddAfter made before shutdown, whatever its delay (0, negative, huge, or later than the item's waiting entry), and nothing else, as client-go's does",
			Run:       dmachineCheck(s, CheckDelayingMetrics, DMode{Metrics: true})},
		{Name: CheckDelayingModel, Family: props.FamilyModel,
			Guarantee: fmt.Sprintf("AddAfter against the model, to the nanosecond: an item is not ready 1ns before its ready time and is ready at it, the earlier of two AddAfter calls wins (and a wait past both brings the item once), waiting items become ready in ready-time order, d <= 0 adds at once, huge delays never fire, shutdown drops waiting items; with workers getting and marking done, horizons up to an hour past client-go's 10s heartbeat, and bursts of up to %d waiting items", DelayingMaxBulk),
			Run:       dmachineCheck(s, CheckDelayingModel, DMode{})},
		{Name: CheckDelayingTies, Family: props.FamilyModel,
			Guarantee: "items waiting for the same ready time become ready in the order their ready times were set (a lowered ready time goes behind those already set), bursts of thousands of ties included",
			Run:       tiesCheck(s)},
		{Name: CheckDelayingRace, Family: props.FamilyLinear,
			Guarantee: "two calls on the same item at the same instant (AddAfter/Get, AddAfter/AddAfter with different delays, AddAfter/Add, AddAfter/ShutDown, Len/AddAfter), and a call racing the waiting loop as it moves the item (AddAfter, Get), swept across each other for hundreds of rounds: the queue then behaves as one of the two serial orders does, to the nanosecond",
			Run:       delayingRaceCheck(s)},
		{Name: CheckDelayingDeadline, Family: props.FamilyTiming,
			Guarantee: "an item added with AddAfter(x, d) is never ready before now+d and always ready by now+d+10s (client-go's heartbeat), huge delays (math.MaxInt64) never fire, and items become ready in ready-time order",
			Run:       deadlineCheck(s)},
	}
}

// DKind is an operation of a delaying (or rate-limiting) queue machine.
type DKind uint8

// The operations of a delaying queue machine.
const (
	DAddAfter DKind = iota
	DAdd
	DGet
	DDone
	DSleep
	DTick // sleep until the next ready time; recorded as the Sleep it became
	DLen
	DShuttingDown
	DShutDown
	DShutDownWithDrain
	DAddRateLimited
	DForget
	DNumRequeues
	// DBurst adds N fresh keys with AddAfter, the i-th with delay
	// D + burstSpread(i, N): a permutation of N ready times, so the
	// waiting heap is filled out of order ("Burst(N,D)").
	DBurst
	// DDrain has one worker Get and Done up to N ready items ("w0:Drain(N)").
	DDrain
)

var dkindNames = [...]string{"AddAfter", "Add", "Get", "Done", "Sleep", "Tick", "Len", "ShuttingDown", "ShutDown", "ShutDownWithDrain", "AddRateLimited", "Forget", "NumRequeues", "Burst", "Drain"}

// burstSpread is the extra delay of a burst's i-th key of n: the keys'
// ready times are a permutation of n consecutive milliseconds.
func burstSpread(i, n int) time.Duration {
	return time.Duration((i*7919)%n) * time.Millisecond
}

func (k DKind) String() string {
	if int(k) < len(dkindNames) {
		return dkindNames[k]
	}
	return fmt.Sprintf("DKind(%d)", k)
}

// DStep is one operation of a delaying queue machine. D is AddAfter's delay,
// Sleep's duration, or AddRateLimited's delay (what the scripted limiter's
// When answers); N is the scripted limiter's NumRequeues answer.
type DStep struct {
	Kind   DKind
	Key    string
	D      time.Duration
	N      int
	Worker int
}

// String is the trace notation: "AddAfter(a,1s)", "Add(a)", "w1:Get",
// "w1:Done", "Sleep(1.5s)", "Tick", "Len", "ShutDown", "AddRateLimited(a,1s)",
// "Forget(a)", "NumRequeues(a,3)", "Burst(500,1s)", "w0:Drain(500)", ...
func (s DStep) String() string {
	switch s.Kind {
	case DBurst:
		return fmt.Sprintf("Burst(%d,%s)", s.N, s.D)
	case DDrain:
		return fmt.Sprintf("w%d:Drain(%d)", s.Worker, s.N)
	case DAddAfter, DAddRateLimited:
		return fmt.Sprintf("%s(%s,%s)", s.Kind, s.Key, s.D)
	case DAdd, DForget:
		return fmt.Sprintf("%s(%s)", s.Kind, s.Key)
	case DNumRequeues:
		return fmt.Sprintf("%s(%s,%d)", s.Kind, s.Key, s.N)
	case DGet, DDone:
		return fmt.Sprintf("w%d:%s", s.Worker, s.Kind)
	case DSleep:
		return fmt.Sprintf("Sleep(%s)", s.D)
	}
	return s.Kind.String()
}

// ParseDStep is the inverse of DStep.String.
func ParseDStep(s string) (DStep, error) {
	if n, op, ok, err := cutWorker(s); ok {
		if err != nil {
			return DStep{}, err
		}
		switch op {
		case "Get":
			return DStep{Kind: DGet, Worker: n}, nil
		case "Done":
			return DStep{Kind: DDone, Worker: n}, nil
		}
		if b, k, ok := parseBulk(op); ok && b == Drain {
			return DStep{Kind: DDrain, Worker: n, N: k}, nil
		}
		return DStep{}, fmt.Errorf("bad worker step %q", s)
	}
	kind := func(name string) (DKind, bool) {
		for i, n := range dkindNames {
			if n == name {
				return DKind(i), true
			}
		}
		return 0, false
	}
	if name, arg, ok := strings.Cut(s, "("); ok && strings.HasSuffix(arg, ")") {
		k, ok := kind(name)
		if !ok {
			return DStep{}, fmt.Errorf("bad step %q", s)
		}
		args := strings.Split(strings.TrimSuffix(arg, ")"), ",")
		st := DStep{Kind: k}
		switch {
		case k == DSleep && len(args) == 1:
			d, err := time.ParseDuration(args[0])
			if err != nil {
				return DStep{}, fmt.Errorf("step %q: %w", s, err)
			}
			st.D = d
		case (k == DAdd || k == DForget) && len(args) == 1:
			st.Key = args[0]
		case (k == DAddAfter || k == DAddRateLimited) && len(args) == 2:
			d, err := time.ParseDuration(args[1])
			if err != nil {
				return DStep{}, fmt.Errorf("step %q: %w", s, err)
			}
			st.Key, st.D = args[0], d
		case k == DBurst && len(args) == 2:
			n, err := strconv.Atoi(args[0])
			if err != nil || n < 0 {
				return DStep{}, fmt.Errorf("bad step %q", s)
			}
			d, err := time.ParseDuration(args[1])
			if err != nil {
				return DStep{}, fmt.Errorf("step %q: %w", s, err)
			}
			st.N, st.D = n, d
		case k == DNumRequeues && len(args) == 2:
			n, err := strconv.Atoi(args[1])
			if err != nil {
				return DStep{}, fmt.Errorf("step %q: %w", s, err)
			}
			st.Key, st.N = args[0], n
		default:
			return DStep{}, fmt.Errorf("bad step %q", s)
		}
		return st, nil
	}
	k, ok := kind(s)
	if !ok || k == DAddAfter || k == DAdd || k == DSleep || k == DAddRateLimited || k == DForget || k == DNumRequeues || k == DGet || k == DDone {
		return DStep{}, fmt.Errorf("bad step %q", s)
	}
	return DStep{Kind: k}, nil
}

// DMode selects what a delaying queue machine exercises.
type DMode struct {
	// Ties lets distinct keys wait for the same ready time, so the order of
	// ties is checked. Without it, a delay that would make a tie is
	// lengthened by a nanosecond at a time until it does not (the trace
	// shows the delay used), and only ready-time order is checked.
	Ties bool
	// RateLimited drives a rate-limiting queue and adds AddRateLimited.
	RateLimited bool
	// Delegates adds Forget and NumRequeues (with RateLimited).
	Delegates bool
	// Metrics turns the queue's metrics on and checks the retries counter:
	// one per AddAfter (or AddRateLimited) made before shutdown, whatever
	// its delay, as client-go counts them (delaying_queue.go:255).
	Metrics bool
}

// dmodeFor maps the machine checks to their modes, for replay.
var dmodeFor = map[string]DMode{
	CheckDelayingModel:        {},
	CheckDelayingTies:         {Ties: true},
	CheckRateLimitingModel:    {RateLimited: true},
	CheckRateLimitingDelegate: {RateLimited: true, Delegates: true},
	CheckDelayingMetrics:      {Metrics: true},
}

// Durations the machines draw from: simple ones first (rapid shrinks
// towards the start), with the boundaries 0, ±1ns, MaxWait±, horizons well
// past client-go's 10s heartbeat, and the extremes that must neither panic
// nor overflow.
var (
	dlDelays = []time.Duration{time.Second, 0, 2 * time.Second, 1, 5 * time.Second, MaxWait, 30 * time.Second,
		time.Millisecond, -1, -time.Second, MaxWait + 1, 2, 15 * time.Second, time.Minute, 25 * time.Minute, time.Hour,
		math.MinInt64, math.MaxInt64, math.MaxInt64 - 1}
	dlSleeps    = []time.Duration{time.Second, 1, time.Millisecond, 2 * time.Second, 5 * time.Second, MaxWait, 30 * time.Second, time.Minute, 10 * time.Minute, time.Hour}
	tieDelays   = []time.Duration{time.Second, 2 * time.Second, 3 * time.Second, 0}
	tieSleeps   = []time.Duration{time.Second, 2 * time.Second}
	burstDelays = []time.Duration{time.Second, 0, 25 * time.Second, time.Hour}
)

// DelayingThresholds are the sizes at which a delaying queue changes
// behaviour: our heap's shrink floor (64) and client-go's 1000-slot
// channel of waiting additions, with the ring sizes around them.
var DelayingThresholds = []int{64, 65, 128, 1000, 1001, 1024, 2048}

// DelayingMaxBulk is the largest bulk step of the delaying machines.
const DelayingMaxBulk = 3000

// The operations of the delaying machines, in dstepGen's order.
const (
	dopAddAfter = iota
	dopAdd
	dopGet
	dopDone
	dopSleep
	dopTick
	dopLen
	dopShuttingDown
	dopDelegate
	dopDrainShutDown
	dopShutDown
	dopBurst
	dopDrain
)

// dstepWeights are the delaying machines' operation weights.
var dstepWeights = []int{dopAddAfter: 25, dopAdd: 5, dopGet: 15, dopDone: 12, dopSleep: 9, dopTick: 10, dopLen: 5, dopShuttingDown: 2,
	dopDelegate: 6, dopDrainShutDown: 3, dopShutDown: 2, dopBurst: 3, dopDrain: 3}

func dstepGen(mode DMode) *rapid.Generator[DStep] {
	delays, sleeps := dlDelays, dlSleeps
	if mode.Ties {
		delays, sleeps = tieDelays, tieSleeps
	}
	op := props.Choice(dstepWeights...)
	hi := DelayingMaxBulk
	if mode.RateLimited || mode.Metrics {
		hi = SideMaxBulk // the delaying machine covers the sizes
	}
	size := props.Size(hi, DelayingThresholds...)
	key := rapid.SampledFrom(Keys)
	worker := rapid.IntRange(0, Workers-1)
	return rapid.Custom(func(t *rapid.T) DStep {
		switch op.Draw(t, "op") {
		case dopAddAfter:
			kind := DAddAfter
			if mode.RateLimited && rapid.Bool().Draw(t, "rate limited") {
				kind = DAddRateLimited
			}
			return DStep{Kind: kind, Key: key.Draw(t, "key"), D: rapid.SampledFrom(delays).Draw(t, "d")}
		case dopAdd:
			return DStep{Kind: DAdd, Key: key.Draw(t, "key")}
		case dopGet:
			return DStep{Kind: DGet, Worker: worker.Draw(t, "worker")}
		case dopDone:
			return DStep{Kind: DDone, Worker: worker.Draw(t, "worker")}
		case dopSleep:
			return DStep{Kind: DSleep, D: rapid.SampledFrom(sleeps).Draw(t, "sleep")}
		case dopTick:
			return DStep{Kind: DTick}
		case dopShuttingDown:
			return DStep{Kind: DShuttingDown}
		case dopDelegate:
			if !mode.Delegates {
				return DStep{Kind: DLen}
			}
			if rapid.Bool().Draw(t, "forget") {
				return DStep{Kind: DForget, Key: key.Draw(t, "key")}
			}
			return DStep{Kind: DNumRequeues, Key: key.Draw(t, "key"), N: rapid.IntRange(0, 9).Draw(t, "n")}
		case dopDrainShutDown:
			return DStep{Kind: DShutDownWithDrain}
		case dopShutDown:
			return DStep{Kind: DShutDown}
		case dopBurst:
			return DStep{Kind: DBurst, N: size.Draw(t, "n"), D: rapid.SampledFrom(burstDelays).Draw(t, "d")}
		case dopDrain:
			return DStep{Kind: DDrain, Worker: worker.Draw(t, "worker"), N: size.Draw(t, "n")}
		}
		return DStep{Kind: DLen}
	})
}

// delayingWitnesses are fixed runs delaying/model makes before its random
// exploration, so that states a random run reaches only now and then are
// reached in every run: two AddAfter of one item with different delays
// (either order, waiting or being processed) followed by a wait past both,
// horizons past client-go's 10s heartbeat, and bursts past every size
// threshold with an early item behind a large heap.
var delayingWitnesses = [][]DStep{
	{{Kind: DAddAfter, Key: "a", D: 2 * time.Second}, {Kind: DAddAfter, Key: "a", D: time.Second}, {Kind: DGet, Worker: 0},
		{Kind: DSleep, D: 3 * time.Second}, {Kind: DDone, Worker: 0}, {Kind: DLen}},
	{{Kind: DAddAfter, Key: "a", D: time.Second}, {Kind: DAddAfter, Key: "a", D: 2 * time.Second}, {Kind: DGet, Worker: 0},
		{Kind: DSleep, D: 3 * time.Second}, {Kind: DDone, Worker: 0}, {Kind: DGet, Worker: 1}, {Kind: DSleep, D: time.Second}},
	{{Kind: DAdd, Key: "a"}, {Kind: DGet, Worker: 0}, {Kind: DAddAfter, Key: "a", D: 2 * time.Second}, {Kind: DAddAfter, Key: "a", D: time.Second},
		{Kind: DSleep, D: 3 * time.Second}, {Kind: DGet, Worker: 1}, {Kind: DDone, Worker: 0}, {Kind: DSleep, D: time.Second}},
	{{Kind: DAddAfter, Key: "a", D: 25 * time.Second}, {Kind: DAddAfter, Key: "b", D: MaxWait + 1}, {Kind: DAddAfter, Key: "c", D: time.Hour},
		{Kind: DGet, Worker: 0}, {Kind: DGet, Worker: 1}, {Kind: DGet, Worker: 2}, {Kind: DSleep, D: time.Minute}, {Kind: DSleep, D: time.Hour}},
	{{Kind: DBurst, N: 1100, D: time.Second}, {Kind: DAddAfter, Key: "a", D: time.Millisecond}, {Kind: DTick},
		{Kind: DSleep, D: 2 * time.Second}, {Kind: DDrain, N: 1101}},
	{{Kind: DBurst, N: 3000, D: time.Hour}, {Kind: DBurst, N: 70, D: time.Second}, {Kind: DAddAfter, Key: "a", D: time.Millisecond},
		{Kind: DSleep, D: 2 * time.Second}, {Kind: DDrain, N: 100}, {Kind: DSleep, D: 2 * time.Hour}, {Kind: DDrain, N: 3000}},
}

func dmachineCheck(s Subject, name string, mode DMode) func(*testing.T, props.Config) error {
	return func(t *testing.T, cfg props.Config) error {
		if mode == (DMode{}) {
			for _, steps := range delayingWitnesses {
				if err := RunDSteps(t, s, mode, steps); err != nil {
					return props.Save(t, cfg, componentOf(mode), name, err)
				}
			}
		}
		gen := dstepGen(mode)
		err := props.Rapid(t, cfg, func(rt *rapid.T, rec *props.Recorder) {
			props.Bubble(t, func() {
				x := newDMachine(s, mode, rec)
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
		return props.Save(t, cfg, componentOf(mode), name, err)
	}
}

// componentOf is the component a machine check belongs to.
func componentOf(mode DMode) string {
	if mode.RateLimited {
		return ComponentRateLimit
	}
	return ComponentDelaying
}

// tieWitnesses pin the order of ties before the random exploration: three
// items set for the same time, a lowered ready time that meets two others,
// and a repeated AddAfter of an equal ready time (discarded: the item keeps
// its place).
var tieWitnesses = [][]DStep{
	{{Kind: DAddAfter, Key: "a", D: time.Second}, {Kind: DAddAfter, Key: "b", D: time.Second}, {Kind: DAddAfter, Key: "c", D: time.Second},
		{Kind: DSleep, D: time.Second}, {Kind: DGet, Worker: 0}, {Kind: DGet, Worker: 1}, {Kind: DGet, Worker: 2}},
	{{Kind: DAddAfter, Key: "a", D: 3 * time.Second}, {Kind: DAddAfter, Key: "b", D: time.Second}, {Kind: DAddAfter, Key: "c", D: time.Second},
		{Kind: DAddAfter, Key: "a", D: time.Second}, {Kind: DSleep, D: time.Second}, {Kind: DGet, Worker: 0}, {Kind: DGet, Worker: 1}, {Kind: DGet, Worker: 2}},
	{{Kind: DAddAfter, Key: "a", D: time.Second}, {Kind: DAddAfter, Key: "b", D: time.Second}, {Kind: DAddAfter, Key: "c", D: time.Second},
		{Kind: DAddAfter, Key: "b", D: time.Second}, {Kind: DSleep, D: time.Second}, {Kind: DGet, Worker: 0}, {Kind: DGet, Worker: 1}, {Kind: DGet, Worker: 2}},
}

func tiesCheck(s Subject) func(*testing.T, props.Config) error {
	machine := dmachineCheck(s, CheckDelayingTies, DMode{Ties: true})
	return func(t *testing.T, cfg props.Config) error {
		for _, steps := range tieWitnesses {
			if err := RunDSteps(t, s, DMode{Ties: true}, steps); err != nil {
				return props.Save(t, cfg, ComponentDelaying, CheckDelayingTies, err)
			}
		}
		return machine(t, cfg)
	}
}

// finalStep ends every machine run: the subject must shut down as the model
// says (blocked Gets and a drain in flight released) before Close cleans up.
var finalStep = DStep{Kind: DShutDown}

// RunDSteps runs steps, then a ShutDown, on a fresh delaying (or, by mode,
// rate-limiting) queue from s inside a synctest bubble and checks every
// outcome against the model. A violation comes back with the steps run as its trace.
func RunDSteps(t *testing.T, s Subject, mode DMode, steps []DStep) error {
	var ops []traces.Step
	err := bubble(t, func() error {
		x := newDMachine(s, mode, &props.Recorder{})
		defer x.Close()
		for _, st := range append(slices.Clip(steps), finalStep) {
			ops = append(ops, traces.Step{Op: st.String()})
			if err := x.Apply(st); err != nil {
				return err
			}
		}
		return nil
	})
	if v, ok := err.(*props.Violation); ok && v.Trace == nil {
		v.Trace = &traces.Trace{Steps: ops}
	}
	return err
}

// ReplayDelaying runs a saved trace of a delaying or rate-limiting machine
// check (delaying/model, delaying/ties, ratelimiting/model,
// ratelimiting/delegates) against s. It returns the violation if the trace
// still breaks the subject.
func ReplayDelaying(t *testing.T, s Subject, tr *traces.Trace) error {
	mode, ok := dmodeFor[tr.Check]
	if !ok {
		return fmt.Errorf("workqueue: check %q has no replayable steps", tr.Check)
	}
	var steps []DStep
	for _, op := range tr.Ops() {
		if strings.HasSuffix(op, " returned") || strings.HasPrefix(op, "@") {
			continue // an observation, not an operation
		}
		st, err := ParseDStep(op)
		if err != nil {
			return fmt.Errorf("trace step %q: %w", op, err)
		}
		steps = append(steps, st)
	}
	return RunDSteps(t, s, mode, steps)
}

// bubble runs body in a synctest bubble and turns a panic (of the subject,
// or synctest's deadlock report) into a violation.
func bubble(t *testing.T, body func() error) (err error) {
	defer func() {
		if p := recover(); p != nil && err == nil {
			err = props.Broke(GNoPanic, "%v", p)
		}
	}()
	props.Bubble(t, func() { err = body() })
	return err
}

// phase says where in time a machine's settle happens, to name what broke.
type phase uint8

const (
	phaseStep  phase = iota // after an operation
	phaseEarly              // 1ns before the model's next ready time
	phaseReady              // at a ready time, the model having moved what is due
)

// dmachine drives one delaying queue and the model in lock step, inside a
// synctest bubble, with synctest.Wait as the step boundary. Time moves only
// in Sleep and Tick, which stop 1ns before and at every ready time on the
// way.
type dmachine struct {
	q       Delaying
	rl      RateLimiting // nil unless mode.RateLimited
	lim     *scriptedLimiter
	m       delaying.Model
	mode    DMode
	workers [Workers]worker
	drain   chan struct{} // non-nil while ShutDownWithDrain is in flight
	rec     *props.Recorder

	// moved holds the queued keys that came from a waiting entry, with the
	// ready time they came at; contested the waiting keys that got a second
	// AddAfter; justMoved the keys the last Advance moved; lastHuge whether
	// the last AddAfter had a delay beyond farAway. They only name
	// violations.
	moved     map[string]time.Time
	contested map[string]bool
	justMoved []string
	lastHuge  bool

	fresh int // bursts' keys so far

	// With DMode.Metrics: the subject's metrics, and the AddAfter calls
	// made before shutdown.
	metrics     *Metrics
	wantRetries int64
}

func newDMachine(s Subject, mode DMode, rec *props.Recorder) *dmachine {
	x := &dmachine{mode: mode, rec: rec, moved: map[string]time.Time{}, contested: map[string]bool{}}
	deps := Deps{Clock: clock.RealClock{}}
	if mode.Metrics {
		x.metrics = new(Metrics)
		deps.Recorder = x.metrics
	}
	if mode.RateLimited {
		x.lim = newScriptedLimiter()
		x.rl = s.NewRateLimiting(deps, x.lim)
		x.q = x.rl
	} else {
		x.q = s.NewDelaying(deps)
	}
	rec.Timed()
	return x
}

// Enabled reports whether the step is meaningful now; disabled steps are
// no-ops, so every draw decodes to a valid run.
func (x *dmachine) Enabled(s DStep) bool {
	switch s.Kind {
	case DGet:
		w := &x.workers[s.Worker]
		return !w.holding && w.getting == nil
	case DDone:
		return x.workers[s.Worker].holding
	case DTick:
		next, ok := x.m.NextReadyAt()
		return ok && time.Until(next) <= time.Hour
	case DSleep:
		return s.D >= 0 && s.D <= farAway
	case DAddRateLimited, DForget, DNumRequeues:
		return x.rl != nil
	case DDrain:
		// One worker alone: no other Get in flight may take the items.
		for i := range x.workers {
			if w := &x.workers[i]; w.getting != nil || (i == s.Worker && w.holding) {
				return false
			}
		}
	case DShutDownWithDrain:
		// Only where every known queue agrees (see Mode.FullDrain): the
		// drain contract itself is queue/drain's, and a drain begun after
		// ShutDown is delaying/shutdown-releases-drain's.
		if x.drain != nil || x.m.IsShuttingDown() || x.m.Queue().Len() > 0 {
			return false
		}
		for _, k := range x.m.Queue().ProcessingKeys() {
			if x.m.Queue().Dirty(k) {
				return false
			}
		}
	}
	return true
}

// Apply runs one step on the subject and the model and checks the outcome.
func (x *dmachine) Apply(s DStep) error {
	if !x.Enabled(s) {
		return nil
	}
	x.lastHuge = false
	want, got := "", ""
	switch s.Kind {
	case DAddAfter, DAddRateLimited:
		return x.addAfter(s)
	case DBurst:
		x.rec.Step(s.String(), "", "")
		x.burst(s)
		return x.settle(phaseStep)
	case DDrain:
		x.rec.Step(s.String(), "", "")
		if err := x.drainReady(s); err != nil {
			return err
		}
		return x.settle(phaseStep)
	case DAdd:
		x.q.Add(s.Key)
		x.m.Apply(wq.Op{Kind: wq.Add, Key: s.Key})
	case DGet:
		x.workers[s.Worker].getting = startGet(x.q)
	case DDone:
		w := &x.workers[s.Worker]
		key := w.held
		w.held, w.holding = "", false
		x.q.Done(key)
		x.m.Apply(wq.Op{Kind: wq.Done, Key: key})
	case DSleep:
		x.rec.Step(s.String(), "", "")
		return x.sleepTo(time.Now().Add(s.D))
	case DTick:
		next, _ := x.m.NextReadyAt()
		x.rec.Step(DStep{Kind: DSleep, D: time.Until(next)}.String(), "", "")
		return x.sleepTo(next)
	case DLen:
		n, m := x.q.Len(), x.m.Queue().Len()
		want, got = strconv.Itoa(m), strconv.Itoa(n)
		if n != m {
			x.rec.Step(s.String(), want, got)
			return props.Broke("Len law", "Len() = %d, model %d (queue %s, waiting %s)", n, m, x.queueString(), x.waitingString())
		}
	case DShuttingDown:
		b := x.q.ShuttingDown()
		want, got = strconv.FormatBool(x.m.IsShuttingDown()), strconv.FormatBool(b)
		if b != x.m.IsShuttingDown() {
			x.rec.Step(s.String(), want, got)
			return props.Broke("Shutdown", "ShuttingDown() = %v, model %v", b, x.m.IsShuttingDown())
		}
	case DShutDown:
		if !shutDown(x.q) {
			x.rec.Step(s.String(), "returned", "blocked")
			return props.Broke("Shutdown returns", "ShutDown did not return within %v", props.Watchdog)
		}
		x.m.Apply(wq.Op{Kind: wq.ShutDown})
	case DShutDownWithDrain:
		x.drain = startDrain(x.q)
		x.m.ApplyBegin(wq.Op{Kind: wq.ShutDownWithDrain})
	case DForget:
		before := x.lim.snapshot()
		x.rl.Forget(s.Key)
		if err := x.lim.expect(before, s.Key, 0, 1, 0); err != nil {
			x.rec.Step(s.String(), "", "")
			return props.Broke(GForget, "Forget(%s): %v", s.Key, err)
		}
	case DNumRequeues:
		before := x.lim.snapshot()
		x.lim.setNum(s.Key, s.N)
		n := x.rl.NumRequeues(s.Key)
		want, got = strconv.Itoa(s.N), strconv.Itoa(n)
		x.rec.Step(s.String(), want, got)
		if n != s.N {
			return props.Broke(GNumRequeues, "NumRequeues(%s) = %d, the limiter says %d", s.Key, n, s.N)
		}
		if err := x.lim.expect(before, s.Key, 0, 0, 1); err != nil {
			return props.Broke(GNumRequeues, "NumRequeues(%s): %v", s.Key, err)
		}
		return x.settle(phaseStep)
	default:
		return fmt.Errorf("unknown step %v", s)
	}
	x.rec.Step(s.String(), want, got)
	return x.settle(phaseStep)
}

// addAfter runs AddAfter or AddRateLimited; with d <= 0 and no Get in
// flight, it checks Len before the subject's goroutines get a chance to run.
func (x *dmachine) addAfter(s DStep) error {
	now := time.Now()
	if s.D > 0 && !x.mode.Ties {
		s.D = x.untie(s.Key, s.D, now)
	}
	x.lastHuge = s.D > farAway
	if !x.m.IsShuttingDown() && s.D > 0 && x.waiting(s.Key) {
		x.contested[s.Key] = true
	}
	probe := s.D <= 0
	for i := range x.workers {
		if x.workers[i].getting != nil {
			probe = false // a blocked Get may take the item at once
		}
	}
	if !x.m.IsShuttingDown() {
		x.wantRetries++
	}
	x.m.ApplyAddAfter(s.Key, s.D, now)
	var before limiterCalls
	n := 0
	if s.Kind == DAddRateLimited {
		before = x.lim.snapshot()
		x.lim.script(s.D)
		x.rl.AddRateLimited(s.Key)
	} else {
		x.q.AddAfter(s.Key, s.D)
	}
	if probe {
		n = x.q.Len()
	}
	x.rec.Step(s.String(), "", "")
	if s.Kind == DAddRateLimited {
		if err := x.lim.expect(before, s.Key, 1, 0, 0); err != nil && !(x.m.IsShuttingDown() && x.lim.snapshot().when == before.when) {
			return props.Broke(GWhenOnce, "AddRateLimited(%s): %v", s.Key, err)
		}
	}
	if want := x.m.Queue().Len(); probe && n != want {
		x.rec.Step("Len", strconv.Itoa(want), strconv.Itoa(n))
		return props.Broke(GImmediate, "Len() = %d right after %s returned, want %d: the item was not added before the call returned", n, s, want)
	}
	return x.settle(phaseStep)
}

// burst adds s.N fresh keys with AddAfter (see DBurst); in Ties mode they
// all wait for the same ready time.
func (x *dmachine) burst(s DStep) {
	now := time.Now()
	taken := map[time.Time]bool{} // ready times in use, for untying
	if !x.mode.Ties {
		for _, e := range x.m.Waiting() {
			taken[e.ReadyAt] = true
		}
	}
	for i := range s.N {
		x.fresh++
		key := fmt.Sprintf("n%05d", x.fresh)
		d := s.D
		if !x.mode.Ties {
			d += burstSpread(i, s.N)
			for d > 0 && now.Add(d).Sub(now) <= farAway && taken[now.Add(d).Round(0)] {
				d++
			}
			if d > 0 {
				taken[now.Add(d).Round(0)] = true
			}
		}
		if !x.m.IsShuttingDown() {
			x.wantRetries++
		}
		x.m.ApplyAddAfter(key, d, now)
		x.q.AddAfter(key, d)
	}
}

// drainReady has one worker Get and Done up to s.N ready items, each
// checked against the model's FIFO head. The Gets are direct calls: the
// machine calls Get only while the subject's Len says an item is there.
func (x *dmachine) drainReady(s DStep) error {
	for i := 0; i < s.N && x.m.Queue().Len() > 0; i++ {
		if n, want := x.q.Len(), x.m.Queue().Len(); n != want {
			x.rec.Step("Len", strconv.Itoa(want), strconv.Itoa(n))
			g := "Len law"
			if n > want {
				g = x.early()
			}
			return props.Broke(g, "in %v, before Get %d: Len() = %d, model %d (queue %s, waiting %s)", s, i+1, n, want, x.queueString(), x.waitingString())
		}
		head := x.m.Queue().Head(1)[0]
		k, shut := x.q.Get()
		if shut || k != head {
			x.rec.Step(fmt.Sprintf("w%d:Get", s.Worker), head, fmtResult(getResult{k, shut}))
			if shut {
				return props.Broke("Shutdown", "in %v, Get %d returned shutdown with %d item(s) queued", s, i+1, x.m.Queue().Len())
			}
			if x.m.Queue().Processing(k) {
				return props.Broke("Stingy", "in %v, Get %d handed out %q while it was still being processed", s, i+1, k)
			}
			return props.Broke(x.order([]string{k}, []string{head}), "in %v, Get %d returned %q, the model's FIFO head is %q (queue %s, ready times %s)", s, i+1, k, head, x.queueString(), x.readyTimes(x.m.Queue().Head(9)))
		}
		x.m.Apply(wq.Op{Kind: wq.Get})
		delete(x.moved, k)
		x.q.Done(k)
		x.m.Apply(wq.Op{Kind: wq.Done, Key: k})
	}
	return nil
}

// untie lengthens d by a nanosecond at a time while key's ready time would
// equal another waiting key's (see DMode.Ties).
func (x *dmachine) untie(key string, d time.Duration, now time.Time) time.Duration {
	for {
		at := now.Add(d).Round(0)
		if at.Sub(now) > farAway || !x.m.WaitsAt(at, key) {
			return d // no clash, or it never comes: its order is never seen
		}
		d++
	}
}

func (x *dmachine) waiting(key string) bool {
	_, ok := x.m.ReadyAt(key)
	return ok
}

// queueString and waitingString render the model's state for violations,
// shortened when it is large.
func (x *dmachine) queueString() string {
	return short(x.m.Queue().Head(9), x.m.Queue().Len())
}

func (x *dmachine) waitingString() string {
	w := x.m.Waiting()
	if len(w) <= 8 {
		return fmt.Sprint(w)
	}
	return fmt.Sprintf("%v ... (%d entries)", w[:8], len(w))
}

// sleepTo advances the fake clock to target, stopping 1ns before and at
// every ready time of the model on the way to check the subject there.
func (x *dmachine) sleepTo(target time.Time) error {
	for {
		next, ok := x.m.NextReadyAt()
		if !ok || next.After(target) {
			break
		}
		if x.m.WaitingLen() > coarseAbove {
			// A burst waits: stopping at each of its ready times would
			// take thousands of steps. Jump to the target; the order the
			// items became ready in is checked when they are taken.
			time.Sleep(time.Until(target))
			x.advance(time.Now())
			err := x.settle(phaseReady)
			clear(x.contested)
			x.justMoved = nil
			return err
		}
		if early := next.Add(-1); early.After(time.Now()) {
			time.Sleep(time.Until(early))
			if err := x.settle(phaseEarly); err != nil {
				return err
			}
		}
		time.Sleep(time.Until(next))
		x.advance(time.Now())
		if err := x.settle(phaseReady); err != nil {
			return err
		}
		for _, k := range x.justMoved {
			delete(x.contested, k)
		}
		x.justMoved = nil
	}
	if d := time.Until(target); d > 0 {
		time.Sleep(d)
	}
	return x.settle(phaseStep)
}

// coarseAbove is how many waiting entries a delaying machine still steps
// through one ready time at a time when it sleeps.
const coarseAbove = 64

// advance moves what is due in the model, noting which keys moved.
func (x *dmachine) advance(now time.Time) {
	q := x.m.Queue()
	for _, e := range x.m.Due(now) {
		// Moves only add keys, and the due keys are distinct: their state
		// before the move is their state now.
		if !q.Queued(e.Key) && !q.Processing(e.Key) && !q.IsShuttingDown() {
			x.moved[e.Key] = e.ReadyAt
		}
		x.justMoved = append(x.justMoved, e.Key)
	}
	x.m.ApplyAdvance(now)
}

// early names a subject that has more ready than the model.
func (x *dmachine) early() string {
	if x.lastHuge {
		return GHugeNever
	}
	return GNotEarly
}

// late names a subject that has fewer ready than the model at a ready time.
func (x *dmachine) late() string {
	for _, k := range x.justMoved {
		if x.contested[k] {
			return GEarlierWins
		}
	}
	return GOnTime
}

// order names Gets that did not take the model's head: got holds a key the
// head does not, the head a key got does not.
func (x *dmachine) order(got, head []string) string {
	var g, h string
	for _, k := range got {
		if !slices.Contains(head, k) {
			g = k
		}
	}
	for _, k := range head {
		if !slices.Contains(got, k) {
			h = k
		}
	}
	if g != "" && !x.m.Queue().Queued(g) && x.waiting(g) {
		return x.early()
	}
	tg, okg := x.moved[g]
	th, okh := x.moved[h]
	switch {
	case okg && okh && tg.Equal(th):
		return GTieOrder
	case okg || okh:
		return GReadyOrder
	}
	return "Fair"
}

// settle waits until the subject is quiescent, then checks which blocked
// calls returned against what the model allows, and the Len law.
func (x *dmachine) settle(ph phase) error {
	synctest.Wait()
	g := pollGets(&x.workers, x.rec)
	returned, blocked, results := g.returned, g.blocked, g.results
	where := ""
	switch ph {
	case phaseEarly:
		where = " (1ns before the next ready time)"
	case phaseReady:
		where = " (at a ready time)"
	}
	queued := x.m.Queue().Len()
	shut := x.m.IsShuttingDown()
	wantItems, wantReturned := g.want(queued, shut)
	if len(returned) != wantReturned {
		switch {
		case len(returned) > wantReturned && queued == 0 && !shut:
			g := "Blocking Get"
			if x.m.WaitingLen() > 0 {
				g = x.early()
			}
			return props.Broke(g, "%d Get(s) returned from a queue with nothing ready%s: %s (waiting %s)", len(returned)-wantReturned, where, describe(returned, results), x.waitingString())
		case len(returned) > wantReturned:
			return props.Broke("Stingy", "%d Get(s) returned but only %d item(s) were queued %s%s: %s", len(returned), queued, x.queueString(), where, describe(returned, results))
		default:
			g := "Liveness"
			if ph == phaseReady {
				g = x.late()
			}
			return props.Broke(g, "%d Get(s) still blocked with %d item(s) queued %s%s (shutting down: %v)", len(blocked), queued, x.queueString(), where, shut)
		}
	}
	head := x.m.Queue().Head(wantItems)
	gotItems := g.items()
	if !g.tookHead(head) {
		for _, k := range gotItems {
			if x.m.Queue().Processing(k) {
				return props.Broke("Stingy", "Get handed out %q while it was still being processed (processing: %v)", k, x.m.Queue().ProcessingKeys())
			}
		}
		if len(gotItems) < len(head) {
			return props.Broke("Shutdown", "Get returned shutdown with items still queued %s", x.queueString())
		}
		return props.Broke(x.order(gotItems, head), "Gets returned %v, the model's FIFO head is %v (queue %s, ready times %v)%s", gotItems, head, x.queueString(), x.readyTimes(x.m.Queue().Head(9)), where)
	}
	for range wantItems {
		x.m.Apply(wq.Op{Kind: wq.Get})
	}
	for _, k := range gotItems {
		delete(x.moved, k)
	}
	g.hand(&x.workers)
	done, err := drainReturned(x.drain, x.m.Enabled(wq.Op{Kind: wq.ShutDownWithDrain}), x.rec, x.m.Queue().Head(9), x.m.Queue().ProcessingKeys())
	if err != nil {
		return err
	}
	if done {
		x.drain = nil
		x.m.Apply(wq.Op{Kind: wq.ShutDownWithDrain})
	}
	if n, want := x.q.Len(), x.m.Queue().Len(); n != want {
		x.rec.Step("Len", strconv.Itoa(want), strconv.Itoa(n))
		g := "Len law"
		switch {
		case n > want:
			g = x.early()
		case ph == phaseReady:
			g = x.late()
		}
		return props.Broke(g, "Len() = %d, model %d%s (queue %s, waiting %s)", n, want, where, x.queueString(), x.waitingString())
	}
	if x.metrics != nil {
		if got := x.metrics.RetriesCounter.Value(); got != x.wantRetries {
			return props.Broke("Metrics", "retries = %d, want %d: one per AddAfter made before shutdown, whatever its delay%s", got, x.wantRetries, where)
		}
	}
	return nil
}

// readyTimes shows the ready times (from the bubble's start) of the queued
// keys that came from waiting entries.
func (x *dmachine) readyTimes(queue []string) string {
	var parts []string
	for _, k := range queue {
		if at, ok := x.moved[k]; ok {
			parts = append(parts, fmt.Sprintf("%s@%s", k, at.Sub(bubbleStart)))
		}
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// bubbleStart is the fake clock's start in every synctest bubble.
var bubbleStart = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// Close shuts the subject down and releases every blocked call: it also
// marks the held items done, so that a drain the subject did not release
// on ShutDown (a violation already reported) does not deadlock the bubble.
func (x *dmachine) Close() {
	shutDown(x.q)
	for i := range x.workers {
		if w := &x.workers[i]; w.holding {
			x.q.Done(w.held)
		}
	}
	synctest.Wait()
}

// deadlineAdd is one AddAfter of the deadline check.
type deadlineAdd struct {
	Key string
	D   time.Duration
}

var (
	deadlineKeys   = []string{"a", "b", "c", "d", "e", "f", "g", "h"}
	deadlineDelays = []time.Duration{time.Second, 0, 30 * time.Second, 1, 2 * time.Second, 5 * time.Second, MaxWait, 15 * time.Second,
		time.Millisecond, -time.Second, 20 * time.Second, MaxWait + 1, math.MaxInt64, math.MinInt64, math.MaxInt64 - 1}
)

// deadlineCheck adds up to 16 items (of 8 keys), each AddAfter followed by
// synctest.Wait so that the subject sees every change of its head, then
// walks the clock through every ready time r, checking Len at r-1ns, r and
// r+MaxWait: it must lie between the number of items whose ready time is
// MaxWait or more in the past and the number whose ready time has come.
// Nothing is taken from the queue until the end, when Gets must return the
// items in ready-time order (ties in any order).
func deadlineCheck(s Subject) func(*testing.T, props.Config) error {
	addGen := rapid.Custom(func(t *rapid.T) deadlineAdd {
		return deadlineAdd{rapid.SampledFrom(deadlineKeys).Draw(t, "key"), rapid.SampledFrom(deadlineDelays).Draw(t, "d")}
	})
	return func(t *testing.T, cfg props.Config) error {
		err := props.Rapid(t, cfg, func(rt *rapid.T, rec *props.Recorder) {
			adds := rapid.SliceOfN(addGen, 1, 16).Draw(rt, "adds")
			props.Bubble(t, func() {
				q := s.NewDelaying(Deps{Clock: clock.RealClock{}})
				defer func() {
					q.ShutDown()
					synctest.Wait()
				}()
				rec.Timed()
				// Let the clock run past the queue's creation, so that a
				// ready time computed as elapsed+d can overflow.
				rec.Step("Sleep(1ms)", "", "")
				time.Sleep(time.Millisecond)
				synctest.Wait()
				t0 := time.Now()
				ready := map[string]time.Time{}
				for _, a := range adds {
					q.AddAfter(a.Key, a.D)
					synctest.Wait()
					rec.Step(DStep{Kind: DAddAfter, Key: a.Key, D: a.D}.String(), "", "")
					at := t0
					if a.D > 0 {
						at = t0.Add(a.D).Round(0)
					}
					if old, ok := ready[a.Key]; !ok || at.Before(old) {
						ready[a.Key] = at
					}
				}
				comes := func(at time.Time) bool { return at.Sub(t0) <= time.Hour }
				var pts []time.Time
				for _, at := range ready {
					if comes(at) {
						pts = append(pts, at.Add(-1), at, at.Add(MaxWait))
					}
				}
				pts = append(pts, t0.Add(2*time.Hour))
				slices.SortFunc(pts, func(a, b time.Time) int { return a.Compare(b) })
				pts = slices.Compact(pts)
				for _, pt := range pts {
					if pt.Before(t0) {
						continue
					}
					time.Sleep(time.Until(pt))
					synctest.Wait()
					lo, hi := 0, 0
					for _, at := range ready {
						if !at.After(pt) {
							hi++
						}
						if !at.Add(MaxWait).After(pt) {
							lo++
						}
					}
					n := q.Len()
					rec.Step(fmt.Sprintf("@%s Len", pt.Sub(t0)), fmt.Sprintf("%d..%d", lo, hi), strconv.Itoa(n))
					if n >= lo && n <= hi {
						continue
					}
					// Find out which items are there, to name what broke.
					var there []string
					for q.Len() > 0 {
						k, _ := q.Get()
						q.Done(k)
						there = append(there, k)
					}
					if n > hi {
						g := GNotEarly
						for _, k := range there {
							if at := ready[k]; !comes(at) {
								g = GHugeNever
							}
						}
						rec.Fail(rt, g, "at t0+%s: Len() = %d, but only %d item(s) have reached their ready time (queued: %v; ready times %s)", pt.Sub(t0), n, hi, there, fmtReady(ready, t0))
					}
					var missing []string
					for k, at := range ready {
						if !at.Add(MaxWait).After(pt) && !slices.Contains(there, k) {
							missing = append(missing, k)
						}
					}
					slices.Sort(missing)
					rec.Fail(rt, GWithinMaxWait, "at t0+%s: %v not ready %v or more after their ready time (queued: %v; ready times %s)", pt.Sub(t0), missing, MaxWait, there, fmtReady(ready, t0))
				}
				var prev time.Time
				var got []string
				for q.Len() > 0 {
					k, _ := q.Get()
					q.Done(k)
					got = append(got, k)
					rec.Step("Get", "", k)
					if at := ready[k]; at.Before(prev) {
						rec.Fail(rt, GReadyOrder, "Gets returned %v: %s (ready at t0+%s) after an item ready at t0+%s (ready times %s)", got, k, at.Sub(t0), prev.Sub(t0), fmtReady(ready, t0))
					} else {
						prev = at
					}
				}
			})
		})
		return props.Save(t, cfg, ComponentDelaying, CheckDelayingDeadline, err)
	}
}

func fmtReady(ready map[string]time.Time, t0 time.Time) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(ready)) {
		if d := ready[k].Sub(t0); d <= time.Hour {
			parts = append(parts, fmt.Sprintf("%s@%s", k, d))
		} else {
			parts = append(parts, k+"@never")
		}
	}
	return strings.Join(parts, " ")
}

// immediateDelays are the non-positive delays the immediate check probes.
var immediateDelays = []time.Duration{0, -1, -time.Hour, math.MinInt64}

// immediateCheck calls AddAfter(k, d <= 0) on a quiescent queue and reads
// Len right after it returns, without letting the queue's goroutines catch
// up; every other round k already waits for an hour. A queue that routes
// such an item through its waiting goroutine loses the race against Len at
// least once in 64 probes.
func immediateCheck(s Subject) func(*testing.T, props.Config) error {
	return func(t *testing.T, _ props.Config) error {
		return bubble(t, func() error {
			q := s.NewDelaying(Deps{Clock: clock.RealClock{}})
			defer func() {
				q.ShutDown()
				synctest.Wait()
			}()
			for i := range 64 {
				key := fmt.Sprintf("k%d", i)
				d := immediateDelays[i%len(immediateDelays)]
				waits := i/len(immediateDelays)%2 == 1
				if waits {
					q.AddAfter(key, time.Hour)
				}
				synctest.Wait()
				before := q.Len()
				q.AddAfter(key, d)
				if after := q.Len(); after != before+1 {
					return props.Broke(GImmediate, "AddAfter(%s, %v) (waiting already: %v) returned with Len() = %d, want %d: the item was not added before the call returned", key, d, waits, after, before+1)
				}
			}
			// The waiting entries of items already queued collapse.
			time.Sleep(time.Hour)
			synctest.Wait()
			if n := q.Len(); n != 64 {
				return props.Broke("Len law", "after the hour: Len() = %d, want 64 (the waiting entries of queued items must collapse into them)", n)
			}
			return nil
		})
	}
}

// shutdownCheck runs the shutdown scenario with ShutDown and with
// ShutDownWithDrain (a worker holding an item).
func shutdownCheck(s Subject) func(*testing.T, props.Config) error {
	return func(t *testing.T, _ props.Config) error {
		for _, drain := range []bool{false, true} {
			if err := bubble(t, func() error { return shutdownScenario(s, drain) }); err != nil {
				return err
			}
		}
		return nil
	}
}

func shutdownScenario(s Subject, drain bool) error {
	q := s.NewDelaying(Deps{Clock: clock.RealClock{}})
	defer func() {
		q.ShutDown()
		synctest.Wait()
	}()
	stop, name := q.ShutDown, "ShutDown"
	if drain {
		stop, name = q.ShutDownWithDrain, "ShutDownWithDrain"
	}
	var held string
	if drain {
		q.Add("held")
		held, _ = q.Get()
	}
	// A panic in a goroutine would kill the test binary: report it.
	panics := make(chan string, 8)
	safe := func(what string) {
		if p := recover(); p != nil {
			panics <- fmt.Sprintf("%s panicked: %v", what, p)
		}
	}
	panicked := func() error {
		select {
		case p := <-panics:
			return props.Broke(GNoPanic, "%s", p)
		default:
			return nil
		}
	}
	gets := make([]chan getResult, Workers)
	for i := range gets {
		ch := make(chan getResult, 1)
		gets[i] = ch
		go func() {
			defer safe("Get")
			k, sd := q.Get()
			ch <- getResult{k, sd}
		}()
	}
	for i, d := range []time.Duration{time.Second, time.Hour, math.MaxInt64} {
		q.AddAfter(fmt.Sprintf("w%d", i), d)
	}
	synctest.Wait()
	// More AddAfter calls than client-go's channel holds (1000), racing
	// with the shutdown.
	adders := make(chan struct{})
	go func() {
		defer close(adders)
		defer safe("AddAfter during " + name)
		for i := range 3000 {
			q.AddAfter(fmt.Sprintf("s%d", i%50), time.Duration(i+1)*time.Millisecond)
		}
	}()
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		defer safe(name)
		stop()
	}()
	synctest.Wait()
	if err := panicked(); err != nil {
		return err
	}
	if !drain {
		if !returned(stopped) {
			return props.Broke(GShutdownReturns, "%s did not return", name)
		}
	}
	for i, ch := range gets {
		select {
		case r := <-ch:
			if !r.shutdown {
				return props.Broke(GDropsWaiting, "a Get blocked before %s returned item %q although nothing was ready", name, r.key)
			}
		default:
			return props.Broke(GShutdownUnblocks, "Get of worker %d, blocked on an empty queue, still blocked after %s", i, name)
		}
	}
	if !returned(adders) {
		return props.Broke(GAddAfterReturns, "a goroutine calling AddAfter during %s is still blocked in it", name)
	}
	late := make(chan struct{})
	go func() {
		defer close(late)
		defer safe("AddAfter after " + name)
		for _, d := range []time.Duration{0, -1, 1, time.Second, math.MaxInt64} {
			q.AddAfter("late", d)
		}
	}()
	synctest.Wait()
	if err := panicked(); err != nil {
		return err
	}
	if !returned(late) {
		return props.Broke(GAddAfterReturns, "AddAfter after %s is blocked", name)
	}
	if n := q.Len(); n != 0 {
		return props.Broke(GDropsWaiting, "after %s and AddAfter(late, d <= 0): Len() = %d, want 0", name, n)
	}
	time.Sleep(time.Hour)
	synctest.Wait()
	if n := q.Len(); n != 0 {
		return props.Broke(GDropsWaiting, "an hour after %s: Len() = %d, want 0: waiting items or AddAfter calls after it became ready", name, n)
	}
	if drain {
		if returned(stopped) {
			return props.Broke("Drain", "ShutDownWithDrain returned while %q was still being processed", held)
		}
		q.Done(held)
		synctest.Wait()
		if !returned(stopped) {
			return props.Broke(GShutdownReturns, "ShutDownWithDrain did not return after the last item was marked Done")
		}
	}
	if _, sd := q.Get(); !sd {
		return props.Broke(GShutdownUnblocks, "Get after %s did not report shutdown", name)
	}
	return nil
}

// releaseCheck: a worker holds an item; ShutDown; ShutDownWithDrain (which
// waits for the item); ShutDown again must release the drain, as the queue
// model says (spec/workqueue: ShutDown makes a waiting drain return).
func releaseCheck(s Subject) func(*testing.T, props.Config) error {
	return func(t *testing.T, _ props.Config) error {
		return bubble(t, func() error {
			q := s.NewDelaying(Deps{Clock: clock.RealClock{}})
			q.Add("a")
			held, _ := q.Get()
			q.AddAfter("b", time.Second)
			q.ShutDown()
			drained := make(chan struct{})
			go func() {
				defer close(drained)
				q.ShutDownWithDrain()
			}()
			synctest.Wait()
			q.ShutDown()
			synctest.Wait()
			ok := returned(drained)
			// Let a drain that ShutDown did not release finish, so the
			// bubble ends cleanly.
			q.Done(held)
			synctest.Wait()
			if !ok {
				return props.Broke(GReleasesDrain, "ShutDownWithDrain, begun after ShutDown while %q was being processed, was still waiting after a second ShutDown", held)
			}
			return nil
		})
	}
}

// returned reports whether ch is closed, without blocking.
func returned(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// delayingLeak shuts down a delaying queue with metrics on, an item handed
// out and marked done, and items waiting (one with a huge delay), then looks
// for goroutines that outlive it. It runs in a synctest bubble, so that the
// queue has taken in every AddAfter before the shutdown (synctest.Wait) and
// goleak's retries (about half a second) pass on the fake clock, well short
// of client-go's 10s heartbeat.
func delayingLeak(s Subject) func(*testing.T, props.Config) error {
	return func(t *testing.T, _ props.Config) error {
		for _, drain := range []bool{false, true} {
			err := bubble(t, func() error {
				before := goleak.IgnoreCurrent()
				q := s.NewDelaying(Deps{Clock: clock.RealClock{}, Metrics: true})
				// Release what the stop left running, so that a leak is
				// reported as such and not as the bubble's deadlock.
				defer func() {
					q.ShutDown()
					synctest.Wait()
				}()
				q.AddAfter("a", 0)
				q.AddAfter("b", time.Hour)
				q.AddAfter("c", math.MaxInt64)
				k, _ := q.Get()
				q.Done(k)
				synctest.Wait()
				stop, name := q.ShutDown, "ShutDown"
				if drain {
					stop, name = q.ShutDownWithDrain, "ShutDownWithDrain"
				}
				if !props.ReturnsWithin(props.Watchdog, stop) {
					return props.Broke(GShutdownReturns, "%s did not return within %v with nothing queued or processing", name, props.Watchdog)
				}
				if err := goleak.Find(before); err != nil {
					return props.Broke(GNoLeak, "after %s returned: %v", name, err)
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
		return nil
	}
}
