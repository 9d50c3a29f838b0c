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

// raceLimit bounds the probe in wall time, whatever its count of hot
// rounds: it must stay fast.
const raceLimit = time.Second

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
		sched := checkkit.NewRaceScheduleWithin(1, checkkit.RaceRounds, cfg.Budget, raceLimit)
		defer sched.Stop()
		var err error
		checkkit.Bubble(t, func() {
			err = sched.Loop(t, 1, func(r *checkkit.Racer, round int) error {
				return raceRound(s, serial, r, round, cfg)
			})
		})
		return err
	}
}

func raceRound(s Subject, serial []time.Duration, r *checkkit.Racer, round int, cfg checkkit.Config) error {
	name := checkkit.RaceRound("Next/Next", round)
	cfg.Progress.Op(name)
	clk := testingclock.NewFakeClock(time.Now())
	d, err := s.NewDelay(raceParams, clk, raceReset, nil)
	if err != nil {
		return checkkit.Broke(GAccepted, "NewDelay(%v, Reset=%s): %v", raceParams, raceReset, err)
	}
	k := round % (raceSetup + 1)
	for i := range k {
		if got := d.Next(); got != serial[i] {
			return checkkit.Broke(GNextFollowsModel, "%s: serial Next #%d returned %s, want %s", name, i+1, fmtD(got), fmtD(serial[i]))
		}
	}
	var a, b time.Duration
	blocked, err := r.RaceChecked(cfg.Progress, name, checkkit.RaceOffset(round), func() { a = d.Next() }, func() { b = d.Next() })
	if err != nil {
		return err
	}
	if blocked {
		err := checkkit.Broke(GLiveness, "%s: the second Next is still blocked after the first returned", name)
		cfg.Progress.Abandon(err)
		return err
	}
	r.Park()
	after := d.Next()
	got := []time.Duration{a, b}
	slices.Sort(got)
	if got[0] != serial[k] || got[1] != serial[k+1] || after != serial[k+2] {
		return checkkit.Broke(GAtomic, "%s, after %d serial calls: the racing calls returned %s and %s and the next %s; the serial order gives %s and %s, then %s",
			name, k, fmtD(a), fmtD(b), fmtD(after), fmtD(serial[k]), fmtD(serial[k+1]), fmtD(serial[k+2]))
	}
	return nil
}
