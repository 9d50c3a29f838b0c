package informer

import (
	"fmt"
	"testing"
	"testing/synctest"

	"github.com/kverify/kverify/props"
	"pgregory.net/rapid"
)

// Component is this suite's name in traces and in kverify's table.
const Component = "informer"

// Check names, stable: divergences, traces and the kill matrix refer to them.
const (
	CheckDelivery  = "listener/delivery"
	CheckIsolation = "processor/isolation"
	CheckSync      = "processor/sync"
	CheckShutdown  = "processor/shutdown"
	CheckStart     = "processor/start"
	CheckPumpStep  = "pump/step"
	CheckLookahead = "listener/lookahead"
	CheckLinear    = "linear/listener"
)

// Checks returns every check of the suite that s can take: pump/step only
// with s.Pump, listener/lookahead only when the subject's registrations
// implement Backlog (it is skipped at run time otherwise).
func Checks(s Subject) []props.Check {
	cs := []props.Check{
		{Name: CheckDelivery, Family: props.FamilyModel,
			Guarantee: "with handlers added before and after start, blocked, released and removed at random: each handler receives its initial list once (as init adds), then every event emitted while it is registered exactly once, in emit order, never two calls at a time; a removed handler gets nothing new and its Done closes once no call is in progress; HasSynced is true exactly when the fan-out runs and every initial add for that handler has returned",
			Run:       delivery(s)},
		{Name: CheckIsolation, Family: props.FamilyTiming,
			Guarantee: "with one handler blocked forever, 200 emits all return, every other handler receives all 200 events in order, and once released the blocked handler receives all 200 in order",
			Run:       isolation(s)},
		{Name: CheckSync, Family: props.FamilyTiming,
			Guarantee: "a handler's HasSynced stays false while any of its initial-list adds has not returned (checked with the last one blocked in OnAdd) and turns true once it returns, for handlers added before and after start",
			Run:       syncCheck(s)},
		{Name: CheckShutdown, Family: props.FamilyLeak,
			Guarantee: "RemoveHandler (before or after start, twice, or of a handler blocked in a call) closes Done once no call is in progress and the handler is not called afterwards; Stop waits for a handler call in progress, then returns with every Done closed, and leaves no goroutine behind",
			Run:       shutdown(s)},
		{Name: CheckStart, Family: props.FamilyWitness,
			Guarantee: "an event emitted right after Start, before the listeners run, is delivered and Emit returns: distribution waits for the listeners to start instead of deadlocking with them",
			Run:       startRace(s)},
		{Name: CheckLookahead, Family: props.FamilyWitness,
			Guarantee: "a handler that keeps up never has more than the one notification in hand pending (high-water mark 1); with the handler blocked in a call, N emits leave exactly N pending; after release, 0 pending, a high-water mark of N, and everything delivered in order; again for a second, larger burst through the drained buffer",
			Run:       lookahead(s)},
	}
	if s.Linear != nil {
		cs = append(cs, props.Check{Name: CheckLinear, Family: props.FamilyLinear,
			Guarantee: "with several goroutines distributing at once and handlers that stall, every listener's history of adds and handler calls is linearizable against a FIFO: each value delivered exactly once, in an order consistent with the adds",
			Run:       linear(s.Linear)})
	}
	if s.Pump != nil {
		cs = append(cs, props.Check{Name: CheckPumpStep, Family: props.FamilyModel,
			Guarantee: "the pump's decision function agrees with the model pump on every event sequence: hold the first notification in hand, stash behind it, refill from the buffer in order, go idle when empty, stop on close; Delivered with nothing in hand and any event after close are invalid and change nothing; nothing is stashed while the hand is empty",
			Run:       pumpStep(s.Pump)})
	}
	return cs
}

// inBubble runs body in a synctest bubble and turns every panic (a bug in
// the subject, or synctest's deadlock report when goroutines stay blocked)
// into an error. body must leave no goroutine running.
func inBubble(t *testing.T, body func() error) (err error) {
	defer func() {
		if r := recover(); r != nil && err == nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	synctest.Test(t, func(*testing.T) {
		defer func() {
			if r := recover(); r != nil && err == nil {
				err = fmt.Errorf("panic in the bubble: %v", r)
			}
		}()
		err = body()
	})
	return err
}

func delivery(s Subject) func(*testing.T, props.Config) error {
	return func(t *testing.T, cfg props.Config) error {
		gen := stepGen()
		err := props.Rapid(t, cfg, func(rt *rapid.T, rec *props.Recorder) {
			props.Bubble(t, func() {
				x := newMachine(s.New(), rec)
				closed := false
				defer func() {
					if !closed {
						_ = x.Close()
					}
				}()
				rt.Repeat(map[string]func(*rapid.T){
					"step": func(rt *rapid.T) {
						if err := x.Apply(gen.Draw(rt, "step")); err != nil {
							rec.Errorf(rt, err)
						}
					},
				})
				closed = true
				rec.Step("Stop", "", "")
				if err := x.Close(); err != nil {
					rec.Errorf(rt, err)
				}
			})
		})
		return props.Save(t, cfg, Component, CheckDelivery, err)
	}
}
