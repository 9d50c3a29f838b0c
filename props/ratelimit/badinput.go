package ratelimit

import (
	"fmt"
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/kverify/kverify/props/checkkit"
)

// badCase is a constructor call with invalid parameters.
type badCase struct {
	name  string
	build func() (Limiter, error)
}

func badCases(s Subject) []badCase {
	p0 := func() *recorder { return newRecorder("p0", []time.Duration{5 * time.Millisecond}, 0) }
	var typedNil *recorder
	return []badCase{
		{"Exponential(-1ms, 1s)", func() (Limiter, error) { return s.Exponential(-time.Millisecond, time.Second) }},
		{"Exponential(1ms, -1s)", func() (Limiter, error) { return s.Exponential(time.Millisecond, -time.Second) }},
		{"Exponential(math.MinInt64, math.MaxInt64)", func() (Limiter, error) { return s.Exponential(math.MinInt64, math.MaxInt64) }},
		{"FastSlow(-1ms, 1s, 2)", func() (Limiter, error) { return s.FastSlow(-time.Millisecond, time.Second, 2) }},
		{"FastSlow(1ms, -1s, 2)", func() (Limiter, error) { return s.FastSlow(time.Millisecond, -time.Second, 2) }},
		{"FastSlow(1ms, 1s, -1)", func() (Limiter, error) { return s.FastSlow(time.Millisecond, time.Second, -1) }},
		{"Bucket(-1, 10)", func() (Limiter, error) { return s.Bucket(-1, 10) }},
		{"Bucket(NaN, 10)", func() (Limiter, error) { return s.Bucket(math.NaN(), 10) }},
		{"Bucket(10, -1)", func() (Limiter, error) { return s.Bucket(10, -1) }},
		{"MaxOf()", func() (Limiter, error) { return s.MaxOf() }},
		{"MaxOf(nil)", func() (Limiter, error) { return s.MaxOf(nil) }},
		{"MaxOf(p0, nil)", func() (Limiter, error) { return s.MaxOf(p0(), nil) }},
		{"MaxOf(p0, (*T)(nil))", func() (Limiter, error) { return s.MaxOf(p0(), typedNil) }},
		{"MaxWait(nil, 1s)", func() (Limiter, error) { return s.MaxWait(nil, time.Second) }},
		{"MaxWait((*T)(nil), 1s)", func() (Limiter, error) { return s.MaxWait(typedNil, time.Second) }},
		{"MaxWait(p0, -1s)", func() (Limiter, error) { return s.MaxWait(p0(), -time.Second) }},
	}
}

func badInput(s Subject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, cfg checkkit.Config) error {
		sc := &script{}
		var problems []checkkit.Problem
		for _, c := range badCases(s) {
			problems = append(problems, tryBad(sc, c)...)
		}
		// Each problem is judged on its own: a declared one does not hide
		// another.
		if problems = cfg.Unexcused(problems); len(problems) == 0 {
			return nil
		}
		g, d := checkkit.Worst(problems, GBadInputNoPanic, GNegative)
		return checkkit.Save(t, cfg, Component, CheckBadInput, sc.broke(g, "%s", d))
	}
}

// tryBad builds c and, if it is accepted, uses the limiter a little.
func tryBad(sc *script, c badCase) []checkkit.Problem {
	var l Limiter
	var err error
	if p := checkkit.Protect(func() { l, err = c.build() }); p != nil {
		sc.step(c.name, "error", p.Error())
		return []checkkit.Problem{{Guarantee: GBadInputNoPanic, Detail: fmt.Sprintf("%s: %v", c.name, p)}}
	}
	if err != nil {
		sc.step(c.name, "error: "+err.Error(), "error: "+err.Error())
		return nil
	}
	if l == nil {
		sc.step(c.name, "error", "nil limiter without an error")
		return []checkkit.Problem{{Guarantee: GRejected, Detail: c.name + " returned neither a limiter nor an error"}}
	}
	sc.step(c.name, "error", "accepted")
	for i := range 3 {
		var d time.Duration
		p := checkkit.Protect(func() { d = l.When("a") })
		if p != nil {
			sc.step("When(a)", "no panic", p.Error())
			return []checkkit.Problem{{Guarantee: GBadInputNoPanic, Detail: fmt.Sprintf("%s accepted, then When(a) #%d: %v", c.name, i+1, p)}}
		}
		if d < 0 {
			sc.step("When(a)", ">= 0", fmtD(d))
			return []checkkit.Problem{{Guarantee: GNegative, Detail: fmt.Sprintf("%s accepted, then When(a) #%d = %s", c.name, i+1, fmtD(d))}}
		}
		sc.step("When(a)", fmtD(d), fmtD(d))
	}
	var n int
	if p := checkkit.Protect(func() { n = l.NumRequeues("a") }); p != nil {
		sc.step("NumRequeues(a)", "no panic", p.Error())
		return []checkkit.Problem{{Guarantee: GBadInputNoPanic, Detail: fmt.Sprintf("%s accepted, then NumRequeues(a): %v", c.name, p)}}
	}
	sc.step("NumRequeues(a)", strconv.Itoa(n), strconv.Itoa(n))
	if p := checkkit.Protect(func() { l.Forget("a") }); p != nil {
		sc.step("Forget(a)", "no panic", p.Error())
		return []checkkit.Problem{{Guarantee: GBadInputNoPanic, Detail: fmt.Sprintf("%s accepted, then Forget(a): %v", c.name, p)}}
	}
	sc.step("Forget(a)", "", "")
	return []checkkit.Problem{{Guarantee: GRejected, Detail: c.name + " was accepted"}}
}
