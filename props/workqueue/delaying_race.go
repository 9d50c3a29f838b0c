package workqueue

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kverify/kverify/props/checkkit"
	"github.com/kverify/kverify/spec/delaying"
	wq "github.com/kverify/kverify/spec/workqueue"
	"k8s.io/utils/clock"
)

// CheckDelayingRace is the delaying queue's race probe.
const CheckDelayingRace = "delaying/race"

// delayingCall is one call of a delaying race round: AddAfter(Key, D), Add(Key),
// Get, Len or ShutDown.
type delayingCall struct {
	kind dKind
	key  string
	d    time.Duration
}

func (c delayingCall) String() string { return dStep{Kind: c.kind, Key: c.key, D: c.d}.String() }

// do runs c on the subject; Get's item (or "shutdown") and Len's count
// come back as the result.
func (c delayingCall) do(q Delaying) string {
	switch c.kind {
	case dAddAfter:
		q.AddAfter(c.key, c.d)
	case dAdd:
		q.Add(c.key)
	case dGet:
		k, shut := q.Get()
		return fmtResult(getResult{k, shut})
	case dLen:
		return fmt.Sprint(q.Len())
	case dShutDown:
		q.ShutDown()
	}
	return ""
}

// apply runs c on the model at time now; it reports false for a Get the
// model cannot return yet.
func (c delayingCall) apply(m *delaying.Model, now time.Time) (string, bool) {
	switch c.kind {
	case dAddAfter:
		m.ApplyAddAfter(c.key, c.d, now)
	case dAdd:
		m.Apply(wq.Op{Kind: wq.Add, Key: c.key})
	case dGet:
		if !m.Enabled(wq.Op{Kind: wq.Get}) {
			return "", false
		}
		out := m.Apply(wq.Op{Kind: wq.Get})
		return fmtResult(getResult{out.Key, out.Shutdown}), true
	case dLen:
		return fmt.Sprint(m.Queue().Len()), true
	case dShutDown:
		m.Apply(wq.Op{Kind: wq.ShutDown})
	}
	return "", true
}

// delayingRacePair races a (on the probe's goroutine, never blocking) with b (on
// the racer's, which must return once a has), after setup. With atFire, the
// race starts at the instant the waiting loop moves the setup's first
// AddAfter, so that b runs against the loop instead of a: a is then only a
// Sleep to that instant.
type delayingRacePair struct {
	name   string
	setup  []delayingCall
	a, b   delayingCall
	atFire bool
}

var delayingRacePairs = []delayingRacePair{
	{name: "AddAfter(x,0)/Get", a: delayingCall{kind: dAddAfter, key: "x"}, b: delayingCall{kind: dGet}},
	{name: "AddAfter/AddAfter of one item", a: delayingCall{kind: dAddAfter, key: "x", d: 2 * time.Second}, b: delayingCall{kind: dAddAfter, key: "x", d: time.Second}},
	{name: "AddAfter/AddAfter of a waiting item", setup: []delayingCall{{kind: dAddAfter, key: "x", d: 3 * time.Second}},
		a: delayingCall{kind: dAddAfter, key: "x", d: 2 * time.Second}, b: delayingCall{kind: dAddAfter, key: "x", d: time.Second}},
	{name: "AddAfter/AddAfter of two items", setup: []delayingCall{{kind: dAddAfter, key: "w", d: 2 * time.Second}},
		a: delayingCall{kind: dAddAfter, key: "x", d: time.Second}, b: delayingCall{kind: dAddAfter, key: "y", d: time.Second + 1}},
	{name: "AddAfter(x,0)/AddAfter(x,0)", a: delayingCall{kind: dAddAfter, key: "x"}, b: delayingCall{kind: dAddAfter, key: "x"}},
	{name: "AddAfter/Add of one item", a: delayingCall{kind: dAddAfter, key: "x", d: time.Second}, b: delayingCall{kind: dAdd, key: "x"}},
	{name: "Len/AddAfter(x,0)", setup: []delayingCall{{kind: dAdd, key: "y"}}, a: delayingCall{kind: dLen}, b: delayingCall{kind: dAddAfter, key: "x"}},
	{name: "AddAfter/ShutDown", setup: []delayingCall{{kind: dAddAfter, key: "w", d: time.Second}},
		a: delayingCall{kind: dAddAfter, key: "x", d: time.Second}, b: delayingCall{kind: dShutDown}},
	{name: "loop move/AddAfter of the item", setup: []delayingCall{{kind: dAddAfter, key: "x", d: time.Second}},
		b: delayingCall{kind: dAddAfter, key: "x", d: time.Second}, atFire: true},
	{name: "loop move/Get", setup: []delayingCall{{kind: dAddAfter, key: "x", d: time.Second}},
		b: delayingCall{kind: dGet}, atFire: true},
	{name: "loop move/AddAfter of another item", setup: []delayingCall{{kind: dAddAfter, key: "x", d: time.Second}, {kind: dAddAfter, key: "y", d: 2 * time.Second}},
		b: delayingCall{kind: dAddAfter, key: "z", d: time.Millisecond}, atFire: true},
}

// delayingRaceCheck runs every pair for checkkit.RaceRounds/2 rounds (more
// while cfg.Budget lasts): each round runs in fake time, so a round costs
// more than a plain queue's.
func delayingRaceCheck(s Subject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, cfg checkkit.Config) error {
		sched := checkkit.NewRaceSchedule(cfg, len(delayingRacePairs), checkkit.RaceRounds/2)
		defer sched.Stop()
		return checkkit.InBubble(t, func() error {
			return sched.Loop(t, 1, func(r *checkkit.Racer, round int) error {
				for _, p := range delayingRacePairs {
					if !sched.Runs(p.name) {
						continue
					}
					if err := delayingRaceRound(s, r, p, sched.At(p.name, round), cfg); err != nil {
						return err
					}
				}
				return nil
			})
		})
	}
}

// delayingRaceRound runs one round of p on a fresh queue and compares what the
// subject does afterwards with both serial orders of a and b: Len at every
// ready time and 1ns before it, then the order in which the items come out.
func delayingRaceRound(s Subject, r *checkkit.Racer, p delayingRacePair, at checkkit.RaceAt, cfg checkkit.Config) error {
	cfg.Progress.Op(at.String())
	q := s.NewDelaying(Deps{Clock: clock.RealClock{}})
	defer func() {
		r.Park()
		stop(s.Profile, q)
		synctest.Wait()
	}()
	m := delaying.New(s.Profile)
	for _, c := range p.setup {
		c.do(q)
		c.apply(&m, time.Now())
	}
	r.Park()
	synctest.Wait() // the loop has taken in the setup
	var ra, rb string
	a := func() { ra = p.a.do(q) }
	if p.atFire {
		next, _ := m.NextReadyAt()
		time.Sleep(time.Until(next)) // the loop wakes at the same instant
		a = func() {}
	}
	now := time.Now()
	b := func() { rb = p.b.do(q) }
	if at.Round%4 >= 2 && !p.atFire && p.b.kind != dGet {
		a, b = b, a // neither blocks: the calls also trade goroutines
	}
	blocked, err := r.RaceChecked(cfg.Progress, at, a, b)
	if err != nil {
		return err
	}
	if blocked {
		stop(s.Profile, q)
		r.Settle()
		return at.Broke(GLiveness, "%v is still blocked after %v returned", p.b, p.a)
	}
	r.Park()
	// The serial orders the model allows; at the fire instant the loop's
	// move stands in for a.
	type cand struct {
		m      delaying.Model
		ra, rb string
	}
	var cands []cand
	for _, bFirst := range []bool{false, true} {
		c := cand{m: m.Clone()}
		ok := true
		runA := func() {
			if p.atFire {
				c.m.ApplyAdvance(now)
				return
			}
			var okA bool
			c.ra, okA = p.a.apply(&c.m, now)
			ok = ok && okA
		}
		runB := func() {
			var okB bool
			c.rb, okB = p.b.apply(&c.m, now)
			ok = ok && okB
		}
		if bFirst {
			runB()
			runA()
		} else {
			runA()
			runB()
		}
		if ok {
			cands = append(cands, c)
		}
	}
	var ms []delaying.Model
	for _, c := range cands {
		ms = append(ms, c.m)
	}
	ts := readyTimes(ms)
	got := fmt.Sprintf("a=%s b=%s; %s", ra, rb, observeSubject(q, ts))
	var wants []string
	for _, c := range cands {
		w := fmt.Sprintf("a=%s b=%s; %s", c.ra, c.rb, observeModel(c.m, ts))
		if w == got {
			return nil
		}
		wants = append(wants, w)
	}
	return at.Broke(GAtomic, "after setup %v, %v raced with %v at t0+%v; the subject gave\n    %s\n  the serial orders allow:\n    %s",
		p.setup, fireName(p), p.b, now.Sub(bubbleStart), got, strings.Join(wants, "\n    "))
}

func fireName(p delayingRacePair) string {
	if p.atFire {
		return "the waiting loop's move"
	}
	return p.a.String()
}

// readyTimes are the instants an observation looks at: every ready time
// of the candidates within an hour, and 1ns before it, in order.
func readyTimes(ms []delaying.Model) []time.Time {
	var ts []time.Time
	for _, m := range ms {
		for _, e := range m.Waiting() {
			if time.Until(e.ReadyAt) <= time.Hour {
				ts = append(ts, e.ReadyAt.Add(-1), e.ReadyAt)
			}
		}
	}
	slices.SortFunc(ts, func(a, b time.Time) int { return a.Compare(b) })
	return slices.Compact(ts)
}

// observeSubject sleeps to each instant of ts, reading Len there, then
// takes every item with Get and Done: "Len 0 1 ...; items [x y]".
func observeSubject(q Delaying, ts []time.Time) string {
	var lens []string
	for _, t := range ts {
		if d := time.Until(t); d > 0 {
			time.Sleep(d)
		}
		synctest.Wait()
		lens = append(lens, fmt.Sprint(q.Len()))
	}
	// Quiescent first: the loop's move at the race's instant belongs to
	// that instant, however late the subject's goroutines run in it.
	synctest.Wait()
	var items []string
	for q.Len() > 0 {
		if len(items) == checkkit.DrainLimit {
			items = append(items, "(the check stopped taking items)")
			break
		}
		k, shut := q.Get()
		if shut {
			items = append(items, "(shutdown)")
			break
		}
		q.Done(k)
		items = append(items, k)
		synctest.Wait()
	}
	return fmt.Sprintf("Len %s; items %v", strings.Join(lens, " "), items)
}

// observeModel is observeSubject on the model.
func observeModel(m delaying.Model, ts []time.Time) string {
	m = m.Clone()
	var lens []string
	for _, t := range ts {
		m.ApplyAdvance(t)
		lens = append(lens, fmt.Sprint(m.Queue().Len()))
	}
	var items []string
	for m.Queue().Len() > 0 {
		out := m.Apply(wq.Op{Kind: wq.Get})
		m.Apply(wq.Op{Kind: wq.Done, Key: out.Key})
		items = append(items, out.Key)
	}
	return fmt.Sprintf("Len %s; items %v", strings.Join(lens, " "), items)
}
