package ratelimit

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kverify/kverify/props/checkkit"
	"github.com/kverify/kverify/spec/ratelimit"
)

// CheckRace is the rate limiters' race probe.
const CheckRace = "ratelimit/race"

// lcall is one call on a limiter: When, Forget or NumRequeues of an item.
type lcall struct {
	op   string // "When", "Forget", "NumRequeues"
	item string
}

func (c lcall) String() string { return c.op + "(" + c.item + ")" }

func (c lcall) do(l Limiter) string {
	switch c.op {
	case "When":
		return l.When(c.item).String()
	case "Forget":
		l.Forget(c.item)
		return ""
	}
	return fmt.Sprint(l.NumRequeues(c.item))
}

func (c lcall) apply(m ratelimit.Model, now time.Time) (ratelimit.Model, string) {
	switch c.op {
	case "When":
		n, d := m.Step(c.item, now)
		return n, d.String()
	case "Forget":
		return m.Reset(c.item), ""
	}
	return m, fmt.Sprint(m.NumRequeues(c.item))
}

// lracePairs are the pairs of calls that touch the same item's (or the
// same limiter's) state. When/When of one item, where a lost count hides,
// races twice as often as the others.
var lracePairs = [][2]lcall{
	{{"When", "x"}, {"When", "x"}},
	{{"When", "x"}, {"When", "x"}},
	{{"When", "x"}, {"Forget", "x"}},
	{{"When", "x"}, {"NumRequeues", "x"}},
	{{"When", "x"}, {"When", "y"}},
	{{"Forget", "x"}, {"When", "y"}},
}

// raceLimiter is one limiter kind the probe races, with its model.
type raceLimiter struct {
	name  string
	make  func() (Limiter, error)
	model func() ratelimit.Model
}

func raceLimiters(s Subject) []raceLimiter {
	var ls []raceLimiter
	if s.Exponential != nil {
		ls = append(ls, raceLimiter{"ItemExponential(1ms,1s)",
			func() (Limiter, error) { return s.Exponential(time.Millisecond, time.Second) },
			func() ratelimit.Model { return ratelimit.NewExponential(time.Millisecond, time.Second) }})
	}
	if s.FastSlow != nil {
		ls = append(ls, raceLimiter{"ItemFastSlow(1ms,1s,3)",
			func() (Limiter, error) { return s.FastSlow(time.Millisecond, time.Second, 3) },
			func() ratelimit.Model { return ratelimit.NewFastSlow(time.Millisecond, time.Second, 3) }})
	}
	// Not MaxOf: it consults its parts one after the other without a lock
	// of its own, in client-go too, so two Whens of one item may take
	// their delays from different serial orders part by part.
	if s.Bucket != nil {
		ls = append(ls, raceLimiter{"Bucket(10qps,2)",
			func() (Limiter, error) { return s.Bucket(10, 2) },
			func() ratelimit.Model { return ratelimit.NewBucket(10, 2) }})
	}
	return ls
}

// raceCheck races every pair on every limiter kind, after 0 to 4 Whens of
// each item, for checkkit.RaceRounds rounds (more while cfg.Budget lasts): the
// two results and the state after them (NumRequeues and the next When of
// each item) must be those of one of the two serial orders.
func raceCheck(s Subject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, cfg checkkit.Config) error {
		ls := raceLimiters(s)
		var err error
		sched := checkkit.NewRaceSchedule(cfg, len(ls)*len(lracePairs), checkkit.RaceRounds/2)
		defer sched.Stop()
		checkkit.Bubble(t, func() {
			err = sched.Loop(t, 1, func(r *checkkit.Racer, round int) error {
				for _, l := range ls {
					for _, p := range lracePairs {
						pair := fmt.Sprintf("%s/%s on %s", p[0], p[1], l.name)
						if !sched.Runs(pair) {
							continue
						}
						if err := raceRound(l, p, r, sched.At(pair, round), cfg); err != nil {
							return err
						}
					}
				}
				return nil
			})
		})
		return err
	}
}

func raceRound(l raceLimiter, p [2]lcall, r *checkkit.Racer, at checkkit.RaceAt, cfg checkkit.Config) error {
	round := at.Round
	cfg.Progress.Op(at.String())
	lim, err := l.make()
	if err != nil {
		return fmt.Errorf("%s: %v", l.name, err)
	}
	m := l.model()
	now := time.Now()
	var setup []string
	for item, n := range map[string]int{"x": round % 5, "y": round / 5 % 3} {
		for range n {
			lim.When(item)
			m, _ = m.Step(item, now)
			setup = append(setup, "When("+item+")")
		}
	}
	var ra, rb string
	blocked, err := r.RaceChecked(cfg.Progress, at, func() { ra = p[0].do(lim) }, func() { rb = p[1].do(lim) })
	if err != nil {
		return err
	}
	if blocked {
		err := at.Broke(GLiveness, "%v is still blocked after %v returned", p[1], p[0])
		cfg.Progress.Abandon(err)
		return err
	}
	r.Park()
	after := func(l Limiter) string {
		return fmt.Sprintf("NumRequeues(x)=%s NumRequeues(y)=%s When(x)=%s When(y)=%s",
			lcall{"NumRequeues", "x"}.do(l), lcall{"NumRequeues", "y"}.do(l), lcall{"When", "x"}.do(l), lcall{"When", "y"}.do(l))
	}
	got := fmt.Sprintf("%s=%s %s=%s; %s", p[0], ra, p[1], rb, after(lim))
	var wants []string
	for _, bFirst := range []bool{false, true} {
		mm, x, y := m, "", ""
		if bFirst {
			mm, y = p[1].apply(mm, now)
			mm, x = p[0].apply(mm, now)
		} else {
			mm, x = p[0].apply(mm, now)
			mm, y = p[1].apply(mm, now)
		}
		var nx, ny, wx, wy string
		_, nx = lcall{"NumRequeues", "x"}.apply(mm, now)
		_, ny = lcall{"NumRequeues", "y"}.apply(mm, now)
		mm, wx = lcall{"When", "x"}.apply(mm, now)
		_, wy = lcall{"When", "y"}.apply(mm, now)
		want := fmt.Sprintf("%s=%s %s=%s; NumRequeues(x)=%s NumRequeues(y)=%s When(x)=%s When(y)=%s", p[0], x, p[1], y, nx, ny, wx, wy)
		if want == got {
			return nil
		}
		wants = append(wants, want)
	}
	return at.Broke(GAtomic, "after %v: the limiter gave\n    %s\n  the serial orders allow:\n    %s",
		setup, got, strings.Join(wants, "\n    "))
}
