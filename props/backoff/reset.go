package backoff

import (
	"testing"
	"time"

	"github.com/kverify/kverify/props/checkkit"
	spec "github.com/kverify/kverify/spec/backoff"
	"pgregory.net/rapid"
)

// reset explores random parameters, reset intervals and call times on a
// fake clock under rule, then runs fixed scripts (reference §6.2's probe
// among them). For backoff/reset (declared false) the reset interval may
// be 0 (never start over) and there is no jitter. For
// backoff/reset-declared the interval is positive, the case client-go's
// DelayWithReset describes (it turns 0 into a constant delay), and half
// the cases jitter with random numbers handed to the subject's source.
func reset(s Subject, name string, rule ResetRule, declared bool) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, cfg checkkit.Config) error {
		err := checkkit.Rapid(t, cfg, func(rt *rapid.T, rec *checkkit.Recorder) {
			run := delayRun{P: ordinaryParamsGen(rt), Reset: resetGen(rt, !declared)}
			if declared && rapid.Bool().Draw(rt, "jittered") {
				run.P.Jitter = jitterGen(rt)
			}
			n := checkkit.Size(maxSteps, 10, spec.DefaultSteps).Draw(rt, "calls")
			for range n {
				run.Gaps = append(run.Gaps, gapGen(rt, run.Reset))
				if run.P.Jitter != 0 {
					run.Rands = append(run.Rands, randGen(rt))
				}
			}
			if err := run.run(s, rec, rule); err != nil {
				rec.Errorf(rt, err)
			}
		})
		if err == nil {
			for _, run := range resetWitnesses(declared) {
				rec := checkkit.NewRecorder(cfg.Progress)
				if err = run.run(s, rec, rule); err != nil {
					err = rec.Attach(err)
					break
				}
			}
		}
		return checkkit.Save(t, cfg, Component, name, err)
	}
}

// resetWitnesses are the reference probe (the reflector's defaults, 2
// minute reset: ten calls at once, then +119s, +2s twice, +60s, +61s),
// without jitter and, for backoff/reset-declared, with the default jitter;
// and, for backoff/reset, a reset interval of 0 that never starts over and
// a quiet spell of exactly the interval that does not.
func resetWitnesses(declared bool) []delayRun {
	p := fromSpec(spec.Default())
	p.Jitter = 0
	gaps := append(make([]time.Duration, 10), 119*time.Second, 2*time.Second, 0, 60*time.Second, 61*time.Second)
	runs := []delayRun{{P: p, Reset: spec.DefaultReset, Gaps: gaps}}
	// The clock set back an hour and then moved on by the interval and
	// 1ns: the quiet spell counts from the call on the set-back clock
	// (since-last-call starts over, since-last-reset does not), and the
	// step back itself is no quiet spell.
	back := Params{Duration: time.Second, Factor: 2, Steps: 10, Cap: time.Hour}
	runs = append(runs, delayRun{P: back, Reset: time.Minute, Gaps: []time.Duration{0, 0, -time.Hour, 0, time.Minute + 1, 0, -1, 0}})
	if declared {
		pj := fromSpec(spec.Default())
		rands := make([]float64, len(gaps))
		for i := range rands {
			rands[i] = float64(i+1) / float64(len(gaps)+1)
		}
		return append(runs, delayRun{P: pj, Reset: spec.DefaultReset, Gaps: gaps, Rands: rands})
	}
	short := Params{Duration: time.Second, Factor: 2, Steps: 10, Cap: time.Hour}
	return append(runs,
		delayRun{P: short, Reset: 0, Gaps: []time.Duration{0, 0, 10 * time.Hour, 10 * time.Hour}},
		delayRun{P: short, Reset: time.Minute, Gaps: []time.Duration{0, 0, time.Minute, time.Minute + 1, 0}})
}
