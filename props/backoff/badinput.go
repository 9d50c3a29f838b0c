package backoff

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/kverify/kverify/props/checkkit"
	testingclock "k8s.io/utils/clock/testing"
)

// validParams are parameters every check accepts, to pair with a bad
// reset interval and to spoil one field at a time.
var validParams = Params{Duration: time.Second, Factor: 2, Jitter: 0.5, Steps: 5, Cap: time.Minute}

// badParams spoil validParams one field at a time.
func badParams() []Params {
	with := func(f func(*Params)) Params {
		p := validParams
		f(&p)
		return p
	}
	return []Params{
		with(func(p *Params) { p.Duration = -time.Nanosecond }),
		with(func(p *Params) { p.Duration = math.MinInt64 }),
		with(func(p *Params) { p.Cap = -time.Second }),
		with(func(p *Params) { p.Steps = -1 }),
		with(func(p *Params) { p.Factor = math.NaN() }),
		with(func(p *Params) { p.Factor = math.Inf(1) }),
		with(func(p *Params) { p.Factor = math.Inf(-1) }),
		with(func(p *Params) { p.Factor = -1 }),
		with(func(p *Params) { p.Jitter = math.NaN() }),
		with(func(p *Params) { p.Jitter = math.Inf(1) }),
		with(func(p *Params) { p.Jitter = -0.5 }),
	}
}

// badInput tries every bad parameter on New and NewDelay (and a negative
// reset interval on NewDelay), and uses what is accepted a little.
func badInput(s Subject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, cfg checkkit.Config) error {
		rec := checkkit.NewRecorder(cfg.Progress)
		var problems []checkkit.Problem
		for _, p := range badParams() {
			problems = append(problems, tryBad(rec, "New("+p.String()+")", func() (func() time.Duration, error) {
				b, err := s.New(p)
				if err != nil || b == nil {
					return nil, err
				}
				return func() time.Duration { return b.Step(constRand(0.5)) }, nil
			})...)
		}
		if s.NewDelay != nil {
			type dcase struct {
				p     Params
				reset time.Duration
			}
			var cases []dcase
			for _, p := range badParams() {
				cases = append(cases, dcase{p, time.Minute})
			}
			cases = append(cases, dcase{validParams, -time.Nanosecond}, dcase{validParams, math.MinInt64})
			for _, c := range cases {
				clk := testingclock.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
				op := fmt.Sprintf("NewDelay(%v, Reset=%s)", c.p, fmtD(c.reset))
				problems = append(problems, tryBad(rec, op, func() (func() time.Duration, error) {
					d, err := s.NewDelay(c.p, clk, c.reset, constRand(0.5))
					if err != nil || d == nil {
						return nil, err
					}
					return func() time.Duration { clk.Step(time.Second); return d.Next() }, nil
				})...)
			}
		}
		// Each problem is judged on its own: a declared one does not hide
		// another.
		if problems = cfg.Unexcused(problems); len(problems) == 0 {
			return nil
		}
		g, d := checkkit.Worst(problems, GNoPanic, GNegative)
		return checkkit.Save(t, cfg, Component, CheckBadInput, rec.Attach(checkkit.Broke(g, "%s", d)))
	}
}

// tryBad calls build, which returns the accepted thing's next-delay call
// or an error; what is accepted is called three times.
func tryBad(rec *checkkit.Recorder, name string, build func() (func() time.Duration, error)) []checkkit.Problem {
	var next func() time.Duration
	var err error
	if p := checkkit.Protect(func() { next, err = build() }); p != nil {
		rec.Step(name, "error", p.Error())
		return []checkkit.Problem{{Guarantee: GNoPanic, Detail: fmt.Sprintf("%s: %v", name, p)}}
	}
	if err != nil {
		rec.Step(name, "error", errString(err))
		return nil
	}
	if next == nil {
		rec.Step(name, "error", "nil without an error")
		return []checkkit.Problem{{Guarantee: GRejected, Detail: name + " returned neither a value nor an error"}}
	}
	rec.Step(name, "error", "accepted")
	for i := range 3 {
		var d time.Duration
		if p := checkkit.Protect(func() { d = next() }); p != nil {
			rec.Step("next delay", "no panic", p.Error())
			return []checkkit.Problem{{Guarantee: GNoPanic, Detail: fmt.Sprintf("%s accepted, then delay #%d: %v", name, i+1, p)}}
		}
		if d < 0 {
			rec.Step("next delay", ">= 0", fmtD(d))
			return []checkkit.Problem{{Guarantee: GNegative, Detail: fmt.Sprintf("%s accepted, then delay #%d = %s", name, i+1, fmtD(d))}}
		}
		rec.Step("next delay", ">= 0", fmtD(d))
	}
	return []checkkit.Problem{{Guarantee: GRejected, Detail: name + " was accepted"}}
}
