package backoff

// The reach of the backoff generators (issue 27, class 1): the legal
// domain of every parameter of a backoff and a delay, as a table, each
// class counted over ordinary draws with a fixed seed and held to a floor
// of one, as checkkit's sizes_test does for size classes. The invalid
// parameters (a negative Duration, Cap, Steps or reset, a negative, NaN or
// infinite Factor or Jitter) are backoff/bad-input's, which makes every
// one of them (badParams).

import (
	"flag"
	"math"
	"testing"
	"time"

	"github.com/kverify/kverify/props/checkkit"
	spec "github.com/kverify/kverify/spec/backoff"
	"pgregory.net/rapid"
)

// paramsDomain is the legal domain of the parameters the sequence checks
// draw (paramsGen).
var paramsDomain = []checkkit.ReachClass{
	{Name: "Duration 0", Why: "every delay is 0 whatever the factor (0*f), and jitter adds nothing"},
	{Name: "Duration 1ns", Why: "the smallest: a factor below 2 may round it to itself"},
	{Name: "Duration ordinary", Why: "up to ten hours"},
	{Name: "Duration >= 2^53", Why: "float64 rounds it: the product is not exact"},
	{Name: "Duration MaxInt64", Why: "any growth overflows: it must saturate, not wrap"},
	{Name: "Factor 0", Why: "keeps Duration constant (and uncapped)"},
	{Name: "Factor in (0,1)", Why: "shrinks the delay towards 0"},
	{Name: "Factor 1", Why: "keeps the delay; Steps still count down"},
	{Name: "Factor in (1,2)", Why: "grows by a fraction: truncation matters"},
	{Name: "Factor 2", Why: "the reflector's"},
	{Name: "Factor > 2", Why: "grows fast: overflow within few steps"},
	{Name: "Jitter 0", Why: "exact sequences"},
	{Name: "Jitter in (0,1)", Why: "adds less than the delay"},
	{Name: "Jitter 1", Why: "the reflector's"},
	{Name: "Jitter > 1", Why: "adds more than the delay: the sum may overflow"},
	{Name: "Steps 0", Why: "Duration never changes"},
	{Name: "Steps 1", Why: "one growth, then constant"},
	{Name: "Steps 2-37", Why: "short sequences"},
	{Name: "Steps >= 38", Why: "the reflector's and past"},
	{Name: "Cap 0", Why: "no cap"},
	{Name: "Cap < Duration", Why: "a grown Duration is capped below the start; a factor 0 keeps it above"},
	{Name: "Cap reached exactly", Why: "the boundary: a step that reaches Cap is not past it"},
	{Name: "Cap MaxInt64", Why: "never binds, but saturation reaches it"},
	{Name: "rand 0", Why: "the jitter's lower end: no jitter added"},
	{Name: "rand near 1", Why: "the jitter's upper end"},
}

// delayDomain is the legal domain of the delay's inputs (the reset check,
// backoff/reset): the reset interval and the time between calls.
var delayDomain = []checkkit.ReachClass{
	{Name: "Reset 0", Why: "never reset"},
	{Name: "Reset 1ns", Why: "resets after any pause"},
	{Name: "Reset ordinary", Why: "the reflector's two minutes, and others"},
	{Name: "Gap 0", Why: "a burst of failures at one instant"},
	{Name: "Gap reset-1ns", Why: "just inside the interval: no reset"},
	{Name: "Gap = reset", Why: "exactly the interval: no reset (more than, not at least)"},
	{Name: "Gap reset+1ns", Why: "just past: reset"},
	{Name: "Gap > reset", Why: "a quiet spell"},
	{Name: "Gap negative", Why: "the clock went back: not a quiet spell"},
}

func classifyParams(ta checkkit.Tally, p Params) {
	d, f := p.Duration, p.Factor
	ta.Hit("Duration 0", d == 0)
	ta.Hit("Duration 1ns", d == 1)
	ta.Hit("Duration ordinary", d > 1 && d <= 10*time.Hour)
	ta.Hit("Duration >= 2^53", d >= 1<<53)
	ta.Hit("Duration MaxInt64", d == math.MaxInt64)
	ta.Hit("Factor 0", f == 0)
	ta.Hit("Factor in (0,1)", f > 0 && f < 1)
	ta.Hit("Factor 1", f == 1)
	ta.Hit("Factor in (1,2)", f > 1 && f < 2)
	ta.Hit("Factor 2", f == 2)
	ta.Hit("Factor > 2", f > 2)
	ta.Hit("Jitter 0", p.Jitter == 0)
	ta.Hit("Jitter in (0,1)", p.Jitter > 0 && p.Jitter < 1)
	ta.Hit("Jitter 1", p.Jitter == 1)
	ta.Hit("Jitter > 1", p.Jitter > 1)
	ta.Hit("Steps 0", p.Steps == 0)
	ta.Hit("Steps 1", p.Steps == 1)
	ta.Hit("Steps 2-37", p.Steps >= 2 && p.Steps < 38)
	ta.Hit("Steps >= 38", p.Steps >= 38)
	ta.Hit("Cap 0", p.Cap == 0)
	ta.Hit("Cap < Duration", p.Cap > 0 && p.Cap < d)
	reached := false
	for b := p.spec(); p.Cap > 0; {
		if b.Duration == p.Cap {
			reached = true
		}
		if b.Steps == 0 {
			break
		}
		_, b = b.Step()
	}
	ta.Hit("Cap reached exactly", reached)
	ta.Hit("Cap MaxInt64", p.Cap == spec.MaxDuration)
}

// withSeed runs prop under rapid.Check with a fixed seed.
func withSeed(t *testing.T, prop func(*rapid.T)) {
	t.Helper()
	f := flag.Lookup("rapid.seed")
	old := f.Value.String()
	defer func() { _ = f.Value.Set(old) }()
	_ = f.Value.Set("27000")
	rapid.Check(t, prop)
}

// TestReachParams draws the sequence checks' parameters (paramsGen, with
// and without jitter, and the random numbers of jitter) and counts each
// class of paramsDomain; every class must come.
func TestReachParams(t *testing.T) {
	ta := checkkit.Tally{}
	withSeed(t, func(rt *rapid.T) {
		classifyParams(ta, paramsGen(rt, noJitter))
		classifyParams(ta, paramsGen(rt, jitterGen))
		r := randGen(rt)
		ta.Hit("rand 0", r == 0)
		ta.Hit("rand near 1", r >= 0.999999)
	})
	ta.Check(t, "backoff parameters", 1, paramsDomain)
}

// TestReachDelay draws the reset check's intervals and gaps (resetGen,
// gapGen) and counts each class of delayDomain; every class must come.
func TestReachDelay(t *testing.T) {
	ta := checkkit.Tally{}
	withSeed(t, func(rt *rapid.T) {
		reset := resetGen(rt, true)
		ta.Hit("Reset 0", reset == 0)
		ta.Hit("Reset 1ns", reset == 1)
		ta.Hit("Reset ordinary", reset > 1)
		for range 10 {
			g := gapGen(rt, reset)
			ta.Hit("Gap 0", g == 0)
			ta.Hit("Gap reset-1ns", reset > 1 && g == reset-1)
			ta.Hit("Gap = reset", reset > 0 && g == reset)
			ta.Hit("Gap reset+1ns", g == reset+1)
			ta.Hit("Gap > reset", g > reset+1)
			ta.Hit("Gap negative", g < 0)
		}
	})
	ta.Check(t, "delay inputs", 1, delayDomain)
}
