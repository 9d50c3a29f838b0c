package informer

import (
	"errors"
	"fmt"
	"math/rand/v2"
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

func linear(newFanOut func() linearizability.FanOut) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, cfg checkkit.Config) error {
		seed := rand.Uint64()
		start := time.Now()
		for i := uint64(0); ; i++ {
			cfg.Progress.Op(fmt.Sprintf("listener workload, seed %d", seed+i))
			var h []porcupine.Operation
			run := func() {
				h = linearizability.RunListenerWorkload(newFanOut(), linearizability.ListenerWorkload{Seed: seed + i, Drain: 2 * time.Second})
			}
			// The workload waits up to Drain for the handlers, then for Run
			// to return after its context is cancelled; a fan-out that never
			// stops must fail here, not at the test timeout.
			if !checkkit.ReturnsWithin(2*time.Second+checkkit.Watchdog, run) {
				return checkkit.Broke(GStopReturns, "seed %d: the fan-out's Run did not return within %v of its context being cancelled", seed+i, checkkit.Watchdog)
			}
			var err error
			cfg.Progress.Analyse(func() { err = linearizability.CheckListenerDrained(h, 10*time.Second) })
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
				t.Logf("%d scenarios from seed %d", i+1, seed)
				return nil
			}
		}
	}
}
