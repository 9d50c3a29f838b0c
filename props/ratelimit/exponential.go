package ratelimit

import (
	"fmt"
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/kverify/kverify/props/checkkit"
	spec "github.com/kverify/kverify/spec/ratelimit"
	"pgregory.net/rapid"
)

// opKind is an operation on a per-item limiter.
type opKind int

const (
	opWhen opKind = iota
	opNumRequeues
	opForget
)

// itemOp is one operation of a per-item limiter run: N consecutive Whens of
// Item (N >= 1), NumRequeues(Item) or Forget(Item).
type itemOp struct {
	Kind opKind
	Item string
	N    int
}

// itemOpGen draws operations; Whens come in runs of 1 to maxRun.
// Shrinking moves towards a single When of the first item.
func itemOpGen(maxRun int) *rapid.Generator[itemOp] {
	return rapid.Custom(func(t *rapid.T) itemOp {
		item := rapid.SampledFrom(items).Draw(t, "item")
		switch r := rapid.IntRange(0, 99).Draw(t, "op"); {
		case r < 60:
			n := 1
			switch {
			case maxRun > 8:
				n = checkkit.Size(maxRun, 3, 10, 100, 1000).Draw(t, "n")
			case maxRun > 1:
				n = rapid.IntRange(1, maxRun).Draw(t, "n")
			}
			return itemOp{Kind: opWhen, Item: item, N: n}
		case r < 80:
			return itemOp{Kind: opNumRequeues, Item: item}
		default:
			return itemOp{Kind: opForget, Item: item}
		}
	})
}

// dur draws a time.Duration from an int64 generator.
func dur(g *rapid.Generator[int64]) *rapid.Generator[time.Duration] {
	return rapid.Map(g, func(v int64) time.Duration { return time.Duration(v) })
}

func durs(ds ...time.Duration) *rapid.Generator[time.Duration] { return rapid.SampledFrom(ds) }

// ordinaryBaseGen draws bases for which client-go's float64 computation is
// exact within the 40 Whens the ordinary check makes at most: base*2^n is
// an exact float64 and, within 39 doublings, never exactly 2^63 (a power of
// two at most 2^22 needs at least 41 doublings to get there; any other base
// never does).
var ordinaryBaseGen = rapid.OneOf(
	durs(0, 1, 2, 3, 7, time.Microsecond, time.Millisecond, 5*time.Millisecond, time.Second, time.Minute, 1<<22),
	dur(rapid.Int64Range(0, 1<<22)),
	dur(rapid.Int64Range(1<<22, 1<<53).Filter(func(v int64) bool { return v&(v-1) != 0 })),
)

// overflowBaseGen draws the bases where a float64 computation breaks: the
// powers of two whose products reach 2^63 exactly, and bases above 2^53ns
// that float64 rounds.
var overflowBaseGen = rapid.OneOf(
	durs(1, 2, 1<<10, 1<<31, 1<<52, 1<<53+1, 1<<61, 1<<62-1, 1<<62, 1<<62+1, 3<<61, math.MaxInt64/3, math.MaxInt64-1, math.MaxInt64),
	dur(rapid.Int64Range(1<<53, math.MaxInt64)),
)

// maxFor draws a max delay for base: 0, below base, around base*2^k, near
// math.MaxInt64 or anything.
func maxFor(t *rapid.T, base time.Duration) time.Duration {
	switch rapid.IntRange(0, 5).Draw(t, "maxKind") {
	case 0:
		return math.MaxInt64
	case 1:
		return 0
	case 2:
		return dur(rapid.Int64Range(0, max(int64(base)-1, 0))).Draw(t, "max")
	case 3:
		k := rapid.IntRange(0, 62).Draw(t, "k")
		v := int64(base)
		for range k {
			if v > math.MaxInt64/2 {
				break
			}
			v *= 2
		}
		delta := rapid.Int64Range(-1, 1).Draw(t, "delta")
		if (delta < 0 && v == 0) || (delta > 0 && v == math.MaxInt64) {
			delta = 0
		}
		return time.Duration(v + delta)
	case 4:
		return durs(time.Second, 1000*time.Second, 1000*time.Hour, math.MaxInt64-1).Draw(t, "max")
	default:
		return dur(rapid.Int64Range(0, math.MaxInt64)).Draw(t, "max")
	}
}

func exponential(s Subject) func(*testing.T, checkkit.Config) error {
	return exponentialCheck(s, CheckExponential, ordinaryBaseGen, 40, 6, 40)
}

// exponentialOverflow explores extreme bases, then (so that the outcome
// does not depend on the exploration finding them) replays fixed ones.
func exponentialOverflow(s Subject) func(*testing.T, checkkit.Config) error {
	explore := exponentialCheck(s, CheckExponentialOverflow, overflowBaseGen, 20, 70, 0)
	return func(t *testing.T, cfg checkkit.Config) error {
		if err := explore(t, cfg); err != nil {
			return err
		}
		return checkkit.Save(t, cfg, Component, CheckExponentialOverflow, overflowWitness(s))
	}
}

// overflowWitness runs When on one item of Exponential(base, max) n times
// for bases where base*2^n reaches 2^63 exactly or float64 rounds the base.
func overflowWitness(s Subject) error {
	for _, c := range []struct {
		base, max time.Duration
		n         int
	}{
		{1, math.MaxInt64, 66},
		{1 << 62, math.MaxInt64, 3},
		{math.MaxInt64, math.MaxInt64, 2},
		{1<<53 + 1, math.MaxInt64, 2},
	} {
		sc := &script{}
		l, err := s.Exponential(c.base, c.max)
		sc.step(fmt.Sprintf("Exponential(%s, %s)", fmtD(c.base), fmtD(c.max)), "ok", errString(err))
		if err != nil {
			return sc.broke(GAccepted, "Exponential(%v, %v): %v", c.base, c.max, err)
		}
		m := spec.NewExponential(c.base, c.max)
		for i := range c.n {
			got := l.When("a")
			var want time.Duration
			m, want = m.When("a")
			sc.step("When(a)", fmtD(want), fmtD(got))
			switch {
			case got < 0:
				return sc.broke(GNegative, "When(a) after %d retries returned %s", i, fmtD(got))
			case got > c.max:
				return sc.broke(GNeverAboveMax, "When(a) after %d retries returned %s > max %s", i, fmtD(got), fmtD(c.max))
			case got != want:
				return sc.broke(GExponential, "When(a) after %d retries returned %s, want %s", i, fmtD(got), fmtD(want))
			}
		}
	}
	return nil
}

// exponentialCheck runs up to maxOps operations (When runs of up to maxRun,
// at most maxWhens Whens in all unless it is 0) on Exponential(base, max)
// against the model.
func exponentialCheck(s Subject, name string, baseGen *rapid.Generator[time.Duration], maxOps, maxRun, maxWhens int) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, cfg checkkit.Config) error {
		ops := rapid.SliceOfN(itemOpGen(maxRun), 1, maxOps)
		err := checkkit.Rapid(t, cfg, func(rt *rapid.T, rec *checkkit.Recorder) {
			base := baseGen.Draw(rt, "base")
			maxD := maxFor(rt, base)
			l, err := s.Exponential(base, maxD)
			rec.Step(fmt.Sprintf("Exponential(%s, %s)", fmtD(base), fmtD(maxD)), "ok", errString(err))
			if err != nil {
				rec.Fail(rt, GAccepted, "Exponential(%v, %v): %v", base, maxD, err)
			}
			runItemOps(rt, rec, GExponential, l, spec.NewExponential(base, maxD), maxD, clipWhens(ops.Draw(rt, "ops"), maxWhens))
		})
		return checkkit.Save(t, cfg, Component, name, err)
	}
}

// clipWhens shortens the When runs of ops so that they make at most
// maxWhens Whens in all (no limit if maxWhens is 0).
func clipWhens(ops []itemOp, maxWhens int) []itemOp {
	if maxWhens <= 0 {
		return ops
	}
	out := make([]itemOp, 0, len(ops))
	for _, o := range ops {
		if o.Kind == opWhen {
			if maxWhens == 0 {
				continue
			}
			o.N = min(o.N, maxWhens)
			maxWhens -= o.N
		}
		out = append(out, o)
	}
	return out
}

func errString(err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	return "ok"
}

// runItemOps applies ops to l and to the per-item model m. Every When must
// return the model's delay, never a negative one and never more than
// ceiling (when ceiling >= 0); NumRequeues must be the model's, and after a
// Forget every item's NumRequeues must be the model's.
func runItemOps(rt *rapid.T, rec *checkkit.Recorder, exact string, l Limiter, m spec.Model, ceiling time.Duration, ops []itemOp) {
	var zero time.Time
	for _, o := range ops {
		switch o.Kind {
		case opWhen:
			for range o.N {
				got := l.When(o.Item)
				var want time.Duration
				m, want = m.Step(o.Item, zero)
				op := "When(" + o.Item + ")"
				rec.Step(op, fmtD(want), fmtD(got))
				switch {
				case got < 0:
					rec.Fail(rt, GNegative, "%s returned %s after %d retries", op, fmtD(got), m.NumRequeues(o.Item)-1)
				case ceiling >= 0 && got > ceiling:
					rec.Fail(rt, GNeverAboveMax, "%s returned %s > max %s", op, fmtD(got), fmtD(ceiling))
				case got != want:
					rec.Fail(rt, exact, "%s after %d retries returned %s, want %s", op, m.NumRequeues(o.Item)-1, fmtD(got), fmtD(want))
				}
			}
		case opNumRequeues:
			checkRequeues(rt, rec, GNumRequeues, l, m, o.Item)
		case opForget:
			l.Forget(o.Item)
			m = m.Reset(o.Item)
			rec.Step("Forget("+o.Item+")", "", "")
			for _, it := range items {
				checkRequeues(rt, rec, GForget, l, m, it)
			}
		}
	}
}

func checkRequeues(rt *rapid.T, rec *checkkit.Recorder, guarantee string, l Limiter, m spec.Model, item string) {
	got, want := l.NumRequeues(item), m.NumRequeues(item)
	op := "NumRequeues(" + item + ")"
	rec.Step(op, strconv.Itoa(want), strconv.Itoa(got))
	if got != want {
		rec.Fail(rt, guarantee, "%s = %d, want %d", op, got, want)
	}
}

// fastSlowDelayGen draws the fast and slow delays of the fast-slow check;
// fastSlowMaxFastGen its maxFast, which with the runs of Whens reaches past
// client-go's and the examples' thresholds (3, 10, 100, 1000) as well as
// the small ones.
var (
	fastSlowDelayGen = rapid.OneOf(
		durs(0, 1, 5*time.Millisecond, 10*time.Second, math.MaxInt64),
		dur(rapid.Int64Range(0, math.MaxInt64)),
	)
	fastSlowMaxFastGen = rapid.OneOf(rapid.IntRange(0, 6), rapid.SampledFrom([]int{0, 1, math.MaxInt}), checkkit.Size(1100, 3, 10, 100, 1000))
)

func fastSlow(s Subject) func(*testing.T, checkkit.Config) error {
	delayGen, maxFastGen := fastSlowDelayGen, fastSlowMaxFastGen
	ops := rapid.SliceOfN(itemOpGen(1100), 1, 40)
	return func(t *testing.T, cfg checkkit.Config) error {
		err := checkkit.Rapid(t, cfg, func(rt *rapid.T, rec *checkkit.Recorder) {
			fast := delayGen.Draw(rt, "fast")
			slow := delayGen.Draw(rt, "slow")
			maxFast := maxFastGen.Draw(rt, "maxFast")
			l, err := s.FastSlow(fast, slow, maxFast)
			rec.Step(fmt.Sprintf("FastSlow(%s, %s, %d)", fmtD(fast), fmtD(slow), maxFast), "ok", errString(err))
			if err != nil {
				rec.Fail(rt, GAccepted, "FastSlow(%v, %v, %d): %v", fast, slow, maxFast, err)
			}
			runItemOps(rt, rec, GFastSlow, l, spec.NewFastSlow(fast, slow, maxFast), max(fast, slow), ops.Draw(rt, "ops"))
		})
		return checkkit.Save(t, cfg, Component, CheckFastSlow, err)
	}
}

// exponentialSequence replays client-go's own expectations
// (default_rate_limiters_test.go) and the controller backoff's sequence.
func exponentialSequence(s Subject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, cfg checkkit.Config) error {
		sc := &script{}
		when := func(l Limiter, item string, want time.Duration) error {
			got := l.When(item)
			sc.step("When("+item+")", fmtD(want), fmtD(got))
			if got != want {
				return sc.broke(GExponentialClientGo, "When(%s) = %s, want %s", item, fmtD(got), fmtD(want))
			}
			return nil
		}
		requeues := func(l Limiter, item string, want int) error {
			got := l.NumRequeues(item)
			sc.step("NumRequeues("+item+")", strconv.Itoa(want), strconv.Itoa(got))
			if got != want {
				return sc.broke(GExponentialClientGo, "NumRequeues(%s) = %d, want %d", item, got, want)
			}
			return nil
		}
		// thousand checks 1000 When calls of item against the model; only a
		// mismatch is recorded step by step.
		thousand := func(l Limiter, item string, base, maxD time.Duration) error {
			for i := range 1000 {
				got := l.When(item)
				if want := spec.ExponentialDelay(base, maxD, i); got != want {
					sc.step(fmt.Sprintf("When(%s) #%d", item, i+1), fmtD(want), fmtD(got))
					return sc.broke(GExponentialClientGo, "call %d of When(%s) = %s, want %s", i+1, item, fmtD(got), fmtD(want))
				}
			}
			sc.step("When("+item+") x1000", "", "")
			return nil
		}
		newExp := func(base, maxD time.Duration) (Limiter, error) {
			l, err := s.Exponential(base, maxD)
			sc.step(fmt.Sprintf("Exponential(%v, %v)", base, maxD), "ok", errString(err))
			if err != nil {
				return nil, sc.broke(GAccepted, "Exponential(%v, %v): %v", base, maxD, err)
			}
			return l, nil
		}
		run := func() error {
			// The controller backoff: 5ms doubling, 1000s from the 19th call.
			l, err := newExp(5*time.Millisecond, 1000*time.Second)
			if err != nil {
				return err
			}
			d := 5 * time.Millisecond
			for range 25 {
				if err := when(l, "ctl", min(d, 1000*time.Second)); err != nil {
					return err
				}
				d *= 2
			}
			if err := requeues(l, "ctl", 25); err != nil {
				return err
			}

			// TestItemExponentialFailureRateLimiter.
			if l, err = newExp(time.Millisecond, time.Second); err != nil {
				return err
			}
			for _, w := range []time.Duration{1, 2, 4, 8, 16} {
				if err := when(l, "one", w*time.Millisecond); err != nil {
					return err
				}
			}
			if err := requeues(l, "one", 5); err != nil {
				return err
			}
			for _, w := range []time.Duration{1, 2} {
				if err := when(l, "two", w*time.Millisecond); err != nil {
					return err
				}
			}
			if err := requeues(l, "two", 2); err != nil {
				return err
			}
			l.Forget("one")
			sc.step("Forget(one)", "", "")
			if err := requeues(l, "one", 0); err != nil {
				return err
			}
			if err := when(l, "one", time.Millisecond); err != nil {
				return err
			}
			if err := requeues(l, "two", 2); err != nil {
				return err
			}

			// TestItemExponentialFailureRateLimiterOverFlow, with the
			// default per-item limiter (1ms, 1000s) where there is one.
			if s.DefaultItemBased != nil {
				l = s.DefaultItemBased()
				sc.step("DefaultItemBased()", "", "")
			} else if l, err = newExp(time.Millisecond, 1000*time.Second); err != nil {
				return err
			}
			for i := range 5 {
				if err := when(l, "one", time.Millisecond<<i); err != nil {
					return err
				}
			}
			if err := when(l, "one", 32*time.Millisecond); err != nil {
				return err
			}
			if err := thousand(l, "overflow1", time.Millisecond, 1000*time.Second); err != nil {
				return err
			}
			if err := when(l, "overflow1", 1000*time.Second); err != nil {
				return err
			}
			if err := requeues(l, "overflow1", 1001); err != nil {
				return err
			}

			if l, err = newExp(time.Minute, 1000*time.Hour); err != nil {
				return err
			}
			for _, w := range []time.Duration{1, 2, 4} {
				if err := when(l, "two", w*time.Minute); err != nil {
					return err
				}
			}
			if err := thousand(l, "overflow2", time.Minute, 1000*time.Hour); err != nil {
				return err
			}
			return when(l, "overflow2", 1000*time.Hour)
		}
		return checkkit.Save(t, cfg, Component, CheckExponentialSequence, run())
	}
}
