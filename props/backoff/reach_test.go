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
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	spec "github.com/kverify/kverify/spec/backoff"
	"pgregory.net/rapid"
)

// reachClass is one class of a parameter's legal values.
type reachClass struct {
	name string
	why  string // why an implementation may get this class wrong
}

// paramsDomain is the legal domain of the parameters the sequence checks
// draw (paramsGen).
var paramsDomain = []reachClass{
	{"Duration 0", "every delay is 0 whatever the factor (0*f), and jitter adds nothing"},
	{"Duration 1ns", "the smallest: a factor below 2 may round it to itself"},
	{"Duration ordinary", "up to ten hours"},
	{"Duration >= 2^53", "float64 rounds it: the product is not exact"},
	{"Duration MaxInt64", "any growth overflows: it must saturate, not wrap"},
	{"Factor 0", "keeps Duration constant (and uncapped)"},
	{"Factor in (0,1)", "shrinks the delay towards 0"},
	{"Factor 1", "keeps the delay; Steps still count down"},
	{"Factor in (1,2)", "grows by a fraction: truncation matters"},
	{"Factor 2", "the reflector's"},
	{"Factor > 2", "grows fast: overflow within few steps"},
	{"Jitter 0", "exact sequences"},
	{"Jitter in (0,1)", "adds less than the delay"},
	{"Jitter 1", "the reflector's"},
	{"Jitter > 1", "adds more than the delay: the sum may overflow"},
	{"Steps 0", "Duration never changes"},
	{"Steps 1", "one growth, then constant"},
	{"Steps 2-37", "short sequences"},
	{"Steps >= 38", "the reflector's and past"},
	{"Cap 0", "no cap"},
	{"Cap < Duration", "a grown Duration is capped below the start; a factor 0 keeps it above"},
	{"Cap reached exactly", "the boundary: a step that reaches Cap is not past it"},
	{"Cap MaxInt64", "never binds, but saturation reaches it"},
	{"rand 0", "the jitter's lower end: no jitter added"},
	{"rand near 1", "the jitter's upper end"},
}

// delayDomain is the legal domain of the delay's inputs (the reset check,
// backoff/reset): the reset interval and the time between calls.
var delayDomain = []reachClass{
	{"Reset 0", "never reset"},
	{"Reset 1ns", "resets after any pause"},
	{"Reset ordinary", "the reflector's two minutes, and others"},
	{"Gap 0", "a burst of failures at one instant"},
	{"Gap reset-1ns", "just inside the interval: no reset"},
	{"Gap = reset", "exactly the interval: no reset (more than, not at least)"},
	{"Gap reset+1ns", "just past: reset"},
	{"Gap > reset", "a quiet spell"},
	{"Gap negative", "the clock went back: not a quiet spell"},
}

// tallies counts how often each class was reached.
type tallies map[string]int

func (ta tallies) hit(c string, reached bool) {
	if reached {
		ta[c]++
	} else if _, ok := ta[c]; !ok {
		ta[c] = 0
	}
}

func (ta tallies) check(t *testing.T, what string, domain []reachClass) {
	t.Helper()
	var lines []string
	for _, c := range slices.Sorted(maps.Keys(ta)) {
		lines = append(lines, fmt.Sprintf("  %-24s %6d", c, ta[c]))
	}
	t.Logf("%s:\n%s", what, strings.Join(lines, "\n"))
	for _, c := range domain {
		if ta[c.name] == 0 {
			t.Errorf("%s: %q reached 0 times (%s)", what, c.name, c.why)
		}
	}
}

func classifyParams(ta tallies, p Params) {
	d, f := p.Duration, p.Factor
	ta.hit("Duration 0", d == 0)
	ta.hit("Duration 1ns", d == 1)
	ta.hit("Duration ordinary", d > 1 && d <= 10*time.Hour)
	ta.hit("Duration >= 2^53", d >= 1<<53)
	ta.hit("Duration MaxInt64", d == math.MaxInt64)
	ta.hit("Factor 0", f == 0)
	ta.hit("Factor in (0,1)", f > 0 && f < 1)
	ta.hit("Factor 1", f == 1)
	ta.hit("Factor in (1,2)", f > 1 && f < 2)
	ta.hit("Factor 2", f == 2)
	ta.hit("Factor > 2", f > 2)
	ta.hit("Jitter 0", p.Jitter == 0)
	ta.hit("Jitter in (0,1)", p.Jitter > 0 && p.Jitter < 1)
	ta.hit("Jitter 1", p.Jitter == 1)
	ta.hit("Jitter > 1", p.Jitter > 1)
	ta.hit("Steps 0", p.Steps == 0)
	ta.hit("Steps 1", p.Steps == 1)
	ta.hit("Steps 2-37", p.Steps >= 2 && p.Steps < 38)
	ta.hit("Steps >= 38", p.Steps >= 38)
	ta.hit("Cap 0", p.Cap == 0)
	ta.hit("Cap < Duration", p.Cap > 0 && p.Cap < d)
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
	ta.hit("Cap reached exactly", reached)
	ta.hit("Cap MaxInt64", p.Cap == spec.MaxDuration)
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
	ta := tallies{}
	withSeed(t, func(rt *rapid.T) {
		classifyParams(ta, paramsGen(rt, noJitter))
		classifyParams(ta, paramsGen(rt, jitterGen))
		r := randGen(rt)
		ta.hit("rand 0", r == 0)
		ta.hit("rand near 1", r >= 0.999999)
	})
	ta.check(t, "backoff parameters", paramsDomain)
}

// TestReachDelay draws the reset check's intervals and gaps (resetGen,
// gapGen) and counts each class of delayDomain; every class must come.
func TestReachDelay(t *testing.T) {
	ta := tallies{}
	withSeed(t, func(rt *rapid.T) {
		reset := resetGen(rt, true)
		ta.hit("Reset 0", reset == 0)
		ta.hit("Reset 1ns", reset == 1)
		ta.hit("Reset ordinary", reset > 1)
		for range 10 {
			g := gapGen(rt, reset)
			ta.hit("Gap 0", g == 0)
			ta.hit("Gap reset-1ns", reset > 1 && g == reset-1)
			ta.hit("Gap = reset", reset > 0 && g == reset)
			ta.hit("Gap reset+1ns", g == reset+1)
			ta.hit("Gap > reset", g > reset+1)
			ta.hit("Gap negative", g < 0)
		}
	})
	ta.check(t, "delay inputs", delayDomain)
}
