package workqueue

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/kverify/kverify/linearizability"
	"github.com/kverify/kverify/props/checkkit"
	"k8s.io/utils/clock"
)

// Linearizability check names.
const (
	CheckLinearFIFO   = "linear/fifo"
	CheckLinearPerKey = "linear/per-key"
)

// Sizes of the linearizability scenarios. They run in real time, with
// real goroutines; the defaults keep both checks well under a second per
// subject with -race. Porcupine's searches are bounded by
// linearizability.DefaultSteps, a count of model steps, not by time, so
// that a loaded machine cannot turn a search into a failure.
const (
	linearClients   = 8
	linearFIFOOps   = 30   // per client, in each short scenario
	linearFIFORuns  = 20   // short scenarios in the first round
	linearPerKeyOps = 2000 // per client, in the long run
)

// handedOverKeys are the keys of the whole-queue scenarios of a queue
// whose Add is handed over (Profile.AddHandedOver).
var handedOverKeys = []string{"a", "b", "c"}

// linearSteps is the step budget of each porcupine search
// (linearizability.DefaultSteps); a variable so that a test can make every
// search run out.
var linearSteps = linearizability.DefaultSteps

func linearChecks(s Subject) []checkkit.Check {
	return []checkkit.Check{
		{Name: CheckLinearFIFO, Family: checkkit.FamilyLinear,
			Guarantee: "concurrent Add, Get, Done, Len and ShutDown from 8 goroutines are linearizable against the whole-queue model: each call takes effect atomically inside its call, in one fair FIFO order",
			Run:       linearFIFO(s)},
		{Name: CheckLinearPerKey, Family: checkkit.FamilyLinear,
			Guarantee: "in a long concurrent run, every key's Add, Get and Done are linearizable against the per-key model: an item is never handed out twice before Done, never out of nothing, and a re-add during processing comes back only after Done",
			Run:       linearPerKey(s)},
	}
}

// linearFIFO runs many short scenarios against the full FIFO model, at
// least linearFIFORuns and more while cfg.Budget lasts. cfg.Budget is wall
// time, but it decides only how many scenarios run, never a verdict.
func linearFIFO(s Subject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, cfg checkkit.Config) error {
		seed := cfg.LinearSeed()
		start := time.Now()
		ops := 0
		var tally inconclusive
		for i := uint64(0); ; i++ {
			n, err := linearScenario(t, s, cfg, CheckLinearFIFO, linearizability.QueueModelFor(s.Profile), seed+i, linearFIFOOps, &tally)
			if err != nil {
				return err
			}
			ops += n
			if i+1 >= linearFIFORuns && time.Since(start) >= cfg.Budget {
				t.Logf("%d scenarios, %d operations, first seed %d, in %v%s", i+1, ops, seed, time.Since(start).Round(time.Millisecond), tally.summary(i+1))
				return nil
			}
		}
	}
}

// linearPerKey runs one long scenario against the per-key model, and more
// while cfg.Budget lasts (wall time, deciding only how many run).
func linearPerKey(s Subject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, cfg checkkit.Config) error {
		seed := cfg.LinearSeed()
		start := time.Now()
		var tally inconclusive
		for i := uint64(0); ; i++ {
			n, err := linearScenario(t, s, cfg, CheckLinearPerKey, linearizability.PerKeyModelFor(s.Profile), seed+i, linearPerKeyOps, &tally)
			if err != nil {
				return err
			}
			if time.Since(start) >= cfg.Budget {
				t.Logf("%d run(s), last of %d operations, first seed %d, in %v%s", i+1, n, seed, time.Since(start).Round(time.Millisecond), tally.summary(i+1))
				return nil
			}
		}
	}
}

// inconclusive counts a check's searches that ran out of their step budget
// (porcupine.Unknown): no verdict on the subject, so the check moves on to
// its next scenario, and says how many there were at the end.
type inconclusive struct {
	n     int
	seeds []uint64 // the first few, to rerun
}

func (c *inconclusive) add(seed uint64) {
	c.n++
	if len(c.seeds) < 3 {
		c.seeds = append(c.seeds, seed)
	}
}

// summary is the end of the check's summary line for runs scenarios.
func (c *inconclusive) summary(runs uint64) string {
	if c.n == 0 {
		return ""
	}
	seeds := fmt.Sprint(c.seeds)
	if c.n > len(c.seeds) {
		seeds = strings.TrimSuffix(seeds, "]") + " ...]"
	}
	if uint64(c.n) == runs {
		return fmt.Sprintf("; every search was inconclusive (out of %d steps; seeds %s), so this run checked nothing: no verdict", linearSteps, seeds)
	}
	return fmt.Sprintf("; %d inconclusive search(es) (out of %d steps; seeds %s), no verdict on the subject", c.n, linearSteps, seeds)
}

// linearScenario runs one workload of ops calls per client on a fresh queue
// and checks its history. It returns the history's size, or the violation.
// A search that runs out of its step budget (Unknown) is no verdict: it is
// counted in tally and the check goes on to its next scenario.
func linearScenario(t *testing.T, s Subject, cfg checkkit.Config, check string, model porcupine.Model, seed uint64, ops int, tally *inconclusive) (int, error) {
	// Every call is a heartbeat of the runner's watchdog, which reports a
	// workload that stops (a Get that never returns after ShutDown, a
	// deadlock) with the calls still in flight.
	rec := &linearizability.Recorder{Observe: func(porcupine.Operation) { cfg.Progress.Beat() }}
	cfg.Progress.Op(fmt.Sprintf("%s workload: %d clients × %d calls, seed %d", check, linearClients, ops, seed))
	cfg.Progress.Describe(func() string {
		return fmt.Sprintf("calls in flight: %v", rec.InFlight())
	})
	w := linearizability.Workload{Seed: seed, Clients: linearClients, Ops: ops, Recorder: rec}
	if s.Profile.AddHandedOver && check == CheckLinearFIFO {
		// The whole-queue model of a queue that hands adds over is a set
		// of states, one per way its goroutines may have moved each key
		// so far: a few per key, multiplied over the keys, and a search
		// step costs one per member (linearizability.CheckSteps). Three
		// keys and a third of the calls keep the searches within the
		// budget; the per-key check, whose partitions hold one key each,
		// keeps the six keys and the long run.
		w.Keys, w.Ops = handedOverKeys, max(1, ops/3)
		ops = w.Ops
	}
	h := linearizability.RunWorkload(s.New(Deps{Clock: clock.RealClock{}}), w)
	var res porcupine.CheckResult
	var info porcupine.LinearizationInfo
	cfg.Progress.Analyse(func() { res, info = linearizability.CheckSteps(model, h, linearSteps) })
	switch res {
	case porcupine.Ok:
	case porcupine.Illegal:
		return len(h), checkkit.Broke(GLinearizability, "%s history of %d operations (%d clients × %d calls, seed %d, subject %q) has no linearization%s",
			modelName(check), len(h), linearClients, ops, seed, cfg.Subject, saveLinear(t, cfg, check, seed, model, h, info))
	default:
		tally.add(seed)
		if tally.n > len(tally.seeds) {
			break // the summary line counts the rest
		}
		t.Logf("%s: inconclusive: the search found neither a linearization nor a violation within %d steps for a history of %d operations (seed %d); going on",
			check, linearSteps, len(h), seed)
	}
	return len(h), nil
}

func modelName(check string) string {
	if check == CheckLinearPerKey {
		return "per-key"
	}
	return "whole-queue (FIFO)"
}

// saveLinear saves the history (and its visualisation, if any) to
// cfg.TraceDir or the test's artifact directory, and returns the lines to
// add to the violation.
func saveLinear(t *testing.T, cfg checkkit.Config, check string, seed uint64, model porcupine.Model, h []porcupine.Operation, info porcupine.LinearizationInfo) string {
	dir := cfg.Dir(t)
	subject := cfg.Subject
	if subject == "" {
		subject = "subject"
	}
	name := fmt.Sprintf("%s-%s-%s-seed%d", Component, strings.ReplaceAll(check, "/", "-"), subject, seed)
	html, js, err := linearizability.SaveFailure(dir, name, model, h, info)
	return linearizability.FailureNote(html, js, err, "linearizability.LoadHistory, then linearizability.CheckSteps",
		checkkit.LinearSeedHint(seed))
}
