package controller

import (
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kverify/kverify/props/checkkit"
	"github.com/kverify/kverify/props/modelserver"
	"github.com/kverify/kverify/spec/apiserver"
	spec "github.com/kverify/kverify/spec/controller"
)

// CheckOutcomes enumerates what the reconciler answers.
const CheckOutcomes = "controller/outcomes-exhaustive"

// outcomesDepth is controller/outcomes-exhaustive's default bound: the
// reconciles of the key whose answers are enumerated (KVERIFY_DEEPER adds
// to it).
const outcomesDepth = 4

// outcomeAlphabet is what one reconcile may answer: success, an error, a
// requeue after a second, an error with a requeue after an hour (the
// error wins), and a success that took 30 seconds.
var outcomeAlphabet = []behaviour{
	{}, {Fail: true}, {RequeueAfter: time.Second}, {Fail: true, RequeueAfter: time.Hour}, {Sleep: 30 * time.Second},
}

// outcomeLimiter is the rate limiter of every run: 1ms doubling to 8ms.
var outcomeLimiter = spec.Limiter{Base: time.Millisecond, Max: 8 * time.Millisecond}

// outcomesExhaustive runs controller/outcomes-exhaustive: every sequence
// of up to outcomesDepth answers for one key's reconciles (later ones
// succeed), with a second key reconciled beside it by two workers, while
// the key is updated twice, 10 seconds and then 65 seconds apart, and the
// other key is deleted: spec/controller's ledger at every step, then every
// key reconciled to the server's state, then a clean stop. Unreduced:
// every sequence runs.
func outcomesExhaustive(s Subject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, cfg checkkit.Config) error {
		all := checkkit.Every(len(outcomeAlphabet))
		cov, err := checkkit.Explore(cfg, checkkit.Space[behaviour]{
			Name: "reconcile answers", Steps: outcomeAlphabet, Depth: outcomesDepth, NoReduce: true,
			Run: func(answers []behaviour) (string, []int, error) {
				err := runOutcomes(t, cfg, s, answers)
				parts := make([]string, len(answers))
				for i, b := range answers {
					parts[i] = b.String()
				}
				return strings.Join(parts, "; "), all, err
			},
		})
		checkkit.ReportCoverage(t, cov)
		return err
	}
}

// outcomesAbort unwinds a run at its first failure.
type outcomesAbort struct{}

// runOutcomes plays one sequence of answers; the violation comes back
// with the run's steps as its trace.
func runOutcomes(t *testing.T, cfg checkkit.Config, s Subject, answers []behaviour) error {
	rec := checkkit.NewRecorder(cfg.Progress)
	keys := keyPool(2)
	rec.Step(fmt.Sprintf("2 objects, 2 workers, limiter %v..%v, answers for %s: %v", outcomeLimiter.Base, outcomeLimiter.Max, keys[0], answers), "", "")
	var failed error
	err := checkkit.InBubble(t, func() error {
		fail := func(g, f string, a ...any) { failed = checkkit.Broke(g, f, a...); panic(outcomesAbort{}) }
		defer func() {
			if r := recover(); r != nil {
				if _, ok := r.(outcomesAbort); !ok {
					panic(r)
				}
			}
		}()
		srv := modelserver.NewServer(apiserver.Config{}, nil)
		for _, k := range keys {
			if err := srv.Create(k); err != nil {
				fail(GModelServer, "create %s: %v", k, err)
			}
		}
		w := newWorld(fail, srv, outcomeLimiter)
		w.script[keys[0]] = answers
		w.build(s, !s.NoWatchList, 2, outcomeLimiter)
		w.run()
		defer w.stop(false)
		synctest.Wait()
		for _, st := range []struct {
			op    string
			wait  time.Duration
			write string
		}{{"update", 10 * time.Second, keys[0]}, {"update", 65 * time.Second, keys[0]}, {"delete", time.Second, keys[1]}} {
			time.Sleep(st.wait)
			w.write(fail, st.op, st.write)
			rec.Step(fmt.Sprintf("advance %v, %s %s", st.wait, st.op, st.write), "", "")
			synctest.Wait()
			w.check()
		}
		w.settle()
		w.stop(true)
		return nil
	})
	if failed != nil {
		err = failed
	}
	return rec.Attach(err)
}
