package backoff

import (
	"slices"
	"testing"
	"time"

	"github.com/kverify/kverify/props/checkkit"
	spec "github.com/kverify/kverify/spec/backoff"
	testingclock "k8s.io/utils/clock/testing"
)

// raceParams is the backoff the race probe races: no jitter and enough
// steps that every delay of a round differs from the others.
var raceParams = Params{Duration: time.Millisecond, Factor: 2, Steps: 30}

// raceReset is longer than any round: the clock stands still, and a
// positive interval puts client-go's DelayWithReset behind its lock.
const raceReset = time.Hour

// raceSetup is the most serial calls a round makes before the race.
const raceSetup = 7

// race puts two Next calls on one Delay at the same instant, round after
// round, after 0 to raceSetup serial calls: the two delays must be the
// model's next two, in either order, and the call after them the third.
func race(s Subject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, cfg checkkit.Config) error {
		m := spec.NewDelay(raceParams.spec(), raceReset, SinceLastCall)
		var serial []time.Duration
		for range raceSetup + 3 {
			var v time.Duration
			m, v = m.Next(0, 0)
			serial = append(serial, v)
		}
		sched := checkkit.NewRaceSchedule(cfg, 1, checkkit.RaceRounds)
		defer sched.Stop()
		var err error
		checkkit.Bubble(t, func() {
			err = sched.Loop(t, 1, func(r *checkkit.Racer, round int) error {
				return raceRound(s, serial, r, sched.At("Next/Next", round), cfg)
			})
		})
		return err
	}
}

func raceRound(s Subject, serial []time.Duration, r *checkkit.Racer, at checkkit.RaceAt, cfg checkkit.Config) error {
	cfg.Progress.Op(at.String())
	clk := testingclock.NewFakeClock(time.Now())
	d, err := s.NewDelay(raceParams, clk, raceReset, nil)
	if err != nil {
		return checkkit.Broke(GAccepted, "NewDelay(%v, Reset=%s): %v", raceParams, raceReset, err)
	}
	k := at.Round % (raceSetup + 1)
	for i := range k {
		if got := d.Next(); got != serial[i] {
			return at.Broke(GNextFollowsModel, "serial Next #%d returned %s, want %s", i+1, fmtD(got), fmtD(serial[i]))
		}
	}
	var a, b time.Duration
	blocked, err := r.RaceChecked(cfg.Progress, at, func() { a = d.Next() }, func() { b = d.Next() })
	if err != nil {
		return err
	}
	if blocked {
		err := at.Broke(GLiveness, "the second Next is still blocked after the first returned")
		cfg.Progress.Abandon(err)
		return err
	}
	r.Park()
	after := d.Next()
	got := []time.Duration{a, b}
	slices.Sort(got)
	if got[0] != serial[k] || got[1] != serial[k+1] || after != serial[k+2] {
		return at.Broke(GAtomic, "after %d serial calls: the racing calls returned %s and %s and the next %s; the serial order gives %s and %s, then %s",
			k, fmtD(a), fmtD(b), fmtD(after), fmtD(serial[k]), fmtD(serial[k+1]), fmtD(serial[k+2]))
	}
	return nil
}
