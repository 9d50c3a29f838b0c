package ratelimit

// The reach of the limiter checks' generators (issue 27, class 1): the
// legal domain of every constructor's parameters and of the per-item
// operations, as tables, each class counted over ordinary draws with a
// fixed seed and held to a floor of one, as checkkit's sizes_test does for
// size classes. The illegal parameters (negative durations, qps or burst,
// NaN, nil limiters) are ratelimit/bad-input's, which makes each of them
// (badCases).

import (
	"flag"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// reachClass is one class of a parameter's legal values.
type reachClass struct {
	name string
	why  string // why an implementation may get this class wrong
}

// exponentialDomain is NewItemExponentialFailureRateLimiter's (base, max).
var exponentialDomain = []reachClass{
	{"base 0", "every delay is 0, however many failures"},
	{"base 1ns", "2^n itself: exact until 2^62"},
	{"base ordinary", "exact float64 products"},
	{"base >= 2^53", "float64 rounds the products"},
	{"base power of two >= 2^60", "products reach 2^63 exactly, where a float64-to-int conversion overflows"},
	{"base MaxInt64", "the first failure already sits at the top"},
	{"max 0", "every delay is capped to 0"},
	{"max < base", "the first delay is already capped"},
	{"max = base*2^k", "the cap is hit exactly"},
	{"max MaxInt64", "no cap: overflow must saturate"},
}

// fastSlowDomain is NewItemFastSlowRateLimiter's (fast, slow, maxFast).
var fastSlowDomain = []reachClass{
	{"fast 0", "fast attempts are immediate"},
	{"fast < slow", "the usual"},
	{"fast = slow", "the switch is invisible"},
	{"fast > slow", "the limiter does not reorder them"},
	{"delay MaxInt64", "the largest delay, as is"},
	{"maxFast 0", "every attempt is slow"},
	{"maxFast 1", "the first attempt only is fast"},
	{"maxFast in 2-1000", "the switch inside a run"},
	{"maxFast > 1000", "past the runs' thresholds"},
	{"maxFast MaxInt", "never slow: a counter must not overflow into slow"},
}

// bucketDomain is NewBucketRateLimiter's (qps, burst).
var bucketDomain = []reachClass{
	{"qps 0", "no token is ever added: only the burst is granted"},
	{"qps +Inf", "rate.Inf: never delays, whatever the burst"},
	{"qps MaxFloat64", "finite but tokens come at once"},
	{"qps tiny", "the wait overflows a time.Duration: rate.InfDuration"},
	{"qps in (0,1)", "waits longer than a second"},
	{"qps >= 1", "ordinary rates"},
	{"burst 0", "at a finite rate, no token is ever granted"},
	{"burst 1", "no bursting"},
	{"burst 2-5", "small bursts the runs exhaust"},
	{"burst 100", "the default controller's"},
	{"burst > 300", "more than any run of Whens: the bucket never runs dry"},
}

// maxWaitDomain is WithMaxWaitRateLimiter's max and its inner delays.
var maxWaitDomain = []reachClass{
	{"max 0", "every delay is capped to 0"},
	{"max ordinary", "up to ten seconds"},
	{"max MaxInt64", "no cap"},
	{"inner = max", "a tie: the delay is max either way"},
	{"inner = max+1", "just past: capped"},
	{"inner negative", "the inner limiter's delay passes through"},
}

// itemDomain is the per-item operations' domain (every per-item limiter's).
var itemDomain = []reachClass{
	{"When run", "consecutive failures of one item"},
	{"When run > 100", "past the thresholds of the examples"},
	{"Forget unknown", "an item the limiter never saw"},
	{"Forget known", "an item with failures: it starts over"},
	{"NumRequeues unknown", "0"},
	{"NumRequeues known", "the failures since the last Forget"},
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
		lines = append(lines, fmt.Sprintf("  %-28s %6d", c, ta[c]))
	}
	t.Logf("%s:\n%s", what, strings.Join(lines, "\n"))
	for _, c := range domain {
		if ta[c.name] == 0 {
			t.Errorf("%s: %q reached 0 times (%s)", what, c.name, c.why)
		}
	}
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

// TestReachConstructors draws every constructor's parameters as the checks
// do and counts each class of their domains; every class must come.
//
// Measured (seed 27000, 100 draws): before, "burst > 300" came 0 times;
// the other classes all came (the log gives the counts).
func TestReachConstructors(t *testing.T) {
	t.Run("exponential", func(t *testing.T) {
		ta := tallies{}
		withSeed(t, func(rt *rapid.T) {
			for _, g := range []*rapid.Generator[time.Duration]{ordinaryBaseGen, overflowBaseGen} {
				base := g.Draw(rt, "base")
				m := maxFor(rt, base)
				ta.hit("base 0", base == 0)
				ta.hit("base 1ns", base == 1)
				ta.hit("base ordinary", base > 1 && base < 1<<53)
				ta.hit("base >= 2^53", base >= 1<<53)
				ta.hit("base power of two >= 2^60", base >= 1<<60 && base&(base-1) == 0)
				ta.hit("base MaxInt64", base == math.MaxInt64)
				ta.hit("max 0", m == 0)
				ta.hit("max < base", m < base)
				exact := false
				for v := base; v > 0 && !exact; v *= 2 {
					exact = v == m
					if v > math.MaxInt64/2 {
						break
					}
				}
				ta.hit("max = base*2^k", exact)
				ta.hit("max MaxInt64", m == math.MaxInt64)
			}
		})
		ta.check(t, "Exponential(base, max)", exponentialDomain)
	})
	t.Run("fast-slow", func(t *testing.T) {
		ta := tallies{}
		withSeed(t, func(rt *rapid.T) {
			fast, slow := fastSlowDelayGen.Draw(rt, "fast"), fastSlowDelayGen.Draw(rt, "slow")
			n := fastSlowMaxFastGen.Draw(rt, "maxFast")
			ta.hit("fast 0", fast == 0)
			ta.hit("fast < slow", fast < slow)
			ta.hit("fast = slow", fast == slow)
			ta.hit("fast > slow", fast > slow)
			ta.hit("delay MaxInt64", fast == math.MaxInt64 || slow == math.MaxInt64)
			ta.hit("maxFast 0", n == 0)
			ta.hit("maxFast 1", n == 1)
			ta.hit("maxFast in 2-1000", n >= 2 && n <= 1000)
			ta.hit("maxFast > 1000", n > 1000 && n < math.MaxInt)
			ta.hit("maxFast MaxInt", n == math.MaxInt)
		})
		ta.check(t, "FastSlow(fast, slow, maxFast)", fastSlowDomain)
	})
	t.Run("bucket", func(t *testing.T) {
		ta := tallies{}
		withSeed(t, func(rt *rapid.T) {
			qps, burst := bucketQPSGen.Draw(rt, "qps"), bucketBurstGen.Draw(rt, "burst")
			ta.hit("qps 0", qps == 0)
			ta.hit("qps +Inf", math.IsInf(qps, 1))
			ta.hit("qps MaxFloat64", qps == math.MaxFloat64)
			ta.hit("qps tiny", qps > 0 && qps < 1e-9)
			ta.hit("qps in (0,1)", qps >= 1e-9 && qps < 1)
			ta.hit("qps >= 1", qps >= 1 && qps < math.MaxFloat64)
			ta.hit("burst 0", burst == 0)
			ta.hit("burst 1", burst == 1)
			ta.hit("burst 2-5", burst >= 2 && burst <= 5)
			ta.hit("burst 100", burst == 100)
			ta.hit("burst > 300", burst > 300)
		})
		ta.check(t, "Bucket(qps, burst)", bucketDomain)
	})
	t.Run("max-wait", func(t *testing.T) {
		ta := tallies{}
		withSeed(t, func(rt *rapid.T) {
			m := maxWaitMaxGen.Draw(rt, "max")
			ta.hit("max 0", m == 0)
			ta.hit("max ordinary", m > 0 && m <= 10*time.Second)
			ta.hit("max MaxInt64", m == math.MaxInt64)
			for _, d := range maxWaitScriptGen(m).Draw(rt, "script") {
				ta.hit("inner = max", d == m)
				ta.hit("inner = max+1", m < math.MaxInt64 && d == m+1)
				ta.hit("inner negative", d < 0)
			}
		})
		ta.check(t, "MaxWait(l, max)", maxWaitDomain)
	})
}

// TestReachItemOps draws the per-item operations (itemOpGen, as the
// exponential, fast-slow and forget checks do) and counts each class of
// itemDomain against the failures each item has had; every class must
// come.
func TestReachItemOps(t *testing.T) {
	ta := tallies{}
	withSeed(t, func(rt *rapid.T) {
		fails := map[string]int{}
		for _, o := range rapid.SliceOfN(itemOpGen(1100), 1, 40).Draw(rt, "ops") {
			switch o.Kind {
			case opWhen:
				ta.hit("When run", o.N > 1)
				ta.hit("When run > 100", o.N > 100)
				fails[o.Item] += o.N
			case opForget:
				ta.hit("Forget unknown", fails[o.Item] == 0)
				ta.hit("Forget known", fails[o.Item] > 0)
				delete(fails, o.Item)
			case opNumRequeues:
				ta.hit("NumRequeues unknown", fails[o.Item] == 0)
				ta.hit("NumRequeues known", fails[o.Item] > 0)
			}
		}
	})
	ta.check(t, "per-item operations", itemDomain)
}
