package informer

import (
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/kverify/kverify/linearizability"
	"github.com/kverify/kverify/props/checkkit"
)

// linearScenarios is the number of workloads per round; the budget adds
// rounds.
const linearScenarios = 10

// linearSteps is the step budget of each porcupine search
// (linearizability.DefaultSteps); a variable so that a test can make every
// search run out.
var linearSteps = linearizability.DefaultSteps

// listenerCatchUp is how long a workload waits for the handlers to catch
// up while none of the check's goroutines can run: a fan-out that still
// delivers has a goroutine running or runnable, and is waited for.
const listenerCatchUp = 2 * time.Second

// linear checks listener histories with porcupine, each search bounded by
// linearizability.DefaultSteps (a count, not a time). Wall time bounds
// only the fan-out's stop (checkkit.Watchdog, a hang) and, through
// cfg.Budget, how many workloads run; the workload's wait for the
// handlers to catch up ends after listenerCatchUp of time in which none of
// the check's goroutines could run (checkkit.Eventually), so that a loaded
// machine cannot cut a correct fan-out's history short.
func linear(newFanOut func() linearizability.FanOut) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, cfg checkkit.Config) error {
		seed := cfg.LinearSeed()
		start := time.Now()
		var unknown []uint64 // seeds of the inconclusive searches
		for i := uint64(0); ; i++ {
			cfg.Progress.Op(fmt.Sprintf("listener workload, seed %d", seed+i))
			stopped := true
			h := linearizability.RunListenerWorkload(newFanOut(), linearizability.ListenerWorkload{
				Seed: seed + i,
				// Every call is a heartbeat of the runner's watchdog, which
				// reports a Distribute that never returns as a hang.
				Beat: cfg.Progress.Beat,
				// Not paused for the watchdog: each delivery is a beat, and
				// a fan-out that spins instead of delivering is its to name.
				CatchUp: func(caughtUp func() bool) { checkkit.Eventually(listenerCatchUp, caughtUp) },
				// A fan-out that never stops must fail here, not at the test
				// timeout. The runner's hang watchdog is paused meanwhile
				// (the wait is bounded), so that it is reported as such.
				AwaitStop: func(wait func()) bool {
					cfg.Progress.Analyse(func() { stopped = checkkit.ReturnsWithin(checkkit.Watchdog, wait) })
					return stopped
				},
			})
			if !stopped {
				return checkkit.Broke(GStopReturns, "seed %d: the fan-out's Run did not return within %v of its context being cancelled", seed+i, checkkit.Watchdog)
			}
			var err error
			cfg.Progress.Analyse(func() { err = linearizability.CheckListenerDrainedSteps(h, linearSteps) })
			if linearizability.Inconclusive(err) {
				// No verdict on this workload: count it and go on.
				unknown = append(unknown, seed+i)
				if len(unknown) <= 3 {
					t.Logf("seed %d (%d operations): %v; going on", seed+i, len(h), err)
				}
				err = nil
			}
			if err != nil {
				dir := cfg.Dir(t)
				var le *linearizability.ListenerError
				var info porcupine.LinearizationInfo
				if errors.As(err, &le) {
					info = le.Info
				}
				html, js, serr := linearizability.SaveListenerFailure(dir, "informer-linear-listener-seed"+strconv.FormatUint(seed+i, 10), h, info)
				return checkkit.Broke(GLinearizability, "seed %d (%d operations): %v%s", seed+i, len(h), err,
					linearizability.FailureNote(html, js, serr, "one JSON operation a line: client, call, return, listener, op, value",
						fmt.Sprintf("rerun: linearizability.RunListenerWorkload with Seed %d", seed+i)))
			}
			if i+1 >= linearScenarios && time.Since(start) >= cfg.Budget {
				switch {
				case len(unknown) == 0:
					t.Logf("%d scenarios from seed %d", i+1, seed)
				case uint64(len(unknown)) == i+1:
					t.Logf("%d scenarios from seed %d; every search was inconclusive (out of %d steps), so this run checked nothing: no verdict", i+1, seed, linearSteps)
				default:
					t.Logf("%d scenarios from seed %d; %d inconclusive search(es) (out of %d steps; first seed %d), no verdict on the subject", i+1, seed, len(unknown), linearSteps, unknown[0])
				}
				return nil
			}
		}
	}
}
