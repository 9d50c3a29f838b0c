package workqueue

// The reach of the queue machines' generators (issue 27, class 1): for
// every operation of the plain, delaying and rate-limiting machines, the
// inputs the API allows, classified against the live state the operation
// meets, counted over ordinary draws with fixed seeds and held to a floor
// of one, as checkkit's sizes_test does for size classes. The tables below
// are the legal input domains; each class says why it matters.

import (
	"flag"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kverify/kverify/props/checkkit"
	wq "github.com/kverify/kverify/spec/workqueue"
	"pgregory.net/rapid"
)

// reachSubject is our queue family as a subject, set by ours_test.go
// (package workqueue_test): subjects/ours imports this package, so only
// the external test package can import it.
var reachSubject func() Subject

// reachClass is one class of an operation's legal inputs.
type reachClass struct {
	name string // "Add queued": the operation, then the class
	why  string // why an implementation may get this class wrong
}

// queueDomain is the legal input domain of the plain queue's operations,
// as the state before the call classifies them.
var queueDomain = []reachClass{
	{"Add new", "the item becomes dirty and is pushed: the common path"},
	{"Add queued", "collapses: a queue that pushes again hands the item out twice"},
	{"Add processing", "marks it dirty without pushing: Done must queue it"},
	{"Add processing+dirty", "a second re-add while processing must still come back once"},
	{"Add after shutdown", "ignored: nothing may be queued or counted"},
	{"Get empty", "blocks until an Add, a re-queueing Done or shutdown"},
	{"Get non-empty", "hands out the FIFO head at once"},
	{"Get after shutdown", "returns shutdown once the queue is empty, items before that"},
	{"Done held", "the item leaves the queue's memory"},
	{"Done held+dirty", "re-queues the item at the FIFO's tail and wakes a Get"},
	{"Done after shutdown", "a held item finished after ShutDown must not re-queue"},
	{"ShutDown queued", "wakes nothing that has an item; Get still hands out the queued ones in client-go"},
	{"ShutDown processing", "held items stay held; their Done still works"},
	{"ShutDown Gets blocked", "every blocked Get must wake with shutdown"},
	{"ShutDownWithDrain idle", "returns at once"},
	{"ShutDownWithDrain processing", "waits for the held items' Done"},
	{"Len 0", "the empty queue"},
	{"Len 1-16", "inside the FIFO ring's first capacity"},
	{"Len 17-64", "past the ring's first growth"},
	{"Len 65-1024", "past the ring's shrink floor"},
	{"Len >1024", "past the informer's 1024 and the ring's later doublings"},
	{"Burst into non-empty", "growth while the FIFO holds items (and may wrap)"},
	{"Drain past empty", "a drain asked for more items than queued stops at empty"},
	{"Steady wraps", "turns the FIFO over: reads and writes wrap the ring's end"},
}

// queueMisuseDomain is queue/done-unheld's own domain: Done of an item the
// caller does not hold.
var queueMisuseDomain = []reachClass{
	{"Done unknown", "an item the queue never saw: nothing changes"},
	{"Done queued, not held", "an item queued but not handed out: it must stay queued, once"},
	{"Done after shutdown, unheld", "misuse after shutdown changes nothing either"},
}

// queueDrainDomain is queue/drain's own domain.
var queueDrainDomain = []reachClass{
	{"ShutDownWithDrain queued", "waits until every queued item is handed out and Done"},
	{"ShutDownWithDrain processing+dirty", "a re-added item must be handed out and Done again before the drain returns"},
	{"Get during drain", "items queued before the drain are still handed out"},
	{"ShutDown drain in flight", "releases a drain that waits"},
}

// tallies counts, per class, how often a class was reached.
type tallies map[string]int

func (ta tallies) hit(c string, reached bool) {
	if reached {
		ta[c]++
	} else if _, ok := ta[c]; !ok {
		ta[c] = 0
	}
}

// check logs every class's count and fails t for a class of domain
// reached fewer than min times.
func (ta tallies) check(t *testing.T, what string, min int, domains ...[]reachClass) {
	t.Helper()
	var lines []string
	for _, c := range slices.Sorted(maps.Keys(ta)) {
		lines = append(lines, fmt.Sprintf("  %-40s %6d", c, ta[c]))
	}
	t.Logf("%s:\n%s", what, strings.Join(lines, "\n"))
	for _, d := range domains {
		for _, c := range d {
			if ta[c.name] < min {
				t.Errorf("%s: %q reached %d times, want at least %d (%s)", what, c.name, ta[c.name], min, c.why)
			}
		}
	}
}

// seeded runs rounds of rapid.Check (100 cases each) with fixed seeds, so
// that the reach measured is the same at every run of the test.
func seeded(t *testing.T, rounds int, prop func(*rapid.T)) {
	t.Helper()
	f := flag.Lookup("rapid.seed")
	old := f.Value.String()
	defer func() { _ = f.Value.Set(old) }()
	for r := range rounds {
		if t.Failed() {
			return
		}
		_ = f.Value.Set(strconv.Itoa(27_000 + r))
		rapid.Check(t, prop)
	}
}

// reachSteps is how many steps each reach run draws: rapid.Repeat's mean.
const reachSteps = 30

// classifyQueue records the class of st on x, before it is applied.
func classifyQueue(ta tallies, x *machine, st Step) {
	if !x.Enabled(st) {
		return
	}
	m := &x.m
	shut := m.IsShuttingDown()
	n := m.Len()
	switch {
	case n == 0:
		ta.hit("Len 0", true)
	case n <= 16:
		ta.hit("Len 1-16", true)
	case n <= 64:
		ta.hit("Len 17-64", true)
	case n <= 1024:
		ta.hit("Len 65-1024", true)
	default:
		ta.hit("Len >1024", true)
	}
	blocked := 0
	for i := range x.workers {
		if x.workers[i].getting != nil {
			blocked++
		}
	}
	switch st.Bulk {
	case Burst:
		ta.hit("Burst into non-empty", n > 0 && !shut)
		return
	case Drain:
		ta.hit("Drain past empty", st.N > n)
		ta.hit("Get during drain", x.drain != nil && n > 0)
		return
	case Steady:
		ta.hit("Steady wraps", !shut && st.N > 16)
		return
	}
	switch st.Kind {
	case wq.Add:
		dirty, proc := m.Dirty(st.Key), m.Processing(st.Key)
		ta.hit("Add after shutdown", shut)
		if shut {
			return
		}
		ta.hit("Add new", !dirty && !proc)
		ta.hit("Add queued", dirty && !proc)
		ta.hit("Add processing", proc && !dirty)
		ta.hit("Add processing+dirty", proc && dirty)
	case wq.Get:
		ta.hit("Get after shutdown", shut)
		ta.hit("Get empty", n == 0 && !shut)
		ta.hit("Get non-empty", n > 0 && !shut)
		ta.hit("Get during drain", x.drain != nil && n > 0)
	case wq.Done:
		if st.Key != "" {
			ta.hit("Done after shutdown, unheld", shut)
			ta.hit("Done unknown", !m.Dirty(st.Key) && !m.Processing(st.Key))
			ta.hit("Done queued, not held", m.Dirty(st.Key) && !m.Processing(st.Key))
			return
		}
		k := x.workers[st.Worker].held
		ta.hit("Done after shutdown", shut)
		ta.hit("Done held", !m.Dirty(k))
		ta.hit("Done held+dirty", m.Dirty(k))
	case wq.ShutDown:
		ta.hit("ShutDown queued", n > 0 && !shut)
		ta.hit("ShutDown processing", len(m.ProcessingKeys()) > 0 && !shut)
		ta.hit("ShutDown Gets blocked", blocked > 0 && !shut)
		ta.hit("ShutDown drain in flight", x.drain != nil)
	case wq.ShutDownWithDrain:
		proc := m.ProcessingKeys()
		dirty := slices.ContainsFunc(proc, m.Dirty)
		ta.hit("ShutDownWithDrain idle", n == 0 && len(proc) == 0)
		ta.hit("ShutDownWithDrain processing", len(proc) > 0)
		ta.hit("ShutDownWithDrain queued", n > 0)
		ta.hit("ShutDownWithDrain processing+dirty", dirty)
	}
}

// TestReachQueue runs queue/model, queue/done-unheld and queue/drain's
// machines on our queue (their witnesses, then 100 runs of 30 drawn steps
// and the closing ShutDown, seed 27000) and counts each class of
// queueDomain (and the misuse and drain domains) they reach.
//
// Measured: every class comes from the random draws (queue/model: Add
// queued 641, Add processing+dirty 210, Get empty 38, Done held+dirty 61,
// Len >1024 110, Steady wraps 48; done-unheld: Done unknown 17, Done
// queued, not held 19; drain: ShutDownWithDrain queued 27,
// processing+dirty 16, ShutDown drain in flight 27) but one: ShutDown with
// Gets blocked came 0 times in the draws (a Get blocks only on an empty
// queue, which the next Add wakes) and comes from the witnesses every
// check runs first.
func TestReachQueue(t *testing.T) {
	for _, c := range []struct {
		name    string
		mode    Mode
		domains [][]reachClass
	}{
		{CheckModel, Mode{}, [][]reachClass{queueDomain}},
		{CheckDoneUnheld, Mode{Misuse: true}, [][]reachClass{queueMisuseDomain}},
		{CheckDrain, Mode{FullDrain: true}, [][]reachClass{queueDrainDomain}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ta := tallies{}
			s := reachSubject()
			// The witnesses run before every check's exploration: blocked
			// Gets at ShutDown come from them (the random draws reached it
			// 0 times in 100 runs: a Get blocks only on an empty queue, which
			// the next Add wakes).
			for _, steps := range queueWitnesses {
				if !fits(steps, bulkMax(c.mode)) {
					continue
				}
				checkkit.Bubble(t, func() {
					x := newMachine(s, c.mode, &checkkit.Recorder{})
					defer x.Close()
					for _, st := range steps {
						classifyQueue(ta, x, st)
						if err := x.Apply(st); err != nil {
							t.Fatalf("%s on our queue: %v", st, err)
						}
					}
				})
			}
			gen := stepGen(c.mode)
			seeded(t, 1, func(rt *rapid.T) {
				checkkit.Bubble(t, func() {
					x := newMachine(s, c.mode, &checkkit.Recorder{})
					defer x.Close()
					for range reachSteps {
						st := gen.Draw(rt, "step")
						classifyQueue(ta, x, st)
						if err := x.Apply(st); err != nil {
							rt.Fatalf("%s on our queue: %v", st, err)
						}
					}
					// Every run of the checks ends with a ShutDown.
					st := Step{Kind: wq.ShutDown}
					classifyQueue(ta, x, st)
					if err := x.Apply(st); err != nil {
						rt.Fatalf("%s on our queue: %v", st, err)
					}
				})
			})
			ta.check(t, c.name, 1, c.domains...)
		})
	}
}

// delayingDomain is the legal input domain of AddAfter (and of
// AddRateLimited, whose delay is the limiter's When) and the delaying
// machine's time steps.
var delayingDomain = []reachClass{
	{"AddAfter d=MinInt64", "the most negative delay: no overflow, added at once"},
	{"AddAfter d<0", "added at once, as Add"},
	{"AddAfter d=0", "added at once, as Add"},
	{"AddAfter d=1ns", "the smallest wait: ready at the next instant"},
	{"AddAfter 1ns<d<MaxWait", "fires before client-go's 10s heartbeat"},
	{"AddAfter d=MaxWait", "exactly the heartbeat"},
	{"AddAfter MaxWait<d<=1h", "fires only after at least one heartbeat"},
	{"AddAfter 1h<d, now+d fits", "far away but representable"},
	{"AddAfter now+d overflows", "MaxInt64 and near it: a ready time past UnixNano's range must not wrap into the past"},
	{"AddAfter key new", "a fresh wait"},
	{"AddAfter key waiting, sooner", "moves the wait earlier (client-go keeps the earlier ready time)"},
	{"AddAfter key waiting, later", "keeps the earlier ready time"},
	{"AddAfter key waiting, same time", "one entry, not two"},
	{"AddAfter key queued", "waits again, collapses when ready"},
	{"AddAfter key processing", "ready while processing: re-queued by Done"},
	{"AddAfter d<=0, key waiting", "added now; the wait stays and collapses when it fires"},
	{"AddAfter after shutdown", "ignored"},
	{"AddAfter ties another key", "two keys ready at the same instant (delaying/ties)"},
	{"Sleep past heartbeat, waiting", "the waiting loop must wake on its heartbeat and on the timer"},
	{"Tick", "sleep to exactly the next ready time"},
	{"Tick past a day", "an item asked for in more than a day comes back when its time comes"},
	{"Burst over waiting", "a heap filled out of order while it holds entries"},
}

// tieClass is delaying/ties' own class: the other machines untie.
const tieClass = "AddAfter ties another key"

// without is domain without the class named c; only is that class.
func without(domain []reachClass, c string) []reachClass {
	return slices.DeleteFunc(slices.Clone(domain), func(r reachClass) bool { return r.name == c })
}

func only(domain []reachClass, c string) []reachClass {
	return slices.DeleteFunc(slices.Clone(domain), func(r reachClass) bool { return r.name != c })
}

// rateLimitingDomain is the legal input domain of the rate-limiting
// queue's own operations.
var rateLimitingDomain = []reachClass{
	{"AddRateLimited key new", "asks the limiter, then waits"},
	{"AddRateLimited key queued", "asks the limiter even though the item is queued"},
	{"AddRateLimited key waiting", "asks again; the earlier wait wins"},
	{"AddRateLimited key processing", "ready while processing"},
	{"AddRateLimited When<=0", "added at once"},
	{"AddRateLimited now+When overflows", "a limiter at its cap answers near MaxInt64"},
	{"AddRateLimited after shutdown", "client-go still asks the limiter; nothing is added"},
}

// rateLimitingDelegateDomain is ratelimiting/delegates' own domain.
var rateLimitingDelegateDomain = []reachClass{
	{"Forget unknown", "an item the limiter never saw"},
	{"Forget known", "an item with requeues: the limiter forgets it"},
	{"Forget waiting", "Forget does not cancel a wait"},
	{"NumRequeues unknown", "0"},
	{"NumRequeues known", "the limiter's count, passed through"},
}

// classifyDelaying records the class of st on x, before it is applied.
func classifyDelaying(ta tallies, x *delayingMachine, st DStep, known map[string]bool) {
	if !x.Enabled(st) {
		return
	}
	now := time.Now()
	q := x.m.Queue()
	shut := x.m.IsShuttingDown()
	switch st.Kind {
	case DAddAfter, DAddRateLimited:
		op := "AddAfter"
		if st.Kind == DAddRateLimited {
			op = "AddRateLimited"
			known[st.Key] = true
			ta.hit(op+" after shutdown", shut)
		} else {
			ta.hit(op+" after shutdown", shut)
		}
		if shut {
			return
		}
		d := st.D
		at, waiting := x.m.ReadyAt(st.Key)
		overflow := d > 0 && now.UnixNano() > math.MaxInt64-int64(d)
		if st.Kind == DAddRateLimited {
			ta.hit(op+" When<=0", d <= 0)
			ta.hit(op+" now+When overflows", overflow)
			ta.hit(op+" key new", !waiting && !q.Dirty(st.Key) && !q.Processing(st.Key))
			ta.hit(op+" key queued", q.Dirty(st.Key) && !q.Processing(st.Key))
			ta.hit(op+" key waiting", waiting)
			ta.hit(op+" key processing", q.Processing(st.Key))
		}
		op = "AddAfter"
		ta.hit(op+" d=MinInt64", d == math.MinInt64)
		ta.hit(op+" d<0", d < 0)
		ta.hit(op+" d=0", d == 0)
		ta.hit(op+" d=1ns", d == 1)
		ta.hit(op+" 1ns<d<MaxWait", d > 1 && d < MaxWait)
		ta.hit(op+" d=MaxWait", d == MaxWait)
		ta.hit(op+" MaxWait<d<=1h", d > MaxWait && d <= time.Hour)
		ta.hit(op+" 1h<d, now+d fits", d > time.Hour && !overflow)
		ta.hit(op+" now+d overflows", overflow)
		ta.hit(op+" key new", !waiting && !q.Dirty(st.Key) && !q.Processing(st.Key))
		if d > 0 && waiting {
			ready := now.Add(d)
			ta.hit(op+" key waiting, sooner", ready.Before(at))
			ta.hit(op+" key waiting, later", ready.After(at))
			ta.hit(op+" key waiting, same time", ready.Equal(at))
		}
		ta.hit(op+" d<=0, key waiting", d <= 0 && waiting)
		ta.hit(op+" key queued", q.Dirty(st.Key) && !q.Processing(st.Key))
		ta.hit(op+" key processing", q.Processing(st.Key))
		if d > 0 {
			ready := now.Add(d)
			tie := false
			for _, e := range x.m.Waiting() {
				tie = tie || (e.Key != st.Key && e.ReadyAt.Equal(ready))
			}
			ta.hit(op+" ties another key", tie)
		}
	case DSleep:
		ta.hit("Sleep past heartbeat, waiting", st.D > MaxWait && x.m.WaitingLen() > 0)
	case DTick:
		ta.hit("Tick", true)
		next, _ := x.m.NextReadyAt()
		ta.hit("Tick past a day", time.Until(next) > 24*time.Hour)
	case DBurst:
		ta.hit("Burst over waiting", x.m.WaitingLen() > 0 && !shut)
	case DForget:
		_, waiting := x.m.ReadyAt(st.Key)
		ta.hit("Forget unknown", !known[st.Key])
		ta.hit("Forget known", known[st.Key])
		ta.hit("Forget waiting", waiting)
		delete(known, st.Key)
	case DNumRequeues:
		ta.hit("NumRequeues unknown", !known[st.Key])
		ta.hit("NumRequeues known", known[st.Key])
	}
}

// TestReachDelaying runs the delaying and rate-limiting machines on our
// queues (100 runs of 30 drawn steps, seed 27000) and counts each class of
// delayingDomain and rateLimitingDomain they reach.
//
// Measured: before, "AddAfter 1h<d, now+d fits" came 0 times in every
// machine (the delays jumped from 1h to MaxInt64-1, which saturates to
// never), so no item waited more than an hour and came back; after
// (farDelay, a month and a century among the delays, and a two-day
// horizon for the plain machine, so that Tick waits farDelay out) it comes
// 155 times in delaying/model, 121 in ratelimiting/model, and "Tick past a
// day" (0 before) 2 times in delaying/model, and in every run of its
// witnesses (delayingWitnesses). The rarest others:
// AddAfter d=MinInt64 39, key waiting, same time 48, Sleep past
// heartbeat 34 (delaying/model); Forget unknown 14, NumRequeues unknown
// 15 (ratelimiting/delegates).
func TestReachDelaying(t *testing.T) {
	for _, c := range []struct {
		name    string
		mode    DMode
		domains [][]reachClass
	}{
		{CheckDelayingModel, DMode{}, [][]reachClass{without(delayingDomain, tieClass)}},
		{CheckDelayingTies, DMode{Ties: true}, [][]reachClass{only(delayingDomain, tieClass)}},
		{CheckRateLimitingModel, DMode{RateLimited: true}, [][]reachClass{rateLimitingDomain}},
		{CheckRateLimitingDelegate, DMode{RateLimited: true, Delegates: true}, [][]reachClass{rateLimitingDelegateDomain}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ta := tallies{}
			s := reachSubject()
			gen := delayingStepGen(c.mode)
			seeded(t, 1, func(rt *rapid.T) {
				checkkit.Bubble(t, func() {
					x := newDelayingMachine(s, c.mode, &checkkit.Recorder{})
					defer x.Close()
					known := map[string]bool{}
					for range reachSteps {
						st := gen.Draw(rt, "step")
						classifyDelaying(ta, x, st, known)
						if err := x.Apply(st); err != nil {
							rt.Fatalf("%s on our queue: %v", st, err)
						}
					}
				})
			})
			ta.check(t, c.name, 1, c.domains...)
		})
	}
}
