package workqueue

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kverify/kverify/props/checkkit"
	"pgregory.net/rapid"
)

// dKind is an operation of a delaying (or rate-limiting) queue machine.
type dKind uint8

// The operations of a delaying queue machine.
const (
	dAddAfter dKind = iota
	dAdd
	dGet
	dDone
	dSleep
	dTick // sleep until the next ready time; recorded as the Sleep it became
	dLen
	dShuttingDown
	dShutDown
	dShutDownWithDrain
	dAddRateLimited
	dForget
	dNumRequeues
	// dBurst adds N fresh keys with AddAfter, the i-th with delay
	// D + burstSpread(i, N): a permutation of N ready times, so the
	// waiting heap is filled out of order ("Burst(N,D)").
	dBurst
	// dDrain has one worker Get and Done up to N ready items ("w0:Drain(N)").
	dDrain
)

var dkindNames = [...]string{"AddAfter", "Add", "Get", "Done", "Sleep", "Tick", "Len", "ShuttingDown", "ShutDown", "ShutDownWithDrain", "AddRateLimited", "Forget", "NumRequeues", "Burst", "Drain"}

// burstSpread is the extra delay of a burst's i-th key of n: the keys'
// ready times are a permutation of n consecutive milliseconds.
func burstSpread(i, n int) time.Duration {
	return time.Duration((i*7919)%n) * time.Millisecond
}

func (k dKind) String() string {
	if int(k) < len(dkindNames) {
		return dkindNames[k]
	}
	return fmt.Sprintf("DKind(%d)", k)
}

// dStep is one operation of a delaying queue machine. D is AddAfter's delay,
// Sleep's duration, or AddRateLimited's delay (what the scripted limiter's
// When answers); N is the scripted limiter's NumRequeues answer.
type dStep struct {
	Kind   dKind
	Key    string
	D      time.Duration
	N      int
	Worker int
}

// String is the trace notation: "AddAfter(a,1s)", "Add(a)", "w1:Get",
// "w1:Done", "Sleep(1.5s)", "Tick", "Len", "ShutDown", "AddRateLimited(a,1s)",
// "Forget(a)", "NumRequeues(a,3)", "Burst(500,1s)", "w0:Drain(500)", ...
func (s dStep) String() string {
	switch s.Kind {
	case dBurst:
		return fmt.Sprintf("Burst(%d,%s)", s.N, s.D)
	case dDrain:
		return fmt.Sprintf("w%d:Drain(%d)", s.Worker, s.N)
	case dAddAfter, dAddRateLimited:
		return fmt.Sprintf("%s(%s,%s)", s.Kind, s.Key, s.D)
	case dAdd, dForget:
		return fmt.Sprintf("%s(%s)", s.Kind, s.Key)
	case dNumRequeues:
		return fmt.Sprintf("%s(%s,%d)", s.Kind, s.Key, s.N)
	case dGet, dDone:
		return fmt.Sprintf("w%d:%s", s.Worker, s.Kind)
	case dSleep:
		return fmt.Sprintf("Sleep(%s)", s.D)
	}
	return s.Kind.String()
}

// parseDStep is the inverse of dStep.String.
func parseDStep(s string) (dStep, error) {
	if n, op, ok, err := cutWorker(s); ok {
		if err != nil {
			return dStep{}, err
		}
		switch op {
		case "Get":
			return dStep{Kind: dGet, Worker: n}, nil
		case "Done":
			return dStep{Kind: dDone, Worker: n}, nil
		}
		if b, k, ok := parseBulk(op); ok && b == drain {
			return dStep{Kind: dDrain, Worker: n, N: k}, nil
		}
		return dStep{}, fmt.Errorf("bad worker step %q", s)
	}
	kind := func(name string) (dKind, bool) {
		for i, n := range dkindNames {
			if n == name {
				return dKind(i), true
			}
		}
		return 0, false
	}
	if name, arg, ok := strings.Cut(s, "("); ok && strings.HasSuffix(arg, ")") {
		k, ok := kind(name)
		if !ok {
			return dStep{}, fmt.Errorf("bad step %q", s)
		}
		args := strings.Split(strings.TrimSuffix(arg, ")"), ",")
		st := dStep{Kind: k}
		switch {
		case k == dSleep && len(args) == 1:
			d, err := time.ParseDuration(args[0])
			if err != nil {
				return dStep{}, fmt.Errorf("step %q: %w", s, err)
			}
			st.D = d
		case (k == dAdd || k == dForget) && len(args) == 1:
			st.Key = args[0]
		case (k == dAddAfter || k == dAddRateLimited) && len(args) == 2:
			d, err := time.ParseDuration(args[1])
			if err != nil {
				return dStep{}, fmt.Errorf("step %q: %w", s, err)
			}
			st.Key, st.D = args[0], d
		case k == dBurst && len(args) == 2:
			n, err := strconv.Atoi(args[0])
			if err != nil || n < 0 {
				return dStep{}, fmt.Errorf("bad step %q", s)
			}
			d, err := time.ParseDuration(args[1])
			if err != nil {
				return dStep{}, fmt.Errorf("step %q: %w", s, err)
			}
			st.N, st.D = n, d
		case k == dNumRequeues && len(args) == 2:
			n, err := strconv.Atoi(args[1])
			if err != nil {
				return dStep{}, fmt.Errorf("step %q: %w", s, err)
			}
			st.Key, st.N = args[0], n
		default:
			return dStep{}, fmt.Errorf("bad step %q", s)
		}
		return st, nil
	}
	k, ok := kind(s)
	if !ok || k == dAddAfter || k == dAdd || k == dSleep || k == dAddRateLimited || k == dForget || k == dNumRequeues || k == dGet || k == dDone {
		return dStep{}, fmt.Errorf("bad step %q", s)
	}
	return dStep{Kind: k}, nil
}

// dMode selects what a delaying queue machine exercises.
type dMode struct {
	// Ties lets distinct keys wait for the same ready time, so the order of
	// ties is checked. Without it, a delay that would make a tie is
	// lengthened by a nanosecond at a time until it does not (the trace
	// shows the delay used), and only ready-time order is checked.
	Ties bool
	// RateLimited drives a rate-limiting queue and adds AddRateLimited.
	RateLimited bool
	// Delegates adds Forget and NumRequeues (with RateLimited).
	Delegates bool
	// Metrics turns the queue's metrics on and checks them after every
	// step, at every ready time and 1ns before it: depth, adds, latency
	// and work-duration counts as the model's history gives them (an item
	// that becomes ready counts as an Add of it: an add if it was not
	// dirty, nothing if it was), the unfinished-work gauges (see
	// metricsWatch), and the retries counter: one per AddAfter (or
	// AddRateLimited) made before shutdown, whatever its delay, as
	// client-go counts them (delaying_queue.go:255), or as the profile says
	// (RetriesCountDelayed).
	Metrics bool
}

// horizon is the longest a machine in mode sleeps at once (Sleep, Tick).
// The rate-limiting machine with metrics (ratelimiting/delegates of a
// subject with metrics) stops at a minute: the queue's 500ms
// unfinished-work ticker makes every hour of fake time thousands of
// wake-ups, and the long horizons are delaying/metrics' and
// ratelimiting/model's to explore.
//
// The plain delaying machines (delaying/model, delaying/ties) go on to two
// days, so that an item asked for in more than a day (farDelay) becomes
// ready while the machine watches: a queue that takes such a delay for
// never, or loses it in a timer's range, shows only there.
func (m dMode) horizon() time.Duration {
	switch {
	case m.RateLimited && m.Metrics:
		return time.Minute
	case m.RateLimited || m.Metrics:
		return time.Hour
	}
	return 2 * farDelay
}

// farDelay is a delay of more than a day that the delaying machine waits
// out (see horizon).
const farDelay = 25 * time.Hour

// dmodeFor maps the machine checks to their modes, for replay.
var dmodeFor = map[string]dMode{
	CheckDelayingModel:          {},
	CheckDelayingTies:           {Ties: true},
	CheckRateLimitingModel:      {RateLimited: true},
	CheckRateLimitingDelegate:   {RateLimited: true, Delegates: true},
	CheckDelayingMetrics:        {Metrics: true},
	CheckDelayingExhaustive:     {},
	CheckRateLimitingExhaustive: {RateLimited: true, Delegates: true},
}

// Durations the machines draw from: simple ones first (rapid shrinks
// towards the start), with the boundaries 0, ±1ns, maxWait±, horizons well
// past client-go's 10s heartbeat, the extremes that must neither panic
// nor overflow, and (issue 27, class 1: TestReachDelaying measured none
// before) delays of more than a day that still fit: one the plain machine
// waits out (farDelay: Tick reaches it), a month, and a century.
var (
	dlDelays = []time.Duration{time.Second, 0, 2 * time.Second, 1, 5 * time.Second, maxWait, 30 * time.Second,
		time.Millisecond, -1, -time.Second, maxWait + 1, 2, 15 * time.Second, time.Minute, 25 * time.Minute, time.Hour,
		math.MinInt64, math.MaxInt64, math.MaxInt64 - 1, farDelay, 30 * 24 * time.Hour, 100 * 365 * 24 * time.Hour}
	dlSleeps    = []time.Duration{time.Second, 1, time.Millisecond, 2 * time.Second, 5 * time.Second, maxWait, 30 * time.Second, time.Minute, 10 * time.Minute, time.Hour}
	tieDelays   = []time.Duration{time.Second, 2 * time.Second, 3 * time.Second, 0}
	tieSleeps   = []time.Duration{time.Second, 2 * time.Second}
	burstDelays = []time.Duration{time.Second, 0, 25 * time.Second, time.Hour}
)

// delayingThresholds are the sizes at which a delaying queue changes
// behaviour: our heap's shrink floor (64) and client-go's 1000-slot
// channel of waiting additions, with the ring sizes around them.
var delayingThresholds = []int{64, 65, 128, 1000, 1001, 1024, 2048}

// delayingMaxBulk is the largest bulk step of the delaying machines.
const delayingMaxBulk = 3000

// The operations of the delaying machines, in delayingStepGen's order.
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

// delayingStepWeights are the delaying machines' operation weights.
var delayingStepWeights = []int{dopAddAfter: 25, dopAdd: 5, dopGet: 15, dopDone: 12, dopSleep: 9, dopTick: 10, dopLen: 5, dopShuttingDown: 2,
	dopDelegate: 6, dopDrainShutDown: 3, dopShutDown: 2, dopBurst: 3, dopDrain: 3}

func delayingStepGen(mode dMode) *rapid.Generator[dStep] {
	delays, sleeps := dlDelays, dlSleeps
	if mode.Ties {
		delays, sleeps = tieDelays, tieSleeps
	}
	sleeps = slices.DeleteFunc(slices.Clone(sleeps), func(d time.Duration) bool { return d > mode.horizon() })
	op := checkkit.Choice(delayingStepWeights...)
	hi := delayingMaxBulk
	if mode.RateLimited || mode.Metrics {
		hi = sideMaxBulk // the delaying machine covers the sizes
	}
	size := checkkit.Size(hi, delayingThresholds...)
	key := rapid.SampledFrom(Keys)
	worker := rapid.IntRange(0, Workers-1)
	return rapid.Custom(func(t *rapid.T) dStep {
		switch op.Draw(t, "op") {
		case dopAddAfter:
			kind := dAddAfter
			if mode.RateLimited && rapid.Bool().Draw(t, "rate limited") {
				kind = dAddRateLimited
			}
			return dStep{Kind: kind, Key: key.Draw(t, "key"), D: rapid.SampledFrom(delays).Draw(t, "d")}
		case dopAdd:
			return dStep{Kind: dAdd, Key: key.Draw(t, "key")}
		case dopGet:
			return dStep{Kind: dGet, Worker: worker.Draw(t, "worker")}
		case dopDone:
			return dStep{Kind: dDone, Worker: worker.Draw(t, "worker")}
		case dopSleep:
			return dStep{Kind: dSleep, D: rapid.SampledFrom(sleeps).Draw(t, "sleep")}
		case dopTick:
			return dStep{Kind: dTick}
		case dopShuttingDown:
			return dStep{Kind: dShuttingDown}
		case dopDelegate:
			if !mode.Delegates {
				return dStep{Kind: dLen}
			}
			if rapid.Bool().Draw(t, "forget") {
				return dStep{Kind: dForget, Key: key.Draw(t, "key")}
			}
			return dStep{Kind: dNumRequeues, Key: key.Draw(t, "key"), N: rapid.IntRange(0, 9).Draw(t, "n")}
		case dopDrainShutDown:
			return dStep{Kind: dShutDownWithDrain}
		case dopShutDown:
			return dStep{Kind: dShutDown}
		case dopBurst:
			return dStep{Kind: dBurst, N: size.Draw(t, "n"), D: rapid.SampledFrom(burstDelays).Draw(t, "d")}
		case dopDrain:
			return dStep{Kind: dDrain, Worker: worker.Draw(t, "worker"), N: size.Draw(t, "n")}
		}
		return dStep{Kind: dLen}
	})
}

// delayingWitnesses are fixed runs delaying/model makes before its random
// exploration, so that states a random run reaches only now and then are
// reached in every run: two AddAfter of one item with different delays
// (either order, waiting or being processed) followed by a wait past both,
// horizons past client-go's 10s heartbeat, bursts past every size
// threshold with an early item behind a large heap, and delays of more
// than a day waited out.
var delayingWitnesses = [][]dStep{
	{{Kind: dAddAfter, Key: "a", D: 2 * time.Second}, {Kind: dAddAfter, Key: "a", D: time.Second}, {Kind: dGet, Worker: 0},
		{Kind: dSleep, D: 3 * time.Second}, {Kind: dDone, Worker: 0}, {Kind: dLen}},
	{{Kind: dAddAfter, Key: "a", D: time.Second}, {Kind: dAddAfter, Key: "a", D: 2 * time.Second}, {Kind: dGet, Worker: 0},
		{Kind: dSleep, D: 3 * time.Second}, {Kind: dDone, Worker: 0}, {Kind: dGet, Worker: 1}, {Kind: dSleep, D: time.Second}},
	{{Kind: dAdd, Key: "a"}, {Kind: dGet, Worker: 0}, {Kind: dAddAfter, Key: "a", D: 2 * time.Second}, {Kind: dAddAfter, Key: "a", D: time.Second},
		{Kind: dSleep, D: 3 * time.Second}, {Kind: dGet, Worker: 1}, {Kind: dDone, Worker: 0}, {Kind: dSleep, D: time.Second}},
	{{Kind: dAddAfter, Key: "a", D: 25 * time.Second}, {Kind: dAddAfter, Key: "b", D: maxWait + 1}, {Kind: dAddAfter, Key: "c", D: time.Hour},
		{Kind: dGet, Worker: 0}, {Kind: dGet, Worker: 1}, {Kind: dGet, Worker: 2}, {Kind: dSleep, D: time.Minute}, {Kind: dSleep, D: time.Hour}},
	{{Kind: dBurst, N: 1100, D: time.Second}, {Kind: dAddAfter, Key: "a", D: time.Millisecond}, {Kind: dTick},
		{Kind: dSleep, D: 2 * time.Second}, {Kind: dDrain, N: 1101}},
	{{Kind: dBurst, N: 3000, D: time.Hour}, {Kind: dBurst, N: 70, D: time.Second}, {Kind: dAddAfter, Key: "a", D: time.Millisecond},
		{Kind: dSleep, D: 2 * time.Second}, {Kind: dDrain, N: 100}, {Kind: dSleep, D: 2 * time.Hour}, {Kind: dDrain, N: 3000}},
	// An item asked for in more than a day, alone (issue 27, class 1), and
	// one behind an earlier item: each must come back when its time comes.
	{{Kind: dAddAfter, Key: "a", D: farDelay}, {Kind: dGet, Worker: 0}, {Kind: dTick}, {Kind: dDone, Worker: 0},
		{Kind: dAddAfter, Key: "b", D: time.Second}, {Kind: dAddAfter, Key: "c", D: farDelay}, {Kind: dTick}, {Kind: dTick}, {Kind: dLen}},
}

// metricsWitnesses are fixed runs the machines with metrics (delaying/metrics,
// ratelimiting/delegates) make before their random exploration: the paths
// only they take, in every run. Two items become ready while Gets wait and
// are processed across several 500ms refreshes (the unfinished-work gauges
// sum and take the maximum of two ages), then both are Done and a refresh
// comes (the gauges drop to 0); items become ready while queued (they
// collapse: no add) and while being processed (an add, and depth counts
// them); shutdown drops items waiting (depth keeps the queued ones); and,
// on a rate-limiting queue, AddRateLimited with delays 0, negative and
// positive among Forget and NumRequeues (retries count the adds, nothing
// else). No step adds an item that waits without a delay, which
// controller-runtime's queue gets wrong in a way its divergences declare.
var metricsWitnesses = [][]dStep{
	{{Kind: dAddAfter, Key: "a", D: time.Second}, {Kind: dAddAfter, Key: "b", D: 2 * time.Second}, {Kind: dGet, Worker: 0}, {Kind: dGet, Worker: 1},
		{Kind: dSleep, D: 3 * time.Second}, {Kind: dDone, Worker: 0}, {Kind: dDone, Worker: 1}, {Kind: dSleep, D: time.Second}},
	{{Kind: dAdd, Key: "a"}, {Kind: dAddAfter, Key: "a", D: time.Second}, {Kind: dAddAfter, Key: "b", D: 2 * time.Second}, {Kind: dGet, Worker: 0},
		{Kind: dSleep, D: time.Second}, {Kind: dAdd, Key: "c"}, {Kind: dAddAfter, Key: "c", D: time.Second}, {Kind: dSleep, D: time.Second},
		{Kind: dDone, Worker: 0}, {Kind: dGet, Worker: 1}, {Kind: dGet, Worker: 2}, {Kind: dSleep, D: time.Second}},
	{{Kind: dAddAfter, Key: "a", D: time.Second}, {Kind: dAddAfter, Key: "b", D: time.Hour}, {Kind: dAdd, Key: "c"}, {Kind: dShutDown}},
	{{Kind: dAddRateLimited, Key: "a", D: 0}, {Kind: dAddRateLimited, Key: "b", D: time.Second}, {Kind: dAddRateLimited, Key: "a", D: -time.Second},
		{Kind: dForget, Key: "a"}, {Kind: dNumRequeues, Key: "b", N: 3}, {Kind: dForget, Key: "b"}, {Kind: dSleep, D: time.Second},
		{Kind: dGet, Worker: 0}, {Kind: dDone, Worker: 0}, {Kind: dLen}},
}
