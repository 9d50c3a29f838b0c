package backoff

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kverify/kverify/props/checkkit"
)

// CheckResetExhaustive enumerates the clock's moves between a Delay's
// calls.
const CheckResetExhaustive = "backoff/reset-exhaustive"

// resetDepth is backoff/reset-exhaustive's default bound: calls of Next
// (KVERIFY_DEEPER adds to it).
const resetDepth = 6

// exhaustiveReset is the reset interval of backoff/reset-exhaustive, and
// exhaustiveParams its backoff: it reaches its cap within the bound.
const exhaustiveReset = time.Minute

var exhaustiveParams = Params{Duration: time.Second, Factor: 2, Steps: 4, Cap: 5 * time.Second}

// gapAlphabet is how far the fake clock moves before each call: not at
// all, a second, 1ns short of the reset interval, exactly it, 1ns past
// it, and an hour back (a clock set back).
var gapAlphabet = []time.Duration{0, time.Second, exhaustiveReset - 1, exhaustiveReset, exhaustiveReset + 1, -time.Hour}

// resetExhaustive runs backoff/reset-exhaustive: every sequence of up to
// resetDepth calls with every gap of gapAlphabet before each, without
// jitter, under the reset rule the subject declares, each Next checked
// against the model. The search is unreduced: every sequence runs.
func resetExhaustive(s Subject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, cfg checkkit.Config) error {
		all := checkkit.Every(len(gapAlphabet))
		cov, err := checkkit.Explore(cfg, checkkit.Space[time.Duration]{
			Name: "clock moves", Steps: gapAlphabet, Depth: resetDepth, NoReduce: true,
			Run: func(gaps []time.Duration) (string, []int, error) {
				rec := checkkit.NewRecorder(cfg.Progress)
				run := delayRun{P: exhaustiveParams, Reset: exhaustiveReset, Gaps: gaps}
				if err := run.run(s, rec, s.ResetRule); err != nil {
					return "", nil, rec.Attach(err)
				}
				parts := make([]string, len(gaps))
				for i, g := range gaps {
					parts[i] = fmtD(g)
				}
				return strings.Join(parts, ","), all, nil
			},
		})
		cov.Bound = fmt.Sprintf("%s (reset %v, %v)", cov.Bound, exhaustiveReset, exhaustiveParams)
		checkkit.ReportCoverage(t, cov)
		return checkkit.Save(t, cfg, Component, CheckResetExhaustive, err)
	}
}
