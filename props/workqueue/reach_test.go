package workqueue

// The reach of the queue machines' generators (issue 27, class 1): for
// every operation of the plain, delaying and rate-limiting machines, the
// inputs the API allows, classified against the live state the operation
// meets, counted over ordinary draws with fixed seeds and held to a floor
// of one, as checkkit's sizes_test does for size classes. The tables below
// are the legal input domains; each class says why it matters.

import (
	"math"
	"slices"
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

// queueDomain is the legal input domain of the plain queue's operations,
// as the state before the call classifies them.
var queueDomain = []checkkit.ReachClass{
	{Name: "Add new", Why: "the item becomes dirty and is pushed: the common path"},
	{Name: "Add queued", Why: "collapses: a queue that pushes again hands the item out twice"},
	{Name: "Add processing", Why: "marks it dirty without pushing: Done must queue it"},
	{Name: "Add processing+dirty", Why: "a second re-add while processing must still come back once"},
	{Name: "Add after shutdown", Why: "ignored: nothing may be queued or counted"},
	{Name: "Get empty", Why: "blocks until an Add, a re-queueing Done or shutdown"},
	{Name: "Get non-empty", Why: "hands out the FIFO head at once"},
	{Name: "Get after shutdown", Why: "returns shutdown once the queue is empty, items before that"},
	{Name: "Done held", Why: "the item leaves the queue's memory"},
	{Name: "Done held+dirty", Why: "re-queues the item at the FIFO's tail and wakes a Get"},
	{Name: "Done after shutdown", Why: "a held item finished after ShutDown must not re-queue"},
	{Name: "ShutDown queued", Why: "wakes nothing that has an item; Get still hands out the queued ones in client-go"},
	{Name: "ShutDown processing", Why: "held items stay held; their Done still works"},
	{Name: "ShutDown Gets blocked", Why: "every blocked Get must wake with shutdown"},
	{Name: "ShutDownWithDrain idle", Why: "returns at once"},
	{Name: "ShutDownWithDrain processing", Why: "waits for the held items' Done"},
	{Name: "Len 0", Why: "the empty queue"},
	{Name: "Len 1-16", Why: "inside the FIFO ring's first capacity"},
	{Name: "Len 17-64", Why: "past the ring's first growth"},
	{Name: "Len 65-1024", Why: "past the ring's shrink floor"},
	{Name: "Len >1024", Why: "past the informer's 1024 and the ring's later doublings"},
	{Name: "Burst into non-empty", Why: "growth while the FIFO holds items (and may wrap)"},
	{Name: "Drain past empty", Why: "a drain asked for more items than queued stops at empty"},
	{Name: "Steady wraps", Why: "turns the FIFO over: reads and writes wrap the ring's end"},
}

// queueMisuseDomain is queue/done-unheld's own domain: Done of an item the
// caller does not hold.
var queueMisuseDomain = []checkkit.ReachClass{
	{Name: "Done unknown", Why: "an item the queue never saw: nothing changes"},
	{Name: "Done queued, not held", Why: "an item queued but not handed out: it must stay queued, once"},
	{Name: "Done after shutdown, unheld", Why: "misuse after shutdown changes nothing either"},
}

// queueDrainDomain is queue/drain's own domain.
var queueDrainDomain = []checkkit.ReachClass{
	{Name: "ShutDownWithDrain queued", Why: "waits until every queued item is handed out and Done"},
	{Name: "ShutDownWithDrain processing+dirty", Why: "a re-added item must be handed out and Done again before the drain returns"},
	{Name: "Get during drain", Why: "items queued before the drain are still handed out"},
	{Name: "ShutDown drain in flight", Why: "releases a drain that waits"},
}

// reachSteps is how many steps each reach run draws: rapid.Repeat's mean.
const reachSteps = 30

// classifyQueue records the class of st on x, before it is applied.
func classifyQueue(ta checkkit.Tally, x *machine, st Step) {
	if !x.Enabled(st) {
		return
	}
	m := &x.m
	shut := m.IsShuttingDown()
	n := m.Len()
	switch {
	case n == 0:
		ta.Hit("Len 0", true)
	case n <= 16:
		ta.Hit("Len 1-16", true)
	case n <= 64:
		ta.Hit("Len 17-64", true)
	case n <= 1024:
		ta.Hit("Len 65-1024", true)
	default:
		ta.Hit("Len >1024", true)
	}
	blocked := 0
	for i := range x.workers {
		if x.workers[i].getting != nil {
			blocked++
		}
	}
	switch st.Bulk {
	case burst:
		ta.Hit("Burst into non-empty", n > 0 && !shut)
		return
	case drain:
		ta.Hit("Drain past empty", st.N > n)
		ta.Hit("Get during drain", x.drain != nil && n > 0)
		return
	case steady:
		ta.Hit("Steady wraps", !shut && st.N > 16)
		return
	}
	switch st.Kind {
	case wq.Add:
		dirty, proc := m.Dirty(st.Key), m.Processing(st.Key)
		ta.Hit("Add after shutdown", shut)
		if shut {
			return
		}
		ta.Hit("Add new", !dirty && !proc)
		ta.Hit("Add queued", dirty && !proc)
		ta.Hit("Add processing", proc && !dirty)
		ta.Hit("Add processing+dirty", proc && dirty)
	case wq.Get:
		ta.Hit("Get after shutdown", shut)
		ta.Hit("Get empty", n == 0 && !shut)
		ta.Hit("Get non-empty", n > 0 && !shut)
		ta.Hit("Get during drain", x.drain != nil && n > 0)
	case wq.Done:
		if st.Key != "" {
			ta.Hit("Done after shutdown, unheld", shut)
			ta.Hit("Done unknown", !m.Dirty(st.Key) && !m.Processing(st.Key))
			ta.Hit("Done queued, not held", m.Dirty(st.Key) && !m.Processing(st.Key))
			return
		}
		k := x.workers[st.Worker].held
		ta.Hit("Done after shutdown", shut)
		ta.Hit("Done held", !m.Dirty(k))
		ta.Hit("Done held+dirty", m.Dirty(k))
	case wq.ShutDown:
		ta.Hit("ShutDown queued", n > 0 && !shut)
		ta.Hit("ShutDown processing", len(m.ProcessingKeys()) > 0 && !shut)
		ta.Hit("ShutDown Gets blocked", blocked > 0 && !shut)
		ta.Hit("ShutDown drain in flight", x.drain != nil)
	case wq.ShutDownWithDrain:
		proc := m.ProcessingKeys()
		dirty := slices.ContainsFunc(proc, m.Dirty)
		ta.Hit("ShutDownWithDrain idle", n == 0 && len(proc) == 0)
		ta.Hit("ShutDownWithDrain processing", len(proc) > 0)
		ta.Hit("ShutDownWithDrain queued", n > 0)
		ta.Hit("ShutDownWithDrain processing+dirty", dirty)
	}
}

// TestReachQueue runs queue/model, queue/done-unheld and queue/drain's
// machines on our queue (their witnesses, then 100 runs of 30 drawn steps
// and the closing ShutDown, seed 27000) and counts each class of
// queueDomain (and the misuse and drain domains) they reach.
//
// Measured: every class comes from the random draws (queue/model: Add
// queued 641, Add processing+dirty 210, Get empty 38, Done held+dirty 61,
// Len >1024 110, steady wraps 48; done-unheld: Done unknown 17, Done
// queued, not held 19; drain: ShutDownWithDrain queued 27,
// processing+dirty 16, ShutDown drain in flight 27) but one: ShutDown with
// Gets blocked came 0 times in the draws (a Get blocks only on an empty
// queue, which the next Add wakes) and comes from the witnesses every
// check runs first.
func TestReachQueue(t *testing.T) {
	for _, c := range []struct {
		name    string
		mode    Mode
		domains [][]checkkit.ReachClass
	}{
		{CheckModel, Mode{}, [][]checkkit.ReachClass{queueDomain}},
		{CheckDoneUnheld, Mode{Misuse: true}, [][]checkkit.ReachClass{queueMisuseDomain}},
		{CheckDrain, Mode{FullDrain: true}, [][]checkkit.ReachClass{queueDrainDomain}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ta := checkkit.Tally{}
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
			checkkit.Seeded(t, 1, func(rt *rapid.T) {
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
			ta.Check(t, c.name, 1, c.domains...)
		})
	}
}

// delayingDomain is the legal input domain of AddAfter (and of
// AddRateLimited, whose delay is the limiter's When) and the delaying
// machine's time steps.
var delayingDomain = []checkkit.ReachClass{
	{Name: "AddAfter d=MinInt64", Why: "the most negative delay: no overflow, added at once"},
	{Name: "AddAfter d<0", Why: "added at once, as Add"},
	{Name: "AddAfter d=0", Why: "added at once, as Add"},
	{Name: "AddAfter d=1ns", Why: "the smallest wait: ready at the next instant"},
	{Name: "AddAfter 1ns<d<MaxWait", Why: "fires before client-go's 10s heartbeat"},
	{Name: "AddAfter d=MaxWait", Why: "exactly the heartbeat"},
	{Name: "AddAfter MaxWait<d<=1h", Why: "fires only after at least one heartbeat"},
	{Name: "AddAfter 1h<d, now+d fits", Why: "far away but representable"},
	{Name: "AddAfter now+d overflows", Why: "MaxInt64 and near it: a ready time past UnixNano's range must not wrap into the past"},
	{Name: "AddAfter key new", Why: "a fresh wait"},
	{Name: "AddAfter key waiting, sooner", Why: "moves the wait earlier (client-go keeps the earlier ready time)"},
	{Name: "AddAfter key waiting, later", Why: "keeps the earlier ready time"},
	{Name: "AddAfter key waiting, same time", Why: "one entry, not two"},
	{Name: "AddAfter key queued", Why: "waits again, collapses when ready"},
	{Name: "AddAfter key processing", Why: "ready while processing: re-queued by Done"},
	{Name: "AddAfter d<=0, key waiting", Why: "added now; the wait stays and collapses when it fires"},
	{Name: "AddAfter after shutdown", Why: "ignored"},
	{Name: "AddAfter ties another key", Why: "two keys ready at the same instant (delaying/ties)"},
	{Name: "Sleep past heartbeat, waiting", Why: "the waiting loop must wake on its heartbeat and on the timer"},
	{Name: "Tick", Why: "sleep to exactly the next ready time"},
	{Name: "Tick past a day", Why: "an item asked for in more than a day comes back when its time comes"},
	{Name: "Burst over waiting", Why: "a heap filled out of order while it holds entries"},
}

// tieClass is delaying/ties' own class: the other machines untie.
const tieClass = "AddAfter ties another key"

// without is domain without the class named c; only is that class.
func without(domain []checkkit.ReachClass, c string) []checkkit.ReachClass {
	return slices.DeleteFunc(slices.Clone(domain), func(r checkkit.ReachClass) bool { return r.Name == c })
}

func only(domain []checkkit.ReachClass, c string) []checkkit.ReachClass {
	return slices.DeleteFunc(slices.Clone(domain), func(r checkkit.ReachClass) bool { return r.Name != c })
}

// rateLimitingDomain is the legal input domain of the rate-limiting
// queue's own operations.
var rateLimitingDomain = []checkkit.ReachClass{
	{Name: "AddRateLimited key new", Why: "asks the limiter, then waits"},
	{Name: "AddRateLimited key queued", Why: "asks the limiter even though the item is queued"},
	{Name: "AddRateLimited key waiting", Why: "asks again; the earlier wait wins"},
	{Name: "AddRateLimited key processing", Why: "ready while processing"},
	{Name: "AddRateLimited When<=0", Why: "added at once"},
	{Name: "AddRateLimited now+When overflows", Why: "a limiter at its cap answers near MaxInt64"},
	{Name: "AddRateLimited after shutdown", Why: "client-go still asks the limiter; nothing is added"},
}

// rateLimitingDelegateDomain is ratelimiting/delegates' own domain.
var rateLimitingDelegateDomain = []checkkit.ReachClass{
	{Name: "Forget unknown", Why: "an item the limiter never saw"},
	{Name: "Forget known", Why: "an item with requeues: the limiter forgets it"},
	{Name: "Forget waiting", Why: "Forget does not cancel a wait"},
	{Name: "NumRequeues unknown", Why: "0"},
	{Name: "NumRequeues known", Why: "the limiter's count, passed through"},
}

// classifyDelaying records the class of st on x, before it is applied.
func classifyDelaying(ta checkkit.Tally, x *delayingMachine, st dStep, known map[string]bool) {
	if !x.Enabled(st) {
		return
	}
	now := time.Now()
	q := x.m.Queue()
	shut := x.m.IsShuttingDown()
	switch st.Kind {
	case dAddAfter, dAddRateLimited:
		op := "AddAfter"
		if st.Kind == dAddRateLimited {
			op = "AddRateLimited"
			known[st.Key] = true
			ta.Hit(op+" after shutdown", shut)
		} else {
			ta.Hit(op+" after shutdown", shut)
		}
		if shut {
			return
		}
		d := st.D
		at, waiting := x.m.ReadyAt(st.Key)
		overflow := d > 0 && now.UnixNano() > math.MaxInt64-int64(d)
		if st.Kind == dAddRateLimited {
			ta.Hit(op+" When<=0", d <= 0)
			ta.Hit(op+" now+When overflows", overflow)
			ta.Hit(op+" key new", !waiting && !q.Dirty(st.Key) && !q.Processing(st.Key))
			ta.Hit(op+" key queued", q.Dirty(st.Key) && !q.Processing(st.Key))
			ta.Hit(op+" key waiting", waiting)
			ta.Hit(op+" key processing", q.Processing(st.Key))
		}
		op = "AddAfter"
		ta.Hit(op+" d=MinInt64", d == math.MinInt64)
		ta.Hit(op+" d<0", d < 0)
		ta.Hit(op+" d=0", d == 0)
		ta.Hit(op+" d=1ns", d == 1)
		ta.Hit(op+" 1ns<d<MaxWait", d > 1 && d < maxWait)
		ta.Hit(op+" d=MaxWait", d == maxWait)
		ta.Hit(op+" MaxWait<d<=1h", d > maxWait && d <= time.Hour)
		ta.Hit(op+" 1h<d, now+d fits", d > time.Hour && !overflow)
		ta.Hit(op+" now+d overflows", overflow)
		ta.Hit(op+" key new", !waiting && !q.Dirty(st.Key) && !q.Processing(st.Key))
		if d > 0 && waiting {
			ready := now.Add(d)
			ta.Hit(op+" key waiting, sooner", ready.Before(at))
			ta.Hit(op+" key waiting, later", ready.After(at))
			ta.Hit(op+" key waiting, same time", ready.Equal(at))
		}
		ta.Hit(op+" d<=0, key waiting", d <= 0 && waiting)
		ta.Hit(op+" key queued", q.Dirty(st.Key) && !q.Processing(st.Key))
		ta.Hit(op+" key processing", q.Processing(st.Key))
		if d > 0 {
			ready := now.Add(d)
			tie := false
			for _, e := range x.m.Waiting() {
				tie = tie || (e.Key != st.Key && e.ReadyAt.Equal(ready))
			}
			ta.Hit(op+" ties another key", tie)
		}
	case dSleep:
		ta.Hit("Sleep past heartbeat, waiting", st.D > maxWait && x.m.WaitingLen() > 0)
	case dTick:
		ta.Hit("Tick", true)
		next, _ := x.m.NextReadyAt()
		ta.Hit("Tick past a day", time.Until(next) > 24*time.Hour)
	case dBurst:
		ta.Hit("Burst over waiting", x.m.WaitingLen() > 0 && !shut)
	case dForget:
		_, waiting := x.m.ReadyAt(st.Key)
		ta.Hit("Forget unknown", !known[st.Key])
		ta.Hit("Forget known", known[st.Key])
		ta.Hit("Forget waiting", waiting)
		delete(known, st.Key)
	case dNumRequeues:
		ta.Hit("NumRequeues unknown", !known[st.Key])
		ta.Hit("NumRequeues known", known[st.Key])
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
		mode    dMode
		domains [][]checkkit.ReachClass
	}{
		{CheckDelayingModel, dMode{}, [][]checkkit.ReachClass{without(delayingDomain, tieClass)}},
		{CheckDelayingTies, dMode{Ties: true}, [][]checkkit.ReachClass{only(delayingDomain, tieClass)}},
		{CheckRateLimitingModel, dMode{RateLimited: true}, [][]checkkit.ReachClass{rateLimitingDomain}},
		{CheckRateLimitingDelegate, dMode{RateLimited: true, Delegates: true}, [][]checkkit.ReachClass{rateLimitingDelegateDomain}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ta := checkkit.Tally{}
			s := reachSubject()
			gen := delayingStepGen(c.mode)
			checkkit.Seeded(t, 1, func(rt *rapid.T) {
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
			ta.Check(t, c.name, 1, c.domains...)
		})
	}
}
