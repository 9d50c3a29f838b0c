package backoff

import (
	"math"
	"testing"
	"time"

	"github.com/kverify/kverify/props/checkkit"
	spec "github.com/kverify/kverify/spec/backoff"
	"pgregory.net/rapid"
)

// stepsPast is how many Steps a run makes: every step of p and a few past
// them, where nothing may change any more.
func stepsPast(t *rapid.T, p Params) int {
	return p.Steps + rapid.IntRange(1, 5).Draw(t, "steps past")
}

// sequence explores random parameters without jitter, then (so that the
// outcome does not depend on the exploration finding them) runs fixed ones
// at the edges: overflow, a factor of 0 above the cap, a cap reached
// exactly, a shrinking factor that passes the cap.
func sequence(s Subject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, cfg checkkit.Config) error {
		err := checkkit.Rapid(t, cfg, func(rt *rapid.T, rec *checkkit.Recorder) {
			p := paramsGen(rt, noJitter)
			run := stepRun{P: p, Rands: make([]float64, stepsPast(rt, p))}
			if err := run.run(s, rec, SinceLastCall); err != nil {
				rec.Errorf(rt, err)
			}
		})
		if err == nil {
			err = witnesses(cfg, s, sequenceWitnesses())
		}
		return checkkit.Save(t, cfg, Component, CheckSequence, err)
	}
}

func sequenceWitnesses() []stepRun {
	zeros := func(n int) []float64 { return make([]float64, n) }
	return []stepRun{
		{Params{Duration: 1 << 62, Factor: 2, Steps: 3}, zeros(4)},
		{Params{Duration: time.Hour, Factor: 10, Steps: maxSteps}, zeros(maxSteps + 2)},
		{Params{Duration: time.Hour, Factor: 10, Steps: maxSteps, Cap: spec.MaxDuration - 1}, zeros(20)},
		{Params{Duration: spec.MaxDuration, Factor: 1, Steps: 3}, zeros(4)},
		{Params{Duration: time.Millisecond, Factor: 2, Steps: maxSteps}, zeros(maxSteps + 2)},
		{Params{Duration: 10 * time.Second, Factor: 0, Steps: 3, Cap: 4 * time.Second}, zeros(5)},
		{Params{Duration: 10 * time.Second, Factor: 0.5, Steps: 5, Cap: 4 * time.Second}, zeros(7)},
		{Params{Duration: 5 * time.Second, Factor: 2, Steps: 3, Cap: 10 * time.Second}, zeros(5)},
		{Params{Duration: 1, Factor: 3, Steps: 2}, zeros(5)},
		{Params{Duration: 7, Factor: 2, Steps: 0}, zeros(3)},
	}
}

// jitter explores random parameters with jitter and random numbers, then
// runs fixed ones: the ends of [0, 1) on an ordinary backoff and a jitter
// that overflows.
func jitter(s Subject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, cfg checkkit.Config) error {
		err := checkkit.Rapid(t, cfg, func(rt *rapid.T, rec *checkkit.Recorder) {
			p := paramsGen(rt, jitterGen)
			rands := make([]float64, stepsPast(rt, p))
			for i := range rands {
				rands[i] = randGen(rt)
			}
			if err := (stepRun{P: p, Rands: rands}).run(s, rec, SinceLastCall); err != nil {
				rec.Errorf(rt, err)
			}
		})
		if err == nil {
			err = witnesses(cfg, s, []stepRun{
				{Params{Duration: time.Second, Factor: 2, Jitter: 1, Steps: 5}, []float64{0, 0.5, nearOne, 0.25, 0.75, 0.999, 0.5}},
				{Params{Duration: time.Second, Factor: 3, Jitter: 0.1, Steps: 3, Cap: 5 * time.Second}, []float64{nearOne, nearOne, nearOne, nearOne}},
				{Params{Duration: spec.MaxDuration - 1, Factor: 2, Jitter: 1, Steps: 2}, []float64{0.5, nearOne, 0.5}},
				{Params{Duration: 1 << 62, Factor: 1, Jitter: 10, Steps: 1}, []float64{0.9, 0.9}},
				{Params{Duration: math.MaxInt64 / 4, Factor: 2, Jitter: 1, Steps: 4, Cap: spec.MaxDuration}, []float64{nearOne, nearOne, nearOne, nearOne, nearOne}},
			})
		}
		return checkkit.Save(t, cfg, Component, CheckJitter, err)
	}
}

// witnesses runs fixed scripts, each with its own trace.
func witnesses(cfg checkkit.Config, s Subject, runs []stepRun) error {
	for _, r := range runs {
		rec := checkkit.NewRecorder(cfg.Progress)
		if err := r.run(s, rec, SinceLastCall); err != nil {
			return rec.Attach(err)
		}
	}
	return nil
}
