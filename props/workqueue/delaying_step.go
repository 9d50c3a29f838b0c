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
func (m DMode) horizon() time.Duration {
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
var dmodeFor = map[string]DMode{
	CheckDelayingModel:        {},
	CheckDelayingTies:         {Ties: true},
	CheckRateLimitingModel:    {RateLimited: true},
	CheckRateLimitingDelegate: {RateLimited: true, Delegates: true},
	CheckDelayingMetrics:      {Metrics: true},
}

// Durations the machines draw from: simple ones first (rapid shrinks
// towards the start), with the boundaries 0, ±1ns, MaxWait±, horizons well
// past client-go's 10s heartbeat, the extremes that must neither panic
// nor overflow, and (issue 27, class 1: TestReachDelaying measured none
// before) delays of more than a day that still fit: one the plain machine
// waits out (farDelay: Tick reaches it), a month, and a century.
var (
	dlDelays = []time.Duration{time.Second, 0, 2 * time.Second, 1, 5 * time.Second, MaxWait, 30 * time.Second,
		time.Millisecond, -1, -time.Second, MaxWait + 1, 2, 15 * time.Second, time.Minute, 25 * time.Minute, time.Hour,
		math.MinInt64, math.MaxInt64, math.MaxInt64 - 1, farDelay, 30 * 24 * time.Hour, 100 * 365 * 24 * time.Hour}
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

func delayingStepGen(mode DMode) *rapid.Generator[DStep] {
	delays, sleeps := dlDelays, dlSleeps
	if mode.Ties {
		delays, sleeps = tieDelays, tieSleeps
	}
	sleeps = slices.DeleteFunc(slices.Clone(sleeps), func(d time.Duration) bool { return d > mode.horizon() })
	op := checkkit.Choice(delayingStepWeights...)
	hi := DelayingMaxBulk
	if mode.RateLimited || mode.Metrics {
		hi = SideMaxBulk // the delaying machine covers the sizes
	}
	size := checkkit.Size(hi, DelayingThresholds...)
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
// horizons past client-go's 10s heartbeat, bursts past every size
// threshold with an early item behind a large heap, and delays of more
// than a day waited out.
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
	// An item asked for in more than a day, alone (issue 27, class 1), and
	// one behind an earlier item: each must come back when its time comes.
	{{Kind: DAddAfter, Key: "a", D: farDelay}, {Kind: DGet, Worker: 0}, {Kind: DTick}, {Kind: DDone, Worker: 0},
		{Kind: DAddAfter, Key: "b", D: time.Second}, {Kind: DAddAfter, Key: "c", D: farDelay}, {Kind: DTick}, {Kind: DTick}, {Kind: DLen}},
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
var metricsWitnesses = [][]DStep{
	{{Kind: DAddAfter, Key: "a", D: time.Second}, {Kind: DAddAfter, Key: "b", D: 2 * time.Second}, {Kind: DGet, Worker: 0}, {Kind: DGet, Worker: 1},
		{Kind: DSleep, D: 3 * time.Second}, {Kind: DDone, Worker: 0}, {Kind: DDone, Worker: 1}, {Kind: DSleep, D: time.Second}},
	{{Kind: DAdd, Key: "a"}, {Kind: DAddAfter, Key: "a", D: time.Second}, {Kind: DAddAfter, Key: "b", D: 2 * time.Second}, {Kind: DGet, Worker: 0},
		{Kind: DSleep, D: time.Second}, {Kind: DAdd, Key: "c"}, {Kind: DAddAfter, Key: "c", D: time.Second}, {Kind: DSleep, D: time.Second},
		{Kind: DDone, Worker: 0}, {Kind: DGet, Worker: 1}, {Kind: DGet, Worker: 2}, {Kind: DSleep, D: time.Second}},
	{{Kind: DAddAfter, Key: "a", D: time.Second}, {Kind: DAddAfter, Key: "b", D: time.Hour}, {Kind: DAdd, Key: "c"}, {Kind: DShutDown}},
	{{Kind: DAddRateLimited, Key: "a", D: 0}, {Kind: DAddRateLimited, Key: "b", D: time.Second}, {Kind: DAddRateLimited, Key: "a", D: -time.Second},
		{Kind: DForget, Key: "a"}, {Kind: DNumRequeues, Key: "b", N: 3}, {Kind: DForget, Key: "b"}, {Kind: DSleep, D: time.Second},
		{Kind: DGet, Worker: 0}, {Kind: DDone, Worker: 0}, {Kind: DLen}},
}
