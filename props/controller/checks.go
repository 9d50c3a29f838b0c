package controller

import (
	"fmt"
	"testing"

	"github.com/kverify/kverify/props/checkkit"
	"github.com/kverify/kverify/props/modelserver"
	"github.com/kverify/kverify/spec/apiserver"
)

// Check names, in the controller component.
const (
	CheckConverge  = "controller/converge"
	CheckWakeup    = "controller/wakeup"
	CheckRetry     = "controller/retry"
	CheckIsolation = "controller/isolation"
	CheckSync      = "controller/sync"
	CheckStop      = "controller/stop"
	CheckBadInput  = "controller/bad-input"
)

// Schedules is how many random runs controller/converge makes at least
// per round: each is a fault schedule, a server history, handler and
// reconcile timing and reconcile errors.
const Schedules = 1000

// Checks returns the controller's checks for s: the fixed scenarios first,
// then the random runs.
func Checks(s Subject) []checkkit.Check {
	cs := []checkkit.Check{
		{Name: CheckBadInput, Family: checkkit.FamilyModel,
			Guarantee: "New rejects a nil reconciler and a negative number of workers with an error, without panicking",
			Run:       badInput(s)},
		{Name: CheckRetry, Family: checkkit.FamilyTiming,
			Guarantee: "with one idle worker, a failing key is retried exactly at the limiter's delays (base, then doubled), its failures forgotten on success and on a requeue, and an error wins over a RequeueAfter returned with it; a requested requeue comes exactly after its delay; a key reconciled successfully is not reconciled again while nothing changes",
			Run:       retry(s)},
		{Name: CheckWakeup, Family: checkkit.FamilyModel,
			Guarantee: "an update and a delete landing while their key's reconcile is held are not reconciled at once by another worker but once it returns, reading the new state",
			Run:       wakeup(s)},
		{Name: CheckIsolation, Family: checkkit.FamilyModel,
			Guarantee: "with one key's reconcile held, one that panics and one that takes five minutes, the other keys are reconciled to the server's state, and the panicking key is retried after the limiter's delay",
			Run:       isolation(s)},
		{Name: CheckSync, Family: checkkit.FamilyTiming,
			Guarantee: "with the handler taking 30s over each later object of a first list of three, no reconcile starts before the handler has been given every object of it (client-go: the handler registration's HasSynced, not the informer's)",
			Run:       syncFirst(s)},
		{Name: CheckStop, Family: checkkit.FamilyLeak,
			Guarantee: "no reconcile while the server holds the first list; cancelling Run starts no reconcile, returns once the reconciles in flight returned and not before (at once before the sync); nothing runs after; a second Run returns at once",
			Run:       stop(s)},
		{Name: CheckOutcomes, Family: checkkit.FamilyExhaustive,
			Guarantee: fmt.Sprintf("every sequence of up to %d answers of one key's reconciles (success, an error, a requeue after 1s, an error with a requeue after 1h, a 30s success), with a second key and two workers, while the key is updated twice and the other deleted: spec/controller's ledger holds at every step, every key is reconciled to the server's state, and Run stops cleanly", outcomesDepth),
			Run:       outcomesExhaustive(s)},
		{Name: CheckConverge, Family: checkkit.FamilyModel,
			Guarantee: fmt.Sprintf("over %d random runs per round (fault schedules, server histories, 1-4 workers, handler delays, slow, failing and requeueing reconciles), spec/controller's ledger holds at every step (one at a time, at most Workers at once, caught up, monotonic reads, no busy loop, retries and requeues not early) and once writes and faults stop every key is reconciled to the server's state, then Run stops cleanly", Schedules),
			Run:       converge(s)},
	}
	for i := range cs {
		name, run := cs[i].Name, cs[i].Run
		cs[i].Run = func(t *testing.T, cfg checkkit.Config) error {
			return checkkit.Save(t, cfg, Component, name, run(t, cfg))
		}
		if s.NoWatchList {
			cs[i].Guarantee += " [the subject declares no watch-list: its informer only lists]"
		}
	}
	return cs
}

// scenario runs body as a checkkit.Scenario, within the subject's
// ContainPanics, with a fail func that ends it.
func scenario(t *testing.T, cfg checkkit.Config, s Subject, name string, body func(rec *checkkit.Recorder, fail func(g, f string, a ...any))) (err error) {
	_ = s.contain(func() error {
		err = checkkit.Scenario(t, cfg, name, func(rec *checkkit.Recorder) error {
			body(rec, checkkit.ScenarioFail(rec))
			return nil
		})
		return nil
	})
	return err
}

// newServer is a model server with objects o000.. and the faults.
func newServer(fail func(string, string, ...any), objects int, faults ...modelserver.Fault) *modelserver.Server {
	srv := modelserver.NewServer(apiserver.Config{}, faults)
	for _, k := range keyPool(objects) {
		if err := srv.Create(k); err != nil {
			fail(GModelServer, "create %s: %v", k, err)
		}
	}
	return srv
}

func keyPool(n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("default/o%03d", i)
	}
	return keys
}

func badInput(s Subject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, cfg checkkit.Config) error {
		if s.BadInput == nil {
			return checkkit.Broke(GBadInput, "the subject offers no BadInput")
		}
		for i, what := range []string{"a nil reconciler", "a negative number of workers"} {
			var err error
			if p := checkkit.Protect(func() { err = s.BadInput(i) }); p != nil {
				return checkkit.Broke(GBadInput, "New with %s panicked: %v", what, p)
			}
			if err == nil {
				return checkkit.Broke(GBadInput, "New with %s returned no error", what)
			}
		}
		return nil
	}
}
