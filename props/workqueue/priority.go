package workqueue

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kverify/kverify/props/checkkit"
	"github.com/kverify/kverify/spec/delaying"
	wq "github.com/kverify/kverify/spec/workqueue"
	"k8s.io/utils/clock"
	"pgregory.net/rapid"
)

// CheckPriority is the priority queue's check.
const CheckPriority = "queue/priority"

// Prioritized is a Queue whose items carry a priority, as
// controller-runtime's PriorityQueue (AddWithOpts with AddOpts.Priority
// and AddOpts.After, GetWithPriority): Get hands out the highest priority
// first.
type Prioritized interface {
	Queue
	AddWithPriority(item string, priority int)
	AddAfterWithPriority(item string, priority int, d time.Duration)
	GetWithPriority() (item string, priority int, shutdown bool)
}

// ComposedAdder is a Prioritized queue that also adds an item both
// delayed and rate-limited in one call (controller-runtime's AddWithOpts
// with After and RateLimited): the delay is spec/delaying.ComposedDelay of
// after and the limiter's When.
type ComposedAdder interface {
	AddRateLimitedAfter(item string, priority int, after time.Duration)
}

// prioStep is one step of the priority machine: Add of a key at a
// priority (after a delay, if d > 0), Get (with the priority), Done of a
// held key, Len, Sleep(d), or a burst of N fresh keys at priorities that
// cycle through burstPriority.
type prioStep struct {
	kind     wq.Kind
	key      string
	priority int
	d        time.Duration
	burst    int
	sleep    bool
	// when, with limited, is the limiter's scripted answer for a composed
	// add (AddRateLimitedAfter, delayed by d).
	when    time.Duration
	limited bool
}

// The priorities the machine draws from, the burst's among them.
const (
	prioMin = -1
	prioMax = 3
)

// burstPriority is the priority of a burst's i-th key: every level, in an
// order that interleaves them, so that FIFO inside a level is tested
// across levels.
func burstPriority(i int) int { return prioMin + (i*3)%(prioMax-prioMin+1) }

func (s prioStep) String() string {
	switch {
	case s.burst > 0:
		return fmt.Sprintf("Burst(%d)", s.burst)
	case s.sleep:
		return fmt.Sprintf("Sleep(%v)", s.d)
	case s.limited:
		return fmt.Sprintf("AddRateLimitedAfter(%s, priority %d, %v, when %v)", s.key, s.priority, s.d, s.when)
	case s.kind == wq.Add && s.d > 0:
		return fmt.Sprintf("AddAfter(%s, priority %d, %v)", s.key, s.priority, s.d)
	case s.kind == wq.Add:
		return fmt.Sprintf("Add(%s, priority %d)", s.key, s.priority)
	case s.kind == wq.Done:
		return "Done(" + s.key + ")"
	}
	return s.kind.String()
}

// parsePrioStep is the inverse of prioStep.String.
func parsePrioStep(op string) (prioStep, error) {
	if n, ok := strings.CutPrefix(op, "Burst("); ok {
		v, err := strconv.Atoi(strings.TrimSuffix(n, ")"))
		if err != nil || v <= 0 {
			return prioStep{}, fmt.Errorf("bad burst %q", op)
		}
		return prioStep{burst: v}, nil
	}
	if d, ok := strings.CutPrefix(op, "Sleep("); ok {
		v, err := time.ParseDuration(strings.TrimSuffix(d, ")"))
		if err != nil || v < 0 {
			return prioStep{}, fmt.Errorf("bad sleep %q", op)
		}
		return prioStep{sleep: true, d: v}, nil
	}
	if a, ok := strings.CutPrefix(op, "AddRateLimitedAfter("); ok {
		parts := strings.Split(strings.TrimSuffix(a, ")"), ", ")
		if len(parts) != 4 {
			return prioStep{}, fmt.Errorf("bad rate-limited add %q", op)
		}
		p, err1 := strconv.Atoi(strings.TrimPrefix(parts[1], "priority "))
		d, err2 := time.ParseDuration(parts[2])
		w, err3 := time.ParseDuration(strings.TrimPrefix(parts[3], "when "))
		if err1 != nil || err2 != nil || err3 != nil || parts[0] == "" {
			return prioStep{}, fmt.Errorf("bad rate-limited add %q", op)
		}
		return prioStep{kind: wq.Add, key: parts[0], priority: p, d: d, when: w, limited: true}, nil
	}
	if a, ok := strings.CutPrefix(op, "AddAfter("); ok {
		parts := strings.Split(strings.TrimSuffix(a, ")"), ", ")
		if len(parts) != 3 {
			return prioStep{}, fmt.Errorf("bad add-after %q", op)
		}
		p, err1 := strconv.Atoi(strings.TrimPrefix(parts[1], "priority "))
		d, err2 := time.ParseDuration(parts[2])
		if err1 != nil || err2 != nil || d <= 0 || parts[0] == "" {
			return prioStep{}, fmt.Errorf("bad add-after %q", op)
		}
		return prioStep{kind: wq.Add, key: parts[0], priority: p, d: d}, nil
	}
	if a, ok := strings.CutPrefix(op, "Add("); ok {
		key, p, ok := strings.Cut(strings.TrimSuffix(a, ")"), ", priority ")
		v, err := strconv.Atoi(p)
		if !ok || err != nil || key == "" {
			return prioStep{}, fmt.Errorf("bad add %q", op)
		}
		return prioStep{kind: wq.Add, key: key, priority: v}, nil
	}
	if k, ok := strings.CutPrefix(op, "Done("); ok {
		return prioStep{kind: wq.Done, key: strings.TrimSuffix(k, ")")}, nil
	}
	switch op {
	case "Get":
		return prioStep{kind: wq.Get}, nil
	case "Len":
		return prioStep{kind: wq.Len}, nil
	}
	return prioStep{}, fmt.Errorf("unknown step %q", op)
}

// prioMachine drives a Prioritized queue and the model of the subject's
// profile step by step.
type prioMachine struct {
	q     Prioritized
	lim   *scriptedLimiter
	m     delaying.Model
	held  []string
	fresh int
	rec   *checkkit.Recorder
	// metrics, for a subject that declares metrics, judges them after
	// every step (nil otherwise).
	metrics *metricsWatch
}

// getWait bounds, in the bubble's fake time, a Get that must return at
// once: the model has items ready.
const getWait = time.Minute

// apply runs one step, then checks Len and, with metrics, the metrics
// against the model once the queue is quiescent.
func (x *prioMachine) apply(s prioStep) error {
	if err := x.step(s); err != nil {
		return err
	}
	synctest.Wait() // a queue may take adds in on a goroutine of its own
	if want, got := x.m.Queue().Len(), x.q.Len(); got != want {
		x.rec.Step("Len", strconv.Itoa(want), strconv.Itoa(got))
		return checkkit.Broke(GPriority, "after %v: Len = %d, want %d (queue %v)", s, got, want, x.m.Queue().Queue())
	}
	q := x.m.Queue()
	want := wantMetrics{depth: int64(q.Dirties()), counts: q.Counts(), retries: x.m.Retries()}
	return x.metrics.check(want, time.Now(), " after "+s.String(), func() string {
		return fmt.Sprintf("queue %v, processing %v, waiting %v", q.Queue(), q.ProcessingKeys(), x.m.Waiting())
	})
}

func (x *prioMachine) step(s prioStep) error {
	switch {
	case s.burst > 0:
		for range s.burst {
			k := fmt.Sprintf("b%d", x.fresh)
			p := burstPriority(x.fresh)
			x.fresh++
			x.q.AddWithPriority(k, p)
			x.m.Apply(wq.Op{Kind: wq.Add, Key: k, Priority: p})
		}
		x.rec.Step(s.String(), "", "")
	case s.sleep:
		time.Sleep(s.d)
		synctest.Wait() // the queue's timers have fired and its loop moved the items
		x.m.ApplyAdvance(time.Now())
		x.rec.Step(s.String(), "", "")
	case s.limited:
		c, ok := x.q.(ComposedAdder)
		if !ok {
			return nil // not a step for this queue
		}
		before := x.lim.snapshot()
		x.lim.script(s.when)
		c.AddRateLimitedAfter(s.key, s.priority, s.d)
		synctest.Wait() // a queue may ask the limiter when it takes the add in
		x.m.ApplyAddAfterPriority(s.key, delaying.ComposedDelay(s.d, s.when), s.priority, time.Now())
		x.rec.Step(s.String(), "", "")
		if err := x.lim.expect(before, s.key, 1, 0, 0); err != nil {
			return checkkit.Broke(GWhenOnce, "%v: %v", s, err)
		}
	case s.kind == wq.Add && s.d > 0:
		x.q.AddAfterWithPriority(s.key, s.priority, s.d)
		x.m.ApplyAddAfterPriority(s.key, s.d, s.priority, time.Now())
		x.rec.Step(s.String(), "", "")
	case s.kind == wq.Add:
		x.q.AddWithPriority(s.key, s.priority)
		x.m.Apply(wq.Op{Kind: wq.Add, Key: s.key, Priority: s.priority})
		x.rec.Step(s.String(), "", "")
	case s.kind == wq.Done:
		if x.m.Queue().Processing(s.key) {
			x.metrics.done(s.key, time.Now())
		}
		x.q.Done(s.key)
		x.m.Apply(wq.Op{Kind: wq.Done, Key: s.key})
		for i, k := range x.held {
			if k == s.key {
				x.held = append(x.held[:i], x.held[i+1:]...)
				break
			}
		}
		x.rec.Step(s.String(), "", "")
	case s.kind == wq.Len:
		want, got := x.m.Queue().Len(), x.q.Len()
		x.rec.Step("Len", strconv.Itoa(want), strconv.Itoa(got))
		if got != want {
			return checkkit.Broke(GPriority, "Len = %d, want %d (queue %v)", got, want, x.m.Queue().Queue())
		}
	case s.kind == wq.Get:
		if x.m.Queue().Ready() == 0 {
			return nil // it would block: not a step of this machine
		}
		head := x.m.Queue().Head(3)
		want := x.m.Apply(wq.Op{Kind: wq.Get})
		type got struct {
			k    string
			p    int
			shut bool
		}
		ch := make(chan got, 1)
		go func() {
			k, p, shut := x.q.GetWithPriority()
			ch <- got{k, p, shut}
		}()
		wantS := fmt.Sprintf("%s@%d", want.Key, want.Priority)
		select {
		case g := <-ch:
			gotS := fmt.Sprintf("%s@%d", g.k, g.p)
			if g.shut {
				gotS += " shutdown"
			}
			x.rec.Step("Get", wantS, gotS)
			if g.shut || g.k != want.Key || g.p != want.Priority {
				return checkkit.Broke(GPriority, "GetWithPriority = %s, want %s: the highest priority first, FIFO inside a level (next up: %v)", gotS, wantS, head)
			}
			x.held = append(x.held, g.k)
			x.metrics.handed(g.k, time.Now(), false)
		case <-time.After(getWait):
			x.rec.Step("Get", wantS, "blocked")
			return checkkit.Broke(GPriority, "GetWithPriority blocked for %v with %d item(s) ready (next up: %v)", getWait, x.m.Queue().Ready()+1, head)
		}
	}
	return nil
}

// priorityCheck is queue/priority: a rapid machine of priority Adds
// (re-adds that raise and lower a priority, re-adds while processing),
// delayed priority Adds and Sleeps, bursts of up to prioMaxBurst fresh keys
// across every level, Gets, Dones and Lens against the delaying model of
// the subject's profile, in a synctest bubble. Delayed adds use keys of
// their own: an Add of a waiting item is the delaying checks' to judge.
func priorityCheck(s Subject) func(*testing.T, checkkit.Config) error {
	keys := []string{"a", "b", "c", "d", "e"}
	delayed := []string{"x", "y", "z"}
	delays := []time.Duration{time.Second, 2 * time.Second, 3 * time.Second}
	gen := rapid.Custom(func(t *rapid.T) prioStep {
		switch rapid.IntRange(0, 12).Draw(t, "kind") {
		case 12:
			// Positive delays on the delayed keys: a composed add that
			// comes out immediate would be an Add of a waiting item,
			// which the delaying checks judge.
			return prioStep{kind: wq.Add, key: rapid.SampledFrom(delayed).Draw(t, "key"), priority: rapid.IntRange(prioMin, prioMax).Draw(t, "priority"),
				d: rapid.SampledFrom(append([]time.Duration{0}, delays...)).Draw(t, "after"), when: rapid.SampledFrom(delays).Draw(t, "when"), limited: true}
		case 10:
			return prioStep{kind: wq.Add, key: rapid.SampledFrom(delayed).Draw(t, "key"), priority: rapid.IntRange(prioMin, prioMax).Draw(t, "priority"), d: rapid.SampledFrom(delays).Draw(t, "d")}
		case 11:
			return prioStep{sleep: true, d: rapid.SampledFrom(delays).Draw(t, "d")}
		case 0, 1, 2:
			return prioStep{kind: wq.Add, key: rapid.SampledFrom(keys).Draw(t, "key"), priority: rapid.IntRange(prioMin, prioMax).Draw(t, "priority")}
		case 3, 4, 5:
			return prioStep{kind: wq.Get}
		case 6, 7:
			return prioStep{kind: wq.Done} // of the oldest held key: see run
		case 8:
			return prioStep{kind: wq.Len}
		default:
			return prioStep{burst: rapid.IntRange(1, prioMaxBurst).Draw(t, "burst")}
		}
	})
	return func(t *testing.T, cfg checkkit.Config) error {
		err := checkkit.Rapid(t, cfg, func(rt *rapid.T, rec *checkkit.Recorder) {
			checkkit.Bubble(t, func() {
				x := newPrioMachine(s, rec)
				defer x.q.ShutDown()
				rt.Repeat(map[string]func(*rapid.T){
					"step": func(rt *rapid.T) {
						st := gen.Draw(rt, "step")
						if st.kind == wq.Done && st.burst == 0 && !st.sleep {
							if len(x.held) == 0 {
								return
							}
							st.key = x.held[0]
						}
						if err := x.apply(st); err != nil {
							rec.Errorf(rt, err)
						}
					},
				})
			})
		})
		return checkkit.Save(t, cfg, Component, CheckPriority, err)
	}
}

// prioMaxBurst is the largest burst: past a B-tree node's capacity (the
// priority queue keeps its ready items in one) several times over.
const prioMaxBurst = 300

func newPrioMachine(s Subject, rec *checkkit.Recorder) *prioMachine {
	lim := newScriptedLimiter()
	deps := Deps{Clock: clock.RealClock{}, Limiter: lim}
	x := &prioMachine{lim: lim, m: delaying.New(s.Profile), rec: rec}
	if s.Metrics {
		deps.Recorder = new(Metrics)
		x.metrics = newMetricsWatch(deps.Recorder)
	}
	x.q = s.NewPrioritized(deps)
	return x
}

// replayPriority runs a queue/priority trace's steps again.
func replayPriority(t *testing.T, s Subject, ops []string) error {
	var steps []prioStep
	for _, op := range ops {
		st, err := parsePrioStep(op)
		if err != nil {
			return fmt.Errorf("trace step %q: %w", op, err)
		}
		steps = append(steps, st)
	}
	return checkkit.InBubble(t, func() error {
		x := newPrioMachine(s, checkkit.NewRecorder(nil))
		defer x.q.ShutDown()
		for _, st := range steps {
			if err := x.apply(st); err != nil {
				return err
			}
		}
		return nil
	})
}
