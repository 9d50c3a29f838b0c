package workqueue

import (
	"fmt"
	"testing"
	"time"

	"github.com/kverify/kverify/props/checkkit"
	wq "github.com/kverify/kverify/spec/workqueue"
	"k8s.io/utils/clock"
)

// The lifecycle checks: shutdown calls made twice, in either order, or at
// the same instant.
const (
	CheckLifecycle         = "queue/lifecycle"
	CheckDelayingLifecycle = "delaying/lifecycle"
)

// lifecycleRounds is the lifecycle probes' hot rounds per pair: a
// shutdown's windows are wide (a check, then a close), so a few hundred
// rounds find them.
const lifecycleRounds = checkkit.RaceRounds / 4

// stopCall is ShutDown or ShutDownWithDrain.
type stopCall struct {
	name string
	call func(Queue)
}

var (
	stopNow   = stopCall{"ShutDown", Queue.ShutDown}
	stopDrain = stopCall{"ShutDownWithDrain", Queue.ShutDownWithDrain}
)

// lifecycle checks a queue made by fresh and put in a state by setup
// (nothing queued or handed out, so that a drain has nothing to wait for):
// every order of two shutdown calls, made one after the other, then at the
// same instant on two goroutines, swept across each other round by round,
// returns without a panic and leaves a queue that is shut down: ShuttingDown
// is true, Get returns shutdown at once, Add and AddAfter add nothing.
func lifecycle(fresh func() Queue, setup func(Queue), what string) func(*testing.T, checkkit.Config) error {
	pairs := [][2]stopCall{{stopNow, stopNow}, {stopDrain, stopDrain}, {stopNow, stopDrain}, {stopDrain, stopNow}}
	after := func(q Queue, how string) error {
		if !q.ShuttingDown() {
			return checkkit.Broke(GLifecycle, "%s, %s: ShuttingDown is false", what, how)
		}
		if k, shut := q.Get(); !shut {
			return checkkit.Broke(GLifecycle, "%s, %s: Get returned %q, not shutdown", what, how, k)
		}
		q.Add("late")
		if d, ok := q.(Delaying); ok {
			d.AddAfter("later", time.Second)
			d.AddAfter("now", 0)
		}
		if n := q.Len(); n != 0 {
			return checkkit.Broke(GLifecycle, "%s, %s: Len is %d after Add on a queue shut down", what, how, n)
		}
		return nil
	}
	return func(t *testing.T, cfg checkkit.Config) error {
		// Outside the bubble: the budget's timer is of wall time.
		sched := checkkit.NewRaceSchedule(cfg, len(pairs)-1, lifecycleRounds)
		defer sched.Stop()
		// declared[i]: pair i's second call broke the subject's declared
		// divergence in order; racing it would only observe that again,
		// and a raced panic abandons the check (Racer.RaceChecked).
		declared := make([]bool, len(pairs))
		return checkkit.InBubble(t, func() (err error) {
			for i, p := range pairs {
				how := fmt.Sprintf("%s then %s", p[0].name, p[1].name)
				cfg.Progress.Op(how)
				q := fresh()
				setup(q)
				func() {
					defer func() {
						if v := recover(); v != nil {
							err = checkkit.Broke(GNoPanic, "%s, %s: %v", what, how, v)
						}
					}()
					p[0].call(q)
					p[1].call(q)
				}()
				if err != nil {
					if !cfg.Excused(err) {
						return err
					}
					// A declared panic of the second call does not end
					// the check: the queue must still behave as shut down.
					err, declared[i] = nil, true
				}
				if err := after(q, how); err != nil && !cfg.Excused(err) {
					return err
				}
				quietShutDown(q) // client-go's drain leaves the delaying loop running
			}
			return sched.Loop(t, 1, func(r *checkkit.Racer, round int) error {
				for i, p := range pairs[:3] {
					pair := p[0].name + "/" + p[1].name
					if declared[i] || !sched.Runs(pair) {
						continue
					}
					at := sched.At(pair, round)
					cfg.Progress.Op(at.String())
					q := fresh()
					setup(q)
					blocked, err := r.RaceChecked(cfg.Progress, at, func() { p[0].call(q) }, func() { p[1].call(q) })
					if err != nil && !cfg.Excused(err) {
						return err
					}
					if blocked {
						return at.Broke(GLifecycle, "%s: the second call does not return once the first has", what)
					}
					if err := after(q, at.String()); err != nil && !cfg.Excused(err) {
						return at.Mark(err)
					}
					r.Park()
					quietShutDown(q)
				}
				return nil
			})
		})
	}
}

// quietShutDown shuts q down once more to stop what the check started,
// ignoring a panic: a queue whose second ShutDown panics was already
// judged for it (and may be declared so) by the pair before. It is not
// stop, which skips the call only for a profile whose drain is a
// ShutDown: here any subject's repeated ShutDown may panic, declared or
// not, and the check must go on to its next pair either way.
func quietShutDown(q Queue) {
	defer func() { _ = recover() }()
	q.ShutDown()
}

// queueLifecycle is queue/lifecycle on a queue with metrics on (so that it
// has goroutines to stop) that has handed out an item and taken it back.
func queueLifecycle(s Subject) func(*testing.T, checkkit.Config) error {
	return lifecycle(func() Queue { return s.New(Deps{Clock: clock.RealClock{}, Metrics: true}) },
		func(q Queue) { q.Add("x"); k, _ := q.Get(); q.Done(k) },
		"a queue with metrics on that handed out x and took it back")
}

// delayingLifecycle is delaying/lifecycle on a delaying queue with two
// items waiting.
func delayingLifecycle(s Subject) func(*testing.T, checkkit.Config) error {
	return lifecycle(func() Queue { return s.NewDelaying(Deps{Clock: clock.RealClock{}}) },
		func(q Queue) { q.(Delaying).AddAfter("w", time.Hour); q.(Delaying).AddAfter("v", time.Second) },
		"a delaying queue with w and v waiting")
}

// stop is the ShutDown a check makes to clean up after its scenario. It
// skips the call on a queue already shutting down whose profile makes
// ShutDownWithDrain a ShutDown: nothing can be waiting there for a second
// ShutDown to release it, and a second ShutDown is the lifecycle checks'
// to judge (a subject that panics on it is judged here on the rest).
func stop(p wq.Profile, q Queue) {
	if p.DrainIsShutDown && q.ShuttingDown() {
		return
	}
	q.ShutDown()
}
