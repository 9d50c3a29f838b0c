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
	"math"
	"testing"
	"time"

	"github.com/kverify/kverify/props/checkkit"
	"pgregory.net/rapid"
)

// exponentialDomain is NewItemExponentialFailureRateLimiter's (base, max).
var exponentialDomain = []checkkit.ReachClass{
	{Name: "base 0", Why: "every delay is 0, however many failures"},
	{Name: "base 1ns", Why: "2^n itself: exact until 2^62"},
	{Name: "base ordinary", Why: "exact float64 products"},
	{Name: "base >= 2^53", Why: "float64 rounds the products"},
	{Name: "base power of two >= 2^60", Why: "products reach 2^63 exactly, where a float64-to-int conversion overflows"},
	{Name: "base MaxInt64", Why: "the first failure already sits at the top"},
	{Name: "max 0", Why: "every delay is capped to 0"},
	{Name: "max < base", Why: "the first delay is already capped"},
	{Name: "max = base*2^k", Why: "the cap is hit exactly"},
	{Name: "max MaxInt64", Why: "no cap: overflow must saturate"},
}

// fastSlowDomain is NewItemFastSlowRateLimiter's (fast, slow, maxFast).
var fastSlowDomain = []checkkit.ReachClass{
	{Name: "fast 0", Why: "fast attempts are immediate"},
	{Name: "fast < slow", Why: "the usual"},
	{Name: "fast = slow", Why: "the switch is invisible"},
	{Name: "fast > slow", Why: "the limiter does not reorder them"},
	{Name: "delay MaxInt64", Why: "the largest delay, as is"},
	{Name: "maxFast 0", Why: "every attempt is slow"},
	{Name: "maxFast 1", Why: "the first attempt only is fast"},
	{Name: "maxFast in 2-1000", Why: "the switch inside a run"},
	{Name: "maxFast > 1000", Why: "past the runs' thresholds"},
	{Name: "maxFast MaxInt", Why: "never slow: a counter must not overflow into slow"},
}

// bucketDomain is NewBucketRateLimiter's (qps, burst).
var bucketDomain = []checkkit.ReachClass{
	{Name: "qps 0", Why: "no token is ever added: only the burst is granted"},
	{Name: "qps +Inf", Why: "rate.Inf: never delays, whatever the burst"},
	{Name: "qps MaxFloat64", Why: "finite but tokens come at once"},
	{Name: "qps tiny", Why: "the wait overflows a time.Duration: rate.InfDuration"},
	{Name: "qps in (0,1)", Why: "waits longer than a second"},
	{Name: "qps >= 1", Why: "ordinary rates"},
	{Name: "burst 0", Why: "at a finite rate, no token is ever granted"},
	{Name: "burst 1", Why: "no bursting"},
	{Name: "burst 2-5", Why: "small bursts the runs exhaust"},
	{Name: "burst 100", Why: "the default controller's"},
	{Name: "burst > 300", Why: "more than any run of Whens: the bucket never runs dry"},
}

// maxWaitDomain is WithMaxWaitRateLimiter's max and its inner delays.
var maxWaitDomain = []checkkit.ReachClass{
	{Name: "max 0", Why: "every delay is capped to 0"},
	{Name: "max ordinary", Why: "up to ten seconds"},
	{Name: "max MaxInt64", Why: "no cap"},
	{Name: "inner = max", Why: "a tie: the delay is max either way"},
	{Name: "inner = max+1", Why: "just past: capped"},
	{Name: "inner negative", Why: "the inner limiter's delay passes through"},
}

// itemDomain is the per-item operations' domain (every per-item limiter's).
var itemDomain = []checkkit.ReachClass{
	{Name: "When run", Why: "consecutive failures of one item"},
	{Name: "When run > 100", Why: "past the thresholds of the examples"},
	{Name: "Forget unknown", Why: "an item the limiter never saw"},
	{Name: "Forget known", Why: "an item with failures: it starts over"},
	{Name: "NumRequeues unknown", Why: "0"},
	{Name: "NumRequeues known", Why: "the failures since the last Forget"},
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
		ta := checkkit.Tally{}
		withSeed(t, func(rt *rapid.T) {
			for _, g := range []*rapid.Generator[time.Duration]{ordinaryBaseGen, overflowBaseGen} {
				base := g.Draw(rt, "base")
				m := maxFor(rt, base)
				ta.Hit("base 0", base == 0)
				ta.Hit("base 1ns", base == 1)
				ta.Hit("base ordinary", base > 1 && base < 1<<53)
				ta.Hit("base >= 2^53", base >= 1<<53)
				ta.Hit("base power of two >= 2^60", base >= 1<<60 && base&(base-1) == 0)
				ta.Hit("base MaxInt64", base == math.MaxInt64)
				ta.Hit("max 0", m == 0)
				ta.Hit("max < base", m < base)
				exact := false
				for v := base; v > 0 && !exact; v *= 2 {
					exact = v == m
					if v > math.MaxInt64/2 {
						break
					}
				}
				ta.Hit("max = base*2^k", exact)
				ta.Hit("max MaxInt64", m == math.MaxInt64)
			}
		})
		ta.Check(t, "Exponential(base, max)", 1, exponentialDomain)
	})
	t.Run("fast-slow", func(t *testing.T) {
		ta := checkkit.Tally{}
		withSeed(t, func(rt *rapid.T) {
			fast, slow := fastSlowDelayGen.Draw(rt, "fast"), fastSlowDelayGen.Draw(rt, "slow")
			n := fastSlowMaxFastGen.Draw(rt, "maxFast")
			ta.Hit("fast 0", fast == 0)
			ta.Hit("fast < slow", fast < slow)
			ta.Hit("fast = slow", fast == slow)
			ta.Hit("fast > slow", fast > slow)
			ta.Hit("delay MaxInt64", fast == math.MaxInt64 || slow == math.MaxInt64)
			ta.Hit("maxFast 0", n == 0)
			ta.Hit("maxFast 1", n == 1)
			ta.Hit("maxFast in 2-1000", n >= 2 && n <= 1000)
			ta.Hit("maxFast > 1000", n > 1000 && n < math.MaxInt)
			ta.Hit("maxFast MaxInt", n == math.MaxInt)
		})
		ta.Check(t, "FastSlow(fast, slow, maxFast)", 1, fastSlowDomain)
	})
	t.Run("bucket", func(t *testing.T) {
		ta := checkkit.Tally{}
		withSeed(t, func(rt *rapid.T) {
			qps, burst := bucketQPSGen.Draw(rt, "qps"), bucketBurstGen.Draw(rt, "burst")
			ta.Hit("qps 0", qps == 0)
			ta.Hit("qps +Inf", math.IsInf(qps, 1))
			ta.Hit("qps MaxFloat64", qps == math.MaxFloat64)
			ta.Hit("qps tiny", qps > 0 && qps < 1e-9)
			ta.Hit("qps in (0,1)", qps >= 1e-9 && qps < 1)
			ta.Hit("qps >= 1", qps >= 1 && qps < math.MaxFloat64)
			ta.Hit("burst 0", burst == 0)
			ta.Hit("burst 1", burst == 1)
			ta.Hit("burst 2-5", burst >= 2 && burst <= 5)
			ta.Hit("burst 100", burst == 100)
			ta.Hit("burst > 300", burst > 300)
		})
		ta.Check(t, "Bucket(qps, burst)", 1, bucketDomain)
	})
	t.Run("max-wait", func(t *testing.T) {
		ta := checkkit.Tally{}
		withSeed(t, func(rt *rapid.T) {
			m := maxWaitMaxGen.Draw(rt, "max")
			ta.Hit("max 0", m == 0)
			ta.Hit("max ordinary", m > 0 && m <= 10*time.Second)
			ta.Hit("max MaxInt64", m == math.MaxInt64)
			for _, d := range maxWaitScriptGen(m).Draw(rt, "script") {
				ta.Hit("inner = max", d == m)
				ta.Hit("inner = max+1", m < math.MaxInt64 && d == m+1)
				ta.Hit("inner negative", d < 0)
			}
		})
		ta.Check(t, "MaxWait(l, max)", 1, maxWaitDomain)
	})
}

// TestReachItemOps draws the per-item operations (itemOpGen, as the
// exponential, fast-slow and forget checks do) and counts each class of
// itemDomain against the failures each item has had; every class must
// come.
func TestReachItemOps(t *testing.T) {
	ta := checkkit.Tally{}
	withSeed(t, func(rt *rapid.T) {
		fails := map[string]int{}
		for _, o := range rapid.SliceOfN(itemOpGen(1100), 1, 40).Draw(rt, "ops") {
			switch o.Kind {
			case opWhen:
				ta.Hit("When run", o.N > 1)
				ta.Hit("When run > 100", o.N > 100)
				fails[o.Item] += o.N
			case opForget:
				ta.Hit("Forget unknown", fails[o.Item] == 0)
				ta.Hit("Forget known", fails[o.Item] > 0)
				delete(fails, o.Item)
			case opNumRequeues:
				ta.Hit("NumRequeues unknown", fails[o.Item] == 0)
				ta.Hit("NumRequeues known", fails[o.Item] > 0)
			}
		}
	})
	ta.Check(t, "per-item operations", 1, itemDomain)
}
