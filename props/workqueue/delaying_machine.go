package workqueue

import (
	"fmt"
	"strconv"
	"strings"
	"testing/synctest"
	"time"

	"github.com/kverify/kverify/props/checkkit"
	"github.com/kverify/kverify/spec/delaying"
	wq "github.com/kverify/kverify/spec/workqueue"
	"k8s.io/utils/clock"
)

// phase says where in time a machine's settle happens, to name what broke.
type phase uint8

const (
	phaseStep  phase = iota // after an operation
	phaseEarly              // 1ns before the model's next ready time
	phaseReady              // at a ready time, the model having moved what is due
)

// delayingMachine drives one delaying queue and the model in lock step, inside a
// synctest bubble, with synctest.Wait as the step boundary. Time moves only
// in Sleep and Tick, which stop 1ns before and at every ready time on the
// way.
type delayingMachine struct {
	q       Delaying
	rl      RateLimiting // nil unless mode.RateLimited
	lim     *scriptedLimiter
	m       delaying.Model
	mode    dMode
	workers [Workers]worker
	drain   chan struct{} // non-nil while ShutDownWithDrain is in flight
	rec     *checkkit.Recorder

	// moved holds the queued keys that came from a waiting entry, with the
	// ready time they came at; contested the waiting keys that got a second
	// AddAfter; justMoved the keys the last Advance moved; lastHuge whether
	// the last AddAfter had a delay beyond farAway. They only name
	// violations.
	moved     map[string]time.Time
	contested map[string]bool
	justMoved []string
	lastHuge  bool
	// jumped is set while a settle follows a sleep that stopped at no
	// ready time on the way: Gets that returned did so at a time not seen.
	jumped bool

	fresh int // bursts' keys so far

	// With dMode.Metrics: the subject's metrics and what, beyond the model,
	// judges them (nil otherwise).
	metrics *metricsWatch
}

func newDelayingMachine(s Subject, mode dMode, rec *checkkit.Recorder) *delayingMachine {
	x := &delayingMachine{mode: mode, rec: rec, m: delaying.New(s.Profile), moved: map[string]time.Time{}, contested: map[string]bool{}}
	deps := Deps{Clock: clock.RealClock{}}
	if mode.Metrics {
		deps.Recorder = new(Metrics)
		x.metrics = newMetricsWatch(deps.Recorder)
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
func (x *delayingMachine) Enabled(s dStep) bool {
	switch s.Kind {
	case dGet:
		w := &x.workers[s.Worker]
		return !w.holding && w.getting == nil
	case dDone:
		return x.workers[s.Worker].holding
	case dTick:
		next, ok := x.m.NextReadyAt()
		return ok && time.Until(next) <= x.mode.horizon()
	case dSleep:
		return s.D >= 0 && s.D <= farAway
	case dAddRateLimited, dForget, dNumRequeues:
		return x.rl != nil
	case dShutDown:
		// Under a profile whose drain is a ShutDown, one ShutDown per
		// queue: a second is the lifecycle checks' to judge. Elsewhere a
		// ShutDown after a drain releases it, and is how client-go's
		// delaying queue stops its waiting loop after a drain returned.
		return !x.m.IsShuttingDown() || !x.m.Queue().Profile().DrainIsShutDown
	case dDrain:
		// One worker alone: no other Get in flight may take the items.
		for i := range x.workers {
			if w := &x.workers[i]; w.getting != nil || (i == s.Worker && w.holding) {
				return false
			}
		}
	case dShutDownWithDrain:
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
func (x *delayingMachine) Apply(s dStep) error {
	if !x.Enabled(s) {
		return nil
	}
	x.lastHuge = false
	want, got := "", ""
	switch s.Kind {
	case dAddAfter, dAddRateLimited:
		return x.addAfter(s)
	case dBurst:
		x.rec.Step(s.String(), "", "")
		x.burst(s)
		return x.settle(phaseStep)
	case dDrain:
		x.rec.Step(s.String(), "", "")
		if err := x.drainReady(s); err != nil {
			return err
		}
		return x.settle(phaseStep)
	case dAdd:
		x.q.Add(s.Key)
		x.m.Apply(wq.Op{Kind: wq.Add, Key: s.Key})
	case dGet:
		x.workers[s.Worker].getting = startGet(x.q)
	case dDone:
		w := &x.workers[s.Worker]
		key := w.held
		w.held, w.holding = "", false
		x.metrics.done(key, time.Now())
		x.q.Done(key)
		x.m.Apply(wq.Op{Kind: wq.Done, Key: key})
	case dSleep:
		x.rec.Step(s.String(), "", "")
		return x.sleepTo(time.Now().Add(s.D))
	case dTick:
		next, _ := x.m.NextReadyAt()
		x.rec.Step(dStep{Kind: dSleep, D: time.Until(next)}.String(), "", "")
		return x.sleepTo(next)
	case dLen:
		n, m := x.q.Len(), x.m.Queue().Len()
		want, got = strconv.Itoa(m), strconv.Itoa(n)
		if n != m {
			x.rec.Step(s.String(), want, got)
			return checkkit.Broke(GLenLaw, "Len() = %d, model %d (queue %s, waiting %s)", n, m, x.queueString(), x.waitingString())
		}
	case dShuttingDown:
		b := x.q.ShuttingDown()
		want, got = strconv.FormatBool(x.m.IsShuttingDown()), strconv.FormatBool(b)
		if b != x.m.IsShuttingDown() {
			x.rec.Step(s.String(), want, got)
			return checkkit.Broke(GShutdown, "ShuttingDown() = %v, model %v", b, x.m.IsShuttingDown())
		}
	case dShutDown:
		if !x.m.IsShuttingDown() {
			x.metrics.shutDown(time.Now())
		}
		if !shutDown(x.q) {
			x.rec.Step(s.String(), "returned", "blocked")
			return checkkit.Broke(GShutdownReturns, "ShutDown did not return within %v", checkkit.Watchdog)
		}
		x.m.Apply(wq.Op{Kind: wq.ShutDown})
	case dShutDownWithDrain:
		x.metrics.shutDown(time.Now())
		x.drain = startDrain(x.q)
		x.m.ApplyBegin(wq.Op{Kind: wq.ShutDownWithDrain})
	case dForget:
		before := x.lim.snapshot()
		x.rl.Forget(s.Key)
		if err := x.lim.expect(before, s.Key, 0, 1, 0); err != nil {
			x.rec.Step(s.String(), "", "")
			return checkkit.Broke(GForget, "Forget(%s): %v", s.Key, err)
		}
	case dNumRequeues:
		before := x.lim.snapshot()
		x.lim.setNum(s.Key, s.N)
		n := x.rl.NumRequeues(s.Key)
		want, got = strconv.Itoa(s.N), strconv.Itoa(n)
		x.rec.Step(s.String(), want, got)
		if n != s.N {
			return checkkit.Broke(GNumRequeues, "NumRequeues(%s) = %d, the limiter says %d", s.Key, n, s.N)
		}
		if err := x.lim.expect(before, s.Key, 0, 0, 1); err != nil {
			return checkkit.Broke(GNumRequeues, "NumRequeues(%s): %v", s.Key, err)
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
func (x *delayingMachine) addAfter(s dStep) error {
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
	x.m.ApplyAddAfter(s.Key, s.D, now)
	var before limiterCalls
	n := 0
	if s.Kind == dAddRateLimited {
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
	if s.Kind == dAddRateLimited {
		if x.m.Queue().Profile().LimiterAskedLater {
			synctest.Wait() // the queue asks when it takes the add in
		}
		if err := x.lim.expect(before, s.Key, 1, 0, 0); err != nil && !(x.m.IsShuttingDown() && x.lim.snapshot().when == before.when) {
			return checkkit.Broke(GWhenOnce, "AddRateLimited(%s): %v", s.Key, err)
		}
	}
	if want := x.m.Queue().Len(); probe && n != want {
		x.rec.Step("Len", strconv.Itoa(want), strconv.Itoa(n))
		why := "the item was not added before the call returned"
		if n > want {
			why = "the queue counts an item it should not hold (an add made after ShutDown, or one already counted)"
		}
		return checkkit.Broke(GImmediate, "Len() = %d right after %s returned, want %d: %s", n, s, want, why)
	}
	return x.settle(phaseStep)
}

// burst adds s.N fresh keys with AddAfter (see dBurst); in Ties mode they
// all wait for the same ready time. Outside Ties mode it first lowers the
// ready time of every key still waiting from earlier bursts, alternately by
// 1ns and to half the time left (where that ready time is free): each must
// be found among the waiting items, some of whose neighbours have fired and
// left, and re-ranked in place; an
// implementation whose index loses a key after a removal waits for it
// twice (it comes back after being processed), and one whose heap
// positions go stale after it gives memory back sifts the wrong entry.
func (x *delayingMachine) burst(s dStep) {
	now := time.Now()
	taken := map[time.Time]bool{} // ready times in use, for untying
	if !x.mode.Ties {
		waiting := x.m.Waiting()
		for _, e := range waiting {
			taken[e.ReadyAt] = true
		}
		for i, e := range waiting {
			d := e.ReadyAt.Sub(now) - 1 // re-ranked
			if i%2 == 0 {
				d = e.ReadyAt.Sub(now) / 2 // and fired apart from the old time
			}
			at := now.Add(d).Round(0)
			if !strings.HasPrefix(e.Key, "n") || d <= 0 || d > farAway || taken[at] || x.m.IsShuttingDown() {
				continue
			}
			taken[at] = true
			x.contested[e.Key] = true
			x.burstAddAfter(e.Key, d, now)
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
		x.burstAddAfter(key, d, now)
	}
}

// burstAddAfter is one AddAfter of a burst, in the model and on the
// subject; later steps check its effects.
func (x *delayingMachine) burstAddAfter(key string, d time.Duration, now time.Time) {
	x.m.ApplyAddAfter(key, d, now)
	x.q.AddAfter(key, d)
}

// drainReady has one worker Get and Done up to s.N ready items, each
// checked against the model's FIFO head. The Gets are direct calls: the
// machine calls Get only while the subject's Len says an item is there.
func (x *delayingMachine) drainReady(s dStep) error {
	for i := 0; i < s.N && x.m.Queue().Ready() > 0; i++ {
		if n, want := x.q.Len(), x.m.Queue().Len(); n != want {
			x.rec.Step("Len", strconv.Itoa(want), strconv.Itoa(n))
			g := GLenLaw
			if n > want {
				g = x.early()
			}
			return checkkit.Broke(g, "in %v, before Get %d: Len() = %d, model %d (queue %s, waiting %s)", s, i+1, n, want, x.queueString(), x.waitingString())
		}
		head := x.m.Queue().Head(1)[0]
		k, shut := x.q.Get()
		if shut || k != head {
			x.rec.Step(fmt.Sprintf("w%d:Get", s.Worker), head, fmtResult(getResult{k, shut}))
			if shut {
				return checkkit.Broke(GShutdown, "in %v, Get %d returned shutdown with %d item(s) queued", s, i+1, x.m.Queue().Len())
			}
			if x.m.Queue().Processing(k) {
				return checkkit.Broke(GStingy, "in %v, Get %d handed out %q while it was still being processed", s, i+1, k)
			}
			return checkkit.Broke(x.order([]string{k}, []string{head}), "in %v, Get %d returned %q, the model's FIFO head is %q (queue %s, ready times %s)", s, i+1, k, head, x.queueString(), x.readyTimes(x.m.Queue().Head(9)))
		}
		x.m.Apply(wq.Op{Kind: wq.Get})
		delete(x.moved, k)
		now := time.Now()
		x.metrics.handed(k, now, false)
		x.metrics.done(k, now)
		x.q.Done(k)
		x.m.Apply(wq.Op{Kind: wq.Done, Key: k})
	}
	return nil
}

// untie lengthens d by a nanosecond at a time while key's ready time would
// equal another waiting key's (see dMode.Ties).
func (x *delayingMachine) untie(key string, d time.Duration, now time.Time) time.Duration {
	for {
		at := now.Add(d).Round(0)
		if at.Sub(now) > farAway || !x.m.WaitsAt(at, key) {
			return d // no clash, or it never comes: its order is never seen
		}
		d++
	}
}

func (x *delayingMachine) waiting(key string) bool {
	_, ok := x.m.ReadyAt(key)
	return ok
}

// readyTimes shows the ready times (from the bubble's start) of the queued
// keys that came from waiting entries.
func (x *delayingMachine) readyTimes(queue []string) string {
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
func (x *delayingMachine) Close() {
	if !x.m.IsShuttingDown() || !x.m.Queue().Profile().DrainIsShutDown { // see Enabled(dShutDown)
		shutDown(x.q)
	}
	for i := range x.workers {
		if w := &x.workers[i]; w.holding {
			x.q.Done(w.held)
		}
	}
	synctest.Wait()
}
