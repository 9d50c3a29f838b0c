package workqueue

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/anishathalye/porcupine"
	"github.com/kverify/kverify/linearizability"
	"github.com/kverify/kverify/props/checkkit"
	wq "github.com/kverify/kverify/spec/workqueue"
	"k8s.io/utils/clock"
)

// CheckRace is the plain queue's race probe.
const CheckRace = "queue/race"

// op is one call of a race round on behalf of a recording client.
type op func(c *linearizability.Client) effect

// effect is what a call changed in what the round's workers hold: the item
// a Get handed out, or the item a Done gave back.
type effect struct{ got, released string }

func add(k string) op {
	return func(c *linearizability.Client) effect { c.Add(k); return effect{} }
}

func done(k string) op {
	return func(c *linearizability.Client) effect { c.Done(k); return effect{released: k} }
}

func get(c *linearizability.Client) effect {
	k, shut := c.Get()
	if shut {
		return effect{}
	}
	return effect{got: k}
}

func length(c *linearizability.Client) effect { c.Len(); return effect{} }

func shutDownOp(c *linearizability.Client) effect { c.ShutDown(); return effect{} }

// racePair is two calls on the same item(s) that race in every round,
// after a setup that puts the queue in the state where their windows are.
// a runs on the probe's goroutine and must not block; b runs on the
// racer's and must return once a has (the setups see to it): a b still
// blocked after both is a violation. A pair that shuts the queue down
// needs a fresh queue per round; the others run a batch of rounds on one.
type racePair struct {
	name  string
	setup []op
	a, b  op
	shuts bool
}

// racePairs are the pairs of operations that touch the same item. Every
// round's history (setup, the race, and the drain after it) is checked
// against the whole-queue model with porcupine.
var racePairs = []racePair{
	{name: "Add/Done of a held item", setup: []op{add("x"), get}, a: add("x"), b: done("x")},
	{name: "Done/Add of a held item", setup: []op{add("x"), get}, a: done("x"), b: add("x")},
	{name: "Add/Done of a held, re-added item", setup: []op{add("x"), get, add("x")}, a: add("x"), b: done("x")},
	{name: "Done/Get of a re-added item", setup: []op{add("x"), get, add("x")}, a: done("x"), b: get},
	{name: "Done/Done of two re-added items", setup: []op{add("x"), add("y"), get, get, add("x"), add("y")}, a: done("x"), b: done("y")},
	{name: "Done/Add of another item", setup: []op{add("x"), get, add("x")}, a: done("x"), b: add("y")},
	{name: "Add/Get on an empty queue", a: add("x"), b: get},
	{name: "Get/Add of a queued item", setup: []op{add("x"), add("y")}, a: get, b: add("x")},
	{name: "Get/Get of two items", setup: []op{add("x"), add("y")}, a: get, b: get},
	{name: "Add/Add of one item", a: add("x"), b: add("x")},
	{name: "Add/Add of two items", setup: []op{add("y"), get}, a: add("x"), b: add("y")},
	{name: "Len/Add", setup: []op{add("y")}, a: length, b: add("x")},
	{name: "Len/Get", setup: []op{add("x"), add("y")}, a: length, b: get},
	{name: "ShutDown/Get on an empty queue", a: shutDownOp, b: get, shuts: true},
	{name: "ShutDown/Get of a queued item", setup: []op{add("x")}, a: shutDownOp, b: get, shuts: true},
	{name: "Add/ShutDown", a: add("x"), b: shutDownOp, shuts: true},
}

// drainRounds is how many hot rounds the drain probes race
// ShutDownWithDrain with the last Done: two per batch of the pairs' rounds,
// as many as they had when they ran between the batches.
const drainRounds = 2 * checkkit.RaceRounds / raceBatch

// raceBatch is how many rounds of a pair share one queue (and one
// linearizability check) when the pair does not shut it down.
const raceBatch = 50

// raceCheck runs every pair for checkkit.RaceRounds rounds (and more while
// cfg.Budget lasts), then the drain probes.
func raceCheck(s Subject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, cfg checkkit.Config) error {
		sched := checkkit.NewRaceSchedule(cfg, len(racePairs), checkkit.RaceRounds)
		defer sched.Stop()
		inconclusive := 0
		err := checkkit.InBubble(t, func() error {
			return sched.Loop(t, raceBatch, func(r *checkkit.Racer, round int) error {
				for _, p := range racePairs {
					if !sched.Runs(p.name) {
						continue
					}
					if err := raceRounds(s, sched, r, p, round, cfg, &inconclusive); err != nil {
						return err
					}
				}
				return nil
			})
		})
		if err == nil && !s.Profile.DrainIsShutDown { // a drain that waits for nothing has no race
			// The drain probes come after every pair's rounds, with a
			// schedule of their own: a drain that hangs or spins (the
			// watchdog then ends the check) costs no pair its rounds.
			drains := checkkit.NewRaceSchedule(cfg, 1, drainRounds)
			defer drains.Stop()
			err = checkkit.InBubble(t, func() error {
				return drains.Loop(t, 2, func(r *checkkit.Racer, round int) error {
					if !drains.Runs(drainPair) {
						return nil
					}
					return drainRace(s, drains, r, round, cfg)
				})
			})
		}
		if inconclusive > 0 {
			t.Logf("%d batch(es) of rounds had an inconclusive search (out of %d steps): no verdict on those", inconclusive, linearSteps)
		}
		return err
	}
}

// raceRounds runs rounds [first, first+raceBatch) of p: on one queue, or
// on a fresh queue each for a pair that shuts it down.
func raceRounds(s Subject, sched *checkkit.RaceSchedule, r *checkkit.Racer, p racePair, first int, cfg checkkit.Config, inconclusive *int) error {
	if p.shuts {
		for round := first; round < first+raceBatch; round++ {
			if err := raceOn(s, sched, r, p, round, round+1, cfg, inconclusive); err != nil {
				return err
			}
		}
		return nil
	}
	return raceOn(s, sched, r, p, first, first+raceBatch, cfg, inconclusive)
}

// raceOn runs rounds [from, to) of p on one fresh queue. A round is the
// setup from client 0, a and b from clients 1 and 2 at the same instant,
// then client 0 marks Done what is held and drains the queue; the queue is
// shut down and drained at the end. The whole history must be
// linearizable against the whole-queue model; a search that runs out of
// its step budget gives no verdict and is counted in inconclusive.
func raceOn(s Subject, sched *checkkit.RaceSchedule, r *checkkit.Racer, p racePair, from, to int, cfg checkkit.Config, inconclusive *int) error {
	q := s.New(Deps{Clock: clock.RealClock{}})
	// One ShutDown per queue: a pair that shuts down has done it. A second
	// is the lifecycle check's; a subject that panics on it is judged here
	// on the rest.
	shut := p.shuts
	defer func() {
		if !shut {
			q.ShutDown()
		}
	}()
	rec := &linearizability.Recorder{}
	c0, ca, cb := rec.Client(q, 0), rec.Client(q, 1), rec.Client(q, 2)
	var held []string
	apply := func(e effect) {
		if e.got != "" {
			held = append(held, e.got)
		}
		if i := slices.Index(held, e.released); e.released != "" && i >= 0 {
			held = slices.Delete(held, i, i+1)
		}
	}
	// drain marks Done what is held and takes what is queued. It stops at
	// a Get that reports shutdown (a profile may keep Len above 0 then),
	// and gives up, as the check's own loop, on a queue that hands out
	// items for ever.
	drain := func(round int) error {
		return checkkit.Bounded(checkkit.DrainLimit, func() string {
			return fmt.Sprintf("draining the queue after %s: Len is still %d", sched.At(p.name, round), c0.Len())
		}, func() (bool, error) {
			for len(held) > 0 {
				k := held[0]
				held = held[1:]
				c0.Done(k)
			}
			if s.Profile.AddHandedOver {
				// Len counts the queues, not the items the queue's own
				// goroutines carry between them: let them settle, or
				// the next round's setup finds a leftover in flight
				// (its Get returns y, and the pair's Done(x) is of an
				// item nobody holds).
				r.Settle()
			}
			if c0.Len() == 0 {
				return true, nil
			}
			e := get(c0)
			apply(e)
			return e.got == "", nil
		})
	}
	var starts []int64 // the logical time each round started
	for round := from; round < to; round++ {
		starts = append(starts, rec.Now())
		for _, o := range p.setup {
			apply(o(c0))
		}
		at := sched.At(p.name, round)
		cfg.Progress.Op(at.String())
		var ea, eb effect
		blocked, err := r.RaceChecked(cfg.Progress, at, func() { ea = p.a(ca) }, func() { eb = p.b(cb) })
		if err != nil {
			return err
		}
		if blocked {
			// b blocks although a has returned: the setups make every b
			// return then. Release it before reporting.
			if !shut {
				c0.ShutDown()
				shut = true
			}
			r.Settle()
			return raceViolation(at, rec.History(), GLiveness, "%s is still blocked after %s returned",
				linearizability.Describe(lastCall(rec, 2)), linearizability.Describe(lastCall(rec, 1)))
		}
		apply(ea)
		apply(eb)
		if err := drain(round); err != nil {
			return err
		}
	}
	if !shut {
		c0.ShutDown()
		shut = true
	}
	if err := checkkit.Bounded(checkkit.DrainLimit, func() string {
		return fmt.Sprintf("taking what is left after %s's rounds and ShutDown: Get still hands out items", p.name)
	}, func() (bool, error) {
		e := get(c0)
		if e.got == "" {
			return true, nil
		}
		c0.Done(e.got)
		return false, nil
	}); err != nil {
		return err
	}
	h := rec.History()
	var res porcupine.CheckResult
	cfg.Progress.Analyse(func() { res, _ = linearizability.CheckSteps(linearizability.QueueModelFor(s.Profile), h, linearSteps) })
	if res == porcupine.Unknown {
		*inconclusive++
		return nil
	}
	if res != porcupine.Ok {
		// Each round starts and ends with an empty queue and nothing
		// held: report the first round that fails on its own.
		var first int
		var sub []porcupine.Operation
		cfg.Progress.Analyse(func() { first, sub = firstFailingRound(s.Profile, h, starts) })
		return raceViolation(sched.At(p.name, from+first), sub, GAtomic, "the history has no linearization: some call did not take effect atomically (result %s)", res)
	}
	return nil
}

// lastCall is client's last recorded call.
func lastCall(rec *linearizability.Recorder, client int) porcupine.Operation {
	h := rec.History()
	for i := len(h) - 1; i >= 0; i-- {
		if h[i].ClientId == client {
			return h[i]
		}
	}
	return porcupine.Operation{}
}

// firstFailingRound splits a batch's history at the rounds' start times and
// returns the first round whose part is not linearizable on its own (the
// last part also holds the final shutdown and drain), with its part. A
// part whose search runs out of steps is passed over: no verdict.
func firstFailingRound(p wq.Profile, h []porcupine.Operation, starts []int64) (int, []porcupine.Operation) {
	for i := range starts {
		var part []porcupine.Operation
		for _, o := range h {
			if o.Call >= starts[i] && (i+1 == len(starts) || o.Call < starts[i+1]) {
				part = append(part, o)
			}
		}
		if res, _ := linearizability.CheckSteps(linearizability.QueueModelFor(p), part, linearSteps); res == porcupine.Illegal {
			return i, part
		}
	}
	return 0, h
}

// raceViolation reports a round's history as the counterexample.
func raceViolation(at checkkit.RaceAt, h []porcupine.Operation, guarantee, format string, args ...any) error {
	var b strings.Builder
	for _, o := range h {
		fmt.Fprintf(&b, "\n    client %d [%d,%d] %s", o.ClientId, o.Call, o.Return, linearizability.Describe(o))
	}
	return at.Broke(guarantee, "%s; history (client 0 sets up and drains, clients 1 and 2 race; [call, return] in logical time):%s",
		fmt.Sprintf(format, args...), b.String())
}

// drainPair names drainRace's pair.
const drainPair = "ShutDownWithDrain/Done"

// drainRace races ShutDownWithDrain with the Done (or the Get and Done)
// that completes the work: the drain must return once the last item is
// Done.
func drainRace(s Subject, sched *checkkit.RaceSchedule, r *checkkit.Racer, round int, cfg checkkit.Config) error {
	for i, queued := range []bool{false, true} {
		round := round + i
		q := s.New(Deps{Clock: clock.RealClock{}})
		q.Add("x")
		k, _ := q.Get()
		if queued {
			q.Add("y")
		}
		work := func() {
			q.Done(k)
			if queued {
				y, _ := q.Get()
				q.Done(y)
			}
		}
		at := sched.At(drainPair, round)
		cfg.Progress.Op(at.String())
		r.Race(at.Offset, work, q.ShutDownWithDrain)
		blocked := r.Pending() && r.Settle()
		q.ShutDown()
		if blocked {
			r.Settle()
			what := ""
			if queued {
				what = " and the queued y handed out and marked Done"
			}
			return at.Broke(GDrain, "ShutDownWithDrain is still blocked after %q was marked Done%s, with nothing queued or processing", k, what)
		}
	}
	return nil
}
