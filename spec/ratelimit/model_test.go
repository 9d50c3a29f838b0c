package ratelimit

import (
	"math"
	"reflect"
	"testing"
	"time"

	"golang.org/x/time/rate"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func whens(t *testing.T, m Model, item string, want ...time.Duration) Model {
	t.Helper()
	for i, w := range want {
		var d time.Duration
		m, d = m.Step(item, t0)
		if d != w {
			t.Errorf("%s call %d: delay %v, want %v", item, i+1, d, w)
		}
	}
	return m
}

func requeues(t *testing.T, m Model, item string, want int) {
	t.Helper()
	if got := m.NumRequeues(item); got != want {
		t.Errorf("NumRequeues(%s) = %d, want %d", item, got, want)
	}
}

const ms = time.Millisecond

// TestExponentialUpstream replays upstream's TestItemExponentialFailureRateLimiter.
func TestExponentialUpstream(t *testing.T) {
	var m Model = NewExponential(ms, time.Second)
	m = whens(t, m, "one", 1*ms, 2*ms, 4*ms, 8*ms, 16*ms)
	requeues(t, m, "one", 5)
	m = whens(t, m, "two", 1*ms, 2*ms)
	requeues(t, m, "two", 2)
	m = m.Reset("one")
	requeues(t, m, "one", 0)
	m = whens(t, m, "one", 1*ms)
	requeues(t, m, "two", 2)
}

// TestExponentialOverflowUpstream replays upstream's
// TestItemExponentialFailureRateLimiterOverFlow.
func TestExponentialOverflowUpstream(t *testing.T) {
	m := NewExponential(ms, 1000*time.Second)
	for i := 0; i < 5; i++ {
		m, _ = m.When("one")
	}
	if _, d := m.When("one"); d != 32*ms {
		t.Errorf("6th call: %v, want 32ms", d)
	}
	for i := 0; i < 1000; i++ {
		m, _ = m.When("overflow1")
	}
	if _, d := m.When("overflow1"); d != 1000*time.Second {
		t.Errorf("1001st call: %v, want 1000s", d)
	}
	m = NewExponential(time.Minute, 1000*time.Hour)
	for i := 0; i < 2; i++ {
		m, _ = m.When("two")
	}
	if _, d := m.When("two"); d != 4*time.Minute {
		t.Errorf("3rd call: %v, want 4m", d)
	}
	for i := 0; i < 1000; i++ {
		m, _ = m.When("overflow2")
	}
	if _, d := m.When("overflow2"); d != 1000*time.Hour {
		t.Errorf("1001st call: %v, want 1000h", d)
	}
}

func TestExponentialDelay(t *testing.T) {
	cases := []struct {
		base, max time.Duration
		n         int
		want      time.Duration
	}{
		{5 * ms, 1000 * time.Second, 0, 5 * ms},
		{5 * ms, 1000 * time.Second, 4, 80 * ms},
		{5 * ms, 1000 * time.Second, 17, 655360 * ms},
		{5 * ms, 1000 * time.Second, 18, 1000 * time.Second},
		{0, math.MaxInt64, math.MaxInt, 0},
		{ms, 0, 0, 0},
		{time.Second, ms, 0, ms},
		{1, math.MaxInt64, 62, 1 << 62},
		{1, math.MaxInt64, 63, math.MaxInt64}, // upstream: math.MinInt64
		{1 << 62, math.MaxInt64, 1, math.MaxInt64},
		{math.MaxInt64, math.MaxInt64, 0, math.MaxInt64},
		{math.MaxInt64, math.MaxInt64, math.MaxInt, math.MaxInt64},
		{3, 1 << 60, 58, 3 << 58},
		{3, 1 << 60, 59, 1 << 60},
	}
	for _, c := range cases {
		if got := ExponentialDelay(c.base, c.max, c.n); got != c.want {
			t.Errorf("ExponentialDelay(%d, %d, %d) = %d, want %d", c.base, c.max, c.n, got, c.want)
		}
	}
}

func TestExponentialSaturates(t *testing.T) {
	m := Exponential{Base: ms, Max: time.Hour, Failures: map[string]int{"x": math.MaxInt - 1}}
	m, d := m.When("x")
	if d != time.Hour || m.NumRequeues("x") != math.MaxInt {
		t.Fatalf("delay %v, requeues %d", d, m.NumRequeues("x"))
	}
	m, d = m.When("x")
	if d != time.Hour || m.NumRequeues("x") != math.MaxInt {
		t.Fatalf("delay %v, requeues %d", d, m.NumRequeues("x"))
	}
	// The zero value works too.
	var z Exponential
	z, d = z.When("x")
	if d != 0 || z.NumRequeues("x") != 1 {
		t.Fatalf("zero value: delay %v, requeues %d", d, z.NumRequeues("x"))
	}
}

// TestFastSlowUpstream replays upstream's TestItemFastSlowRateLimiter.
func TestFastSlowUpstream(t *testing.T) {
	var m Model = NewFastSlow(5*ms, 10*time.Second, 3)
	m = whens(t, m, "one", 5*ms, 5*ms, 5*ms, 10*time.Second, 10*time.Second)
	requeues(t, m, "one", 5)
	m = whens(t, m, "two", 5*ms, 5*ms)
	requeues(t, m, "two", 2)
	m = m.Reset("one")
	requeues(t, m, "one", 0)
	whens(t, m, "one", 5*ms)
}

func TestFastSlowEdges(t *testing.T) {
	whens(t, NewFastSlow(1, 2, 0), "x", 2, 2, 2)
	m := FastSlow{Fast: 1, Slow: 2, MaxFast: math.MaxInt, Failures: map[string]int{"x": math.MaxInt - 1}}
	mm := whens(t, m, "x", 1, 2, 2)
	requeues(t, mm, "x", math.MaxInt)
	for k := 1; k <= 5; k++ {
		want := time.Duration(2)
		if k <= 3 {
			want = 1
		}
		if got := FastSlowDelay(1, 2, 3, k); got != want {
			t.Errorf("FastSlowDelay(k=%d) = %v, want %v", k, got, want)
		}
	}
}

// TestMaxOfUpstream replays upstream's TestMaxOfRateLimiter.
func TestMaxOfUpstream(t *testing.T) {
	var m Model = NewMaxOf(NewFastSlow(5*ms, 3*time.Second, 3), NewExponential(ms, time.Second))
	m = whens(t, m, "one", 5*ms, 5*ms, 5*ms, 3*time.Second, 3*time.Second)
	requeues(t, m, "one", 5)
	m = whens(t, m, "two", 5*ms, 5*ms)
	requeues(t, m, "two", 2)
	m = m.Reset("one")
	requeues(t, m, "one", 0)
	whens(t, m, "one", 5*ms)
}

// step is upstream's StepRateLimiter as a model: Base for the first
// Threshold retries overall, Max afterwards.
type step struct {
	Count, Threshold int
	Base, Max        time.Duration
}

func (s step) Step(string, time.Time) (Model, time.Duration) {
	s.Count++
	if s.Count <= s.Threshold {
		return s, s.Base
	}
	return s, s.Max
}
func (s step) Reset(string) Model     { return s }
func (s step) NumRequeues(string) int { return 0 }

// TestMaxWaitUpstream replays upstream's TestWithMaxWaitRateLimiter.
func TestMaxWaitUpstream(t *testing.T) {
	var m Model = MaxWait{Inner: step{Threshold: 100, Base: 5 * ms, Max: 1000 * time.Second}, MaxDelay: 500 * time.Second}
	for i := 0; i < 100; i++ {
		m = whens(t, m, "x", 5*ms)
	}
	for i := 0; i < 100; i++ {
		m = whens(t, m, "x", 500*time.Second)
	}
	requeues(t, m, "x", 0)
}

// TestBucketAgainstRate drives a rate.Limiter with explicit instants
// (ReserveN(now, 1).DelayFrom(now)) and the model with the same instants.
func TestBucketAgainstRate(t *testing.T) {
	const tolerance = time.Microsecond
	// Offsets in ms from t0, including a step back in time.
	offsets := []int64{0, 0, 0, 1, 2, 50, 50, 51, 100, 99, 300, 300, 300, 300, 2000, 2001, 2001, 2001, 2001, 2001, 10_000}
	configs := []struct {
		qps   float64
		burst int
	}{{10, 3}, {10, 100}, {1, 1}, {0.5, 2}, {1000, 1}, {3, 2}, {0, 2}, {10, 0}, {0, 0}, {rateInf, 0}, {math.Inf(1), 3}, {1e-300, 1}}
	for _, c := range configs {
		lim := rate.NewLimiter(rate.Limit(c.qps), c.burst)
		if math.IsInf(c.qps, 1) {
			lim = rate.NewLimiter(rate.Inf, c.burst)
		}
		m := NewBucket(c.qps, c.burst)
		for i, off := range offsets {
			now := t0.Add(time.Duration(off) * ms)
			want := lim.ReserveN(now, 1).DelayFrom(now)
			var got time.Duration
			m, got = m.When(now)
			if diff := got - want; diff > tolerance || diff < -tolerance {
				t.Errorf("qps=%v burst=%d call %d at +%dms: model %v, rate %v", c.qps, c.burst, i+1, off, got, want)
			}
			if tm, tr := m.TokensAt(now), lim.TokensAt(now); c.qps != rateInf && !math.IsInf(c.qps, 1) && math.Abs(tm-tr) > 1e-6 {
				t.Errorf("qps=%v burst=%d call %d: model tokens %v, rate %v", c.qps, c.burst, i+1, tm, tr)
			}
		}
	}
}

// rateInf is rate.Inf as a float64.
const rateInf = float64(rate.Inf)

func TestBucketSequence(t *testing.T) {
	// 10 qps, burst 100: 100 free tokens at one instant, then 100ms, 200ms, ...
	m := NewBucket(DefaultQPS, DefaultBurst)
	var d time.Duration
	for i := 0; i < 100; i++ {
		if m, d = m.When(t0); d != 0 {
			t.Fatalf("call %d: %v, want 0", i+1, d)
		}
	}
	for k := 1; k <= 5; k++ {
		if m, d = m.When(t0); d != time.Duration(k)*100*ms {
			t.Errorf("call %d: %v, want %v", 100+k, d, time.Duration(k)*100*ms)
		}
	}
	// One second later 10 tokens came back: the debt of 5 is now a credit of 5.
	later := t0.Add(time.Second)
	if got := m.TokensAt(later); math.Abs(got-5) > 1e-9 {
		t.Errorf("tokens after 1s: %v, want 5", got)
	}
	// Zero qps: the burst, then never.
	z := NewBucket(0, 1)
	z, d = z.When(t0)
	if d != 0 {
		t.Errorf("qps 0 first call: %v", d)
	}
	if _, d = z.When(t0.Add(time.Hour)); d != InfDuration {
		t.Errorf("qps 0 second call: %v, want InfDuration", d)
	}
	requeues(t, z, "x", 0)
}

func TestDefaultController(t *testing.T) {
	var m Model = DefaultController()
	m = whens(t, m, "x", 5*ms, 10*ms, 20*ms, 40*ms, 80*ms)
	requeues(t, m, "x", 5)
	m = m.Reset("x")
	requeues(t, m, "x", 0)
	// 95 tokens are left: 95 fresh items get 5ms, the next waits 100ms.
	for i := 0; i < 95; i++ {
		m = whens(t, m, string(rune('a'+i%26))+string(rune('a'+i/26)), 5*ms)
	}
	whens(t, m, "late", 100*ms)

	d := Model(DefaultItemBased())
	whens(t, d, "x", 1*ms, 2*ms, 4*ms, 8*ms, 16*ms, 32*ms)
}

// TestNoMutation checks that transitions leave their receivers unchanged.
func TestNoMutation(t *testing.T) {
	models := []Model{
		NewExponential(ms, time.Second),
		NewFastSlow(ms, time.Second, 2),
		NewBucket(10, 2),
		NewMaxOf(NewExponential(ms, time.Second), NewBucket(1, 1)),
		MaxWait{Inner: NewMaxOf(NewFastSlow(ms, time.Second, 1), NewBucket(1, 1)), MaxDelay: 10 * ms},
		DefaultController(),
	}
	for i, m := range models {
		// Give m some history first.
		for j := 0; j < 3; j++ {
			m, _ = m.Step("a", t0.Add(time.Duration(j)*ms))
		}
		snapshot := deepCopy(m)
		next, _ := m.Step("a", t0.Add(time.Second))
		next, _ = next.Step("b", t0.Add(time.Second))
		_ = next.Reset("a")
		_ = m.Reset("a")
		if !reflect.DeepEqual(m, snapshot) {
			t.Errorf("model %d was mutated: %#v, was %#v", i, m, snapshot)
		}
	}
}

// deepCopy copies the maps and slices of a model.
func deepCopy(m Model) Model {
	cp := func(f map[string]int) map[string]int {
		c := make(map[string]int, len(f))
		for k, v := range f {
			c[k] = v
		}
		return c
	}
	switch v := m.(type) {
	case Exponential:
		v.Failures = cp(v.Failures)
		return v
	case FastSlow:
		v.Failures = cp(v.Failures)
		return v
	case MaxOf:
		parts := make([]Model, len(v.Parts))
		for i, p := range v.Parts {
			parts[i] = deepCopy(p)
		}
		return MaxOf{Parts: parts}
	case MaxWait:
		v.Inner = deepCopy(v.Inner)
		return v
	}
	return m
}
