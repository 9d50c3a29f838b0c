package ratelimit

import (
	"fmt"
	"math"
	"math/big"
	"sync"
	"testing"
	"time"

	"golang.org/x/time/rate"
)

// bigDelay is an oracle for exponentialDelay that shares no code with it:
// min(base*2^n, max) in arbitrary precision. n is capped at 64, which does not
// change the result: for base >= 1, base*2^64 > math.MaxInt64 >= max.
func bigDelay(base, max time.Duration, n int) time.Duration {
	if n > 64 {
		n = 64
	}
	v := new(big.Int).Lsh(big.NewInt(int64(base)), uint(n))
	if v.Cmp(big.NewInt(int64(max))) > 0 {
		return max
	}
	return time.Duration(v.Int64())
}

func mustExp[T comparable](t *testing.T, base, max time.Duration) *ItemExponential[T] {
	t.Helper()
	l, err := NewItemExponential[T](base, max)
	if err != nil {
		t.Fatalf("NewItemExponential(%v, %v): %v", base, max, err)
	}
	return l
}

func mustFastSlow[T comparable](t *testing.T, fast, slow time.Duration, maxFast int) *ItemFastSlow[T] {
	t.Helper()
	l, err := NewItemFastSlow[T](fast, slow, maxFast)
	if err != nil {
		t.Fatalf("NewItemFastSlow(%v, %v, %d): %v", fast, slow, maxFast, err)
	}
	return l
}

func expectWhen[T comparable](t *testing.T, l Limiter[T], item T, want time.Duration) {
	t.Helper()
	if got := l.When(item); got != want {
		t.Errorf("When(%v) = %v, want %v", item, got, want)
	}
}

func expectRequeues[T comparable](t *testing.T, l Limiter[T], item T, want int) {
	t.Helper()
	if got := l.NumRequeues(item); got != want {
		t.Errorf("NumRequeues(%v) = %d, want %d", item, got, want)
	}
}

// TestItemExponentialUpstream is upstream's TestItemExponentialFailureRateLimiter.
func TestItemExponentialUpstream(t *testing.T) {
	l := mustExp[string](t, time.Millisecond, time.Second)
	for _, want := range []time.Duration{1, 2, 4, 8, 16} {
		expectWhen[string](t, l, "one", want*time.Millisecond)
	}
	expectRequeues[string](t, l, "one", 5)
	expectWhen[string](t, l, "two", time.Millisecond)
	expectWhen[string](t, l, "two", 2*time.Millisecond)
	expectRequeues[string](t, l, "two", 2)
	l.Forget("one")
	expectRequeues[string](t, l, "one", 0)
	expectWhen[string](t, l, "one", time.Millisecond)
	expectRequeues[string](t, l, "two", 2)
}

// TestItemExponentialOverflowUpstream is upstream's
// TestItemExponentialFailureRateLimiterOverFlow.
func TestItemExponentialOverflowUpstream(t *testing.T) {
	l := mustExp[string](t, time.Millisecond, 1000*time.Second)
	for i := 0; i < 5; i++ {
		l.When("one")
	}
	expectWhen[string](t, l, "one", 32*time.Millisecond)
	for i := 0; i < 1000; i++ {
		l.When("overflow1")
	}
	expectWhen[string](t, l, "overflow1", 1000*time.Second)

	l = mustExp[string](t, time.Minute, 1000*time.Hour)
	for i := 0; i < 2; i++ {
		l.When("two")
	}
	expectWhen[string](t, l, "two", 4*time.Minute)
	for i := 0; i < 1000; i++ {
		l.When("overflow2")
	}
	expectWhen[string](t, l, "overflow2", 1000*time.Hour)
}

// TestItemExponentialControllerSequence checks the per-item sequence of the
// default controller: 5ms, 10ms, 20ms, ... doubling until capped at 1000s.
func TestItemExponentialControllerSequence(t *testing.T) {
	l := mustExp[int](t, 5*time.Millisecond, 1000*time.Second)
	want := []time.Duration{
		5 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond,
		40 * time.Millisecond, 80 * time.Millisecond, 160 * time.Millisecond,
		320 * time.Millisecond, 640 * time.Millisecond, 1280 * time.Millisecond,
		2560 * time.Millisecond, 5120 * time.Millisecond, 10240 * time.Millisecond,
		20480 * time.Millisecond, 40960 * time.Millisecond, 81920 * time.Millisecond,
		163840 * time.Millisecond, 327680 * time.Millisecond, 655360 * time.Millisecond,
		1000 * time.Second, 1000 * time.Second,
	}
	for i, w := range want {
		if got := l.When(7); got != w {
			t.Errorf("call %d: When = %v, want %v", i+1, got, w)
		}
	}
	for i := 0; i < 1000; i++ {
		if got := l.When(7); got != 1000*time.Second {
			t.Fatalf("call %d: When = %v, want 1000s", len(want)+i+1, got)
		}
	}
	expectRequeues(t, Limiter[int](l), 7, len(want)+1000)
}

// TestItemExponentialEdges runs 10,000 calls for extreme configurations and
// compares every delay with the big-integer oracle.
func TestItemExponentialEdges(t *testing.T) {
	const calls = 10_000
	cases := []struct{ base, max time.Duration }{
		{0, 0},
		{0, time.Second},
		{0, math.MaxInt64},
		{time.Millisecond, 0},
		{1, 1},
		{1, math.MaxInt64},         // upstream returns math.MinInt64 at the 64th call
		{1 << 62, math.MaxInt64},   // upstream returns math.MinInt64 at the 2nd call
		{1<<62 + 1, math.MaxInt64}, // first product above 2^63
		{math.MaxInt64, math.MaxInt64},
		{math.MaxInt64, time.Second}, // max < base
		{math.MaxInt64 / 3, math.MaxInt64 - 1},
		{3, 1<<53 + 1}, // beyond float64's exact range
		{time.Second, time.Millisecond},
		{time.Millisecond, 1000 * time.Second},
		{7, 1000},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("base=%d,max=%d", c.base, c.max), func(t *testing.T) {
			l := mustExp[string](t, c.base, c.max)
			prev := time.Duration(0)
			for n := 0; n < calls; n++ {
				got := l.When("x")
				if got < 0 || got > c.max {
					t.Fatalf("call %d: When = %d, outside [0, %d]", n+1, got, c.max)
				}
				if got < prev {
					t.Fatalf("call %d: When = %d decreased from %d", n+1, got, prev)
				}
				if want := bigDelay(c.base, c.max, n); got != want {
					t.Fatalf("call %d: When = %d, want %d", n+1, got, want)
				}
				prev = got
			}
			expectRequeues[string](t, l, "x", calls)
		})
	}
}

// TestExponentialDelayLoopBound checks that huge failure counts are answered
// (quickly) and exactly.
func TestExponentialDelayLoopBound(t *testing.T) {
	for _, n := range []int{0, 1, 62, 63, 64, 65, 1000, math.MaxInt - 1, math.MaxInt} {
		for _, base := range []time.Duration{0, 1, 3, time.Millisecond, 1 << 62, math.MaxInt64} {
			for _, max := range []time.Duration{0, 1, time.Second, math.MaxInt64 - 1, math.MaxInt64} {
				if got, want := exponentialDelay(base, max, n), bigDelay(base, max, n); got != want {
					t.Errorf("exponentialDelay(%d, %d, %d) = %d, want %d", base, max, n, got, want)
				}
			}
		}
	}
	// Out-of-range arguments never give a negative delay.
	for _, c := range []struct {
		base, max time.Duration
		n         int
	}{{-1, time.Second, 3}, {time.Second, -1, 3}, {time.Millisecond, time.Second, -5}, {math.MinInt64, math.MinInt64, math.MinInt}} {
		if got := exponentialDelay(c.base, c.max, c.n); got < 0 {
			t.Errorf("exponentialDelay(%d, %d, %d) = %d < 0", c.base, c.max, c.n, got)
		}
	}
}

func FuzzExponentialDelay(f *testing.F) {
	f.Add(int64(1), int64(math.MaxInt64), 63)
	f.Add(int64(1<<62), int64(math.MaxInt64), 1)
	f.Add(int64(5*time.Millisecond), int64(1000*time.Second), 20)
	f.Add(int64(0), int64(0), 0)
	f.Fuzz(func(t *testing.T, base, max int64, n int) {
		if base < 0 || max < 0 || n < 0 {
			t.Skip()
		}
		got := exponentialDelay(time.Duration(base), time.Duration(max), n)
		if want := bigDelay(time.Duration(base), time.Duration(max), n); got != want {
			t.Fatalf("exponentialDelay(%d, %d, %d) = %d, want %d", base, max, n, got, want)
		}
	})
}

// TestItemExponentialSaturation drives a counter to math.MaxInt.
func TestItemExponentialSaturation(t *testing.T) {
	l := mustExp[string](t, time.Millisecond, time.Hour)
	l.failures["x"] = math.MaxInt - 1
	expectWhen[string](t, l, "x", time.Hour)
	expectRequeues[string](t, l, "x", math.MaxInt)
	expectWhen[string](t, l, "x", time.Hour)
	expectRequeues[string](t, l, "x", math.MaxInt)
	l.Forget("x")
	expectWhen[string](t, l, "x", time.Millisecond)

	z := mustExp[string](t, 0, time.Hour)
	z.failures["x"] = math.MaxInt
	expectWhen[string](t, z, "x", 0)
	expectRequeues[string](t, z, "x", math.MaxInt)
}

func TestItemExponentialZeroValue(t *testing.T) {
	var l ItemExponential[string]
	expectRequeues[string](t, &l, "x", 0)
	expectWhen[string](t, &l, "x", 0)
	expectWhen[string](t, &l, "x", 0)
	expectRequeues[string](t, &l, "x", 2)
	l.Forget("x")
	expectRequeues[string](t, &l, "x", 0)
}

// TestItemFastSlowUpstream is upstream's TestItemFastSlowRateLimiter.
func TestItemFastSlowUpstream(t *testing.T) {
	l := mustFastSlow[string](t, 5*time.Millisecond, 10*time.Second, 3)
	for _, want := range []time.Duration{5 * time.Millisecond, 5 * time.Millisecond, 5 * time.Millisecond, 10 * time.Second, 10 * time.Second} {
		expectWhen[string](t, l, "one", want)
	}
	expectRequeues[string](t, l, "one", 5)
	expectWhen[string](t, l, "two", 5*time.Millisecond)
	expectWhen[string](t, l, "two", 5*time.Millisecond)
	expectRequeues[string](t, l, "two", 2)
	l.Forget("one")
	expectRequeues[string](t, l, "one", 0)
	expectWhen[string](t, l, "one", 5*time.Millisecond)
}

func TestItemFastSlowEdges(t *testing.T) {
	// maxFast 0: always slow.
	l := mustFastSlow[int](t, time.Millisecond, time.Second, 0)
	for i := 0; i < 10; i++ {
		expectWhen[int](t, l, 1, time.Second)
	}
	// slow < fast is allowed and followed literally.
	l = mustFastSlow[int](t, time.Second, time.Millisecond, 2)
	for _, want := range []time.Duration{time.Second, time.Second, time.Millisecond, time.Millisecond} {
		expectWhen[int](t, l, 1, want)
	}
	// The k-th call is fast iff k <= maxFast, for 10,000 calls.
	l = mustFastSlow[int](t, 1, 2, 5000)
	for k := 1; k <= 10_000; k++ {
		want := time.Duration(2)
		if k <= 5000 {
			want = 1
		}
		if got := l.When(3); got != want {
			t.Fatalf("call %d: When = %v, want %v", k, got, want)
		}
	}
	// Saturation with maxFast = math.MaxInt: call math.MaxInt is fast, the
	// following ones are slow, and the counter stays at math.MaxInt.
	l = mustFastSlow[int](t, 1, 2, math.MaxInt)
	l.failures[9] = math.MaxInt - 1
	expectWhen[int](t, l, 9, 1)
	expectRequeues[int](t, l, 9, math.MaxInt)
	expectWhen[int](t, l, 9, 2)
	expectWhen[int](t, l, 9, 2)
	expectRequeues[int](t, l, 9, math.MaxInt)
	// Zero value.
	var z ItemFastSlow[int]
	expectWhen[int](t, &z, 1, 0)
	expectRequeues[int](t, &z, 1, 1)
}

func TestConstructorErrors(t *testing.T) {
	var typedNil *ItemExponential[string]
	good := DefaultItemBased[string]()
	cases := []struct {
		name string
		err  func() error
		ok   bool
	}{
		{"exp negative base", func() error { _, err := NewItemExponential[string](-1, time.Second); return err }, false},
		{"exp negative max", func() error { _, err := NewItemExponential[string](1, -time.Second); return err }, false},
		{"exp min int", func() error { _, err := NewItemExponential[string](math.MinInt64, math.MinInt64); return err }, false},
		{"exp zero", func() error { _, err := NewItemExponential[string](0, 0); return err }, true},
		{"exp max < base", func() error { _, err := NewItemExponential[string](time.Second, 1); return err }, true},
		{"fastslow negative fast", func() error { _, err := NewItemFastSlow[string](-1, 1, 1); return err }, false},
		{"fastslow negative slow", func() error { _, err := NewItemFastSlow[string](1, -1, 1); return err }, false},
		{"fastslow negative maxFast", func() error { _, err := NewItemFastSlow[string](1, 1, -1); return err }, false},
		{"fastslow zero", func() error { _, err := NewItemFastSlow[string](0, 0, 0); return err }, true},
		{"bucket negative qps", func() error { _, err := NewBucket[string](-1, 1); return err }, false},
		{"bucket -Inf qps", func() error { _, err := NewBucket[string](math.Inf(-1), 1); return err }, false},
		{"bucket NaN qps", func() error { _, err := NewBucket[string](math.NaN(), 1); return err }, false},
		{"bucket negative burst", func() error { _, err := NewBucket[string](1, -1); return err }, false},
		{"bucket zero", func() error { _, err := NewBucket[string](0, 0); return err }, true},
		{"bucket +Inf", func() error { _, err := NewBucket[string](math.Inf(1), 0); return err }, true},
		{"maxof empty", func() error { _, err := NewMaxOf[string](); return err }, false},
		{"maxof nil", func() error { _, err := NewMaxOf(good, nil); return err }, false},
		{"maxof typed nil", func() error { _, err := NewMaxOf(good, Limiter[string](typedNil)); return err }, false},
		{"maxof one", func() error { _, err := NewMaxOf(good); return err }, true},
		{"maxwait nil", func() error { _, err := NewMaxWait[string](nil, time.Second); return err }, false},
		{"maxwait typed nil", func() error { _, err := NewMaxWait[string](typedNil, time.Second); return err }, false},
		{"maxwait negative", func() error { _, err := NewMaxWait(good, -1); return err }, false},
		{"maxwait zero", func() error { _, err := NewMaxWait(good, 0); return err }, true},
	}
	for _, c := range cases {
		err := c.err()
		if c.ok && err != nil {
			t.Errorf("%s: unexpected error %v", c.name, err)
		}
		if !c.ok && err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
}

func TestBucket(t *testing.T) {
	b, err := NewBucket[string](10, 100)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 100; i++ {
		if d := b.When("x"); d != 0 {
			t.Fatalf("call %d: When = %v, want 0 (bucket starts full)", i+1, d)
		}
	}
	// The 101st token arrives 100ms after the bucket emptied, less the time
	// the test took to empty it.
	if d := b.When("x"); d <= 50*time.Millisecond || d > 100*time.Millisecond {
		t.Errorf("call 101: When = %v, want in (50ms, 100ms]", d)
	}
	if d := b.When("y"); d <= 150*time.Millisecond || d > 200*time.Millisecond {
		t.Errorf("call 102: When = %v, want in (150ms, 200ms]", d)
	}
	expectRequeues[string](t, b, "x", 0)
	b.Forget("x")
	expectRequeues[string](t, b, "x", 0)
}

func TestBucketEdges(t *testing.T) {
	// burst 0 with a finite rate: never.
	b, _ := NewBucket[int](10, 0)
	for i := 0; i < 3; i++ {
		expectWhen[int](t, b, 0, rate.InfDuration)
	}
	// qps 0: the initial burst, then never.
	b, _ = NewBucket[int](0, 2)
	expectWhen[int](t, b, 0, 0)
	expectWhen[int](t, b, 0, 0)
	for i := 0; i < 3; i++ {
		if d := b.When(0); d != rate.InfDuration {
			t.Errorf("qps 0, call %d: When = %d, want rate.InfDuration", i+3, d)
		}
	}
	// qps +Inf: always 0, even with burst 0.
	b, _ = NewBucket[int](math.Inf(1), 0)
	for i := 0; i < 3; i++ {
		expectWhen[int](t, b, 0, 0)
	}
	// A tiny rate: the wait overflows a Duration and is capped.
	b, _ = NewBucket[int](1e-300, 1)
	expectWhen[int](t, b, 0, 0)
	if d := b.When(0); d != rate.InfDuration {
		t.Errorf("qps 1e-300: When = %d, want rate.InfDuration", d)
	}
	// Zero value and nil limiter: never delay.
	var z Bucket[int]
	expectWhen[int](t, &z, 0, 0)
	expectWhen[int](t, NewBucketFromLimiter[int](nil), 0, 0)
	// A shared limiter is shared.
	lim := rate.NewLimiter(1, 1)
	b1, b2 := NewBucketFromLimiter[int](lim), NewBucketFromLimiter[int](lim)
	expectWhen[int](t, b1, 0, 0)
	if d := b2.When(0); d <= 500*time.Millisecond || d > time.Second {
		t.Errorf("shared limiter: When = %v, want in (500ms, 1s]", d)
	}
}

// stepLimiter is upstream's StepRateLimiter: base for the first threshold
// calls overall, max afterwards.
type stepLimiter struct {
	count, threshold int
	base, max        time.Duration
}

func (r *stepLimiter) When(int) time.Duration {
	r.count++
	if r.count <= r.threshold {
		return r.base
	}
	return r.max
}
func (r *stepLimiter) NumRequeues(int) int { return 0 }
func (r *stepLimiter) Forget(int)          {}

// fakeLimiter returns a fixed delay and records the calls it receives.
type fakeLimiter struct {
	delay    time.Duration
	requeues int
	whens    []string
	forgets  []string
}

func (f *fakeLimiter) When(item string) time.Duration {
	f.whens = append(f.whens, item)
	return f.delay
}
func (f *fakeLimiter) NumRequeues(string) int { return f.requeues }
func (f *fakeLimiter) Forget(item string)     { f.forgets = append(f.forgets, item) }

// TestMaxOfUpstream is upstream's TestMaxOfRateLimiter.
func TestMaxOfUpstream(t *testing.T) {
	l, err := NewMaxOf(
		Limiter[string](mustFastSlow[string](t, 5*time.Millisecond, 3*time.Second, 3)),
		mustExp[string](t, time.Millisecond, time.Second),
	)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []time.Duration{5 * time.Millisecond, 5 * time.Millisecond, 5 * time.Millisecond, 3 * time.Second, 3 * time.Second} {
		expectWhen[string](t, l, "one", want)
	}
	expectRequeues[string](t, l, "one", 5)
	expectWhen[string](t, l, "two", 5*time.Millisecond)
	expectWhen[string](t, l, "two", 5*time.Millisecond)
	expectRequeues[string](t, l, "two", 2)
	l.Forget("one")
	expectRequeues[string](t, l, "one", 0)
	expectWhen[string](t, l, "one", 5*time.Millisecond)
}

func TestMaxOfCallsEveryLimiter(t *testing.T) {
	a := &fakeLimiter{delay: time.Hour, requeues: 3}
	b := &fakeLimiter{delay: time.Second, requeues: 7}
	c := &fakeLimiter{delay: -time.Hour, requeues: -2}
	ls := []Limiter[string]{a, b, c}
	l, err := NewMaxOf(ls...)
	if err != nil {
		t.Fatal(err)
	}
	ls[1] = nil // NewMaxOf copied its arguments
	expectWhen[string](t, l, "x", time.Hour)
	expectRequeues[string](t, l, "x", 7)
	l.Forget("y")
	for i, f := range []*fakeLimiter{a, b, c} {
		if len(f.whens) != 1 || f.whens[0] != "x" || len(f.forgets) != 1 || f.forgets[0] != "y" {
			t.Errorf("limiter %d saw When %v and Forget %v", i, f.whens, f.forgets)
		}
	}
	// All delays negative: MaxOf answers 0, as upstream.
	n, _ := NewMaxOf[string](c)
	expectWhen[string](t, n, "x", 0)
	expectRequeues[string](t, n, "x", 0)
	// Zero value.
	var z MaxOf[string]
	expectWhen[string](t, &z, "x", 0)
	expectRequeues[string](t, &z, "x", 0)
	z.Forget("x")
}

// TestMaxWaitUpstream is upstream's TestWithMaxWaitRateLimiter.
func TestMaxWaitUpstream(t *testing.T) {
	l, err := NewMaxWait[int](&stepLimiter{threshold: 100, base: 5 * time.Millisecond, max: 1000 * time.Second}, 500*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 100; i++ {
		expectWhen[int](t, l, i, 5*time.Millisecond)
	}
	for i := 100; i < 200; i++ {
		expectWhen[int](t, l, i, 500*time.Second)
	}
}

func TestMaxWaitForwards(t *testing.T) {
	f := &fakeLimiter{delay: time.Second, requeues: 4}
	l, _ := NewMaxWait[string](f, time.Minute)
	expectWhen[string](t, l, "x", time.Second)
	expectRequeues[string](t, l, "x", 4)
	l.Forget("y")
	if len(f.whens) != 1 || len(f.forgets) != 1 || f.forgets[0] != "y" {
		t.Errorf("wrapped limiter saw When %v and Forget %v", f.whens, f.forgets)
	}
	// maxDelay 0 caps everything to 0.
	l, _ = NewMaxWait[string](f, 0)
	expectWhen[string](t, l, "x", 0)
	// Negative delays pass through, as upstream.
	f.delay = -time.Second
	expectWhen[string](t, l, "x", -time.Second)
	// Capping rate.InfDuration.
	b, _ := NewBucket[string](1, 0)
	l, _ = NewMaxWait[string](b, time.Hour)
	expectWhen[string](t, l, "x", time.Hour)
	// Zero value.
	var z MaxWait[string]
	expectWhen[string](t, &z, "x", 0)
	expectRequeues[string](t, &z, "x", 0)
	z.Forget("x")
}

func TestDefaults(t *testing.T) {
	d := DefaultItemBased[string]()
	for _, want := range []time.Duration{1, 2, 4, 8, 16, 32} {
		expectWhen[string](t, d, "x", want*time.Millisecond)
	}
	expectRequeues[string](t, d, "x", 6)

	c := DefaultController[string]()
	for _, want := range []time.Duration{5, 10, 20, 40, 80} {
		expectWhen[string](t, c, "x", want*time.Millisecond)
	}
	expectRequeues[string](t, c, "x", 5)
	c.Forget("x")
	expectRequeues[string](t, c, "x", 0)
	// 95 tokens are left: fresh items get the per-item 5ms until the bucket
	// is empty, then about 100ms per token.
	for i := 0; i < 95; i++ {
		expectWhen[string](t, c, fmt.Sprint("item", i), 5*time.Millisecond)
	}
	if d := c.When("late"); d <= 50*time.Millisecond || d > 100*time.Millisecond {
		t.Errorf("after the burst: When = %v, want in (50ms, 100ms]", d)
	}
}

func TestConcurrent(t *testing.T) {
	const goroutines, calls = 8, 500
	exp := mustExp[int](t, time.Millisecond, time.Second)
	fs := mustFastSlow[int](t, time.Millisecond, time.Second, 3)
	bucket, _ := NewBucket[int](1000, 10)
	maxOf, _ := NewMaxOf[int](exp, fs, bucket)
	maxWait, _ := NewMaxWait[int](maxOf, 10*time.Second)
	ctrl := DefaultController[int]()
	var wg sync.WaitGroup
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < calls; i++ {
				for _, l := range []Limiter[int]{maxWait, ctrl} {
					if d := l.When(0); d < 0 || d > 1000*time.Second {
						t.Errorf("When = %v out of range", d)
					}
					l.When(g + 1)
					l.NumRequeues(0)
				}
			}
			maxWait.Forget(g + 1)
			ctrl.Forget(g + 1)
		}(g)
	}
	wg.Wait()
	for _, l := range []Limiter[int]{exp, fs, maxOf, maxWait, ctrl} {
		expectRequeues(t, l, 0, goroutines*calls)
		for g := 0; g < goroutines; g++ {
			expectRequeues(t, l, g+1, 0)
		}
	}
}

func ExampleNewItemExponential() {
	l, err := NewItemExponential[string](5*time.Millisecond, 30*time.Millisecond)
	if err != nil {
		panic(err)
	}
	for i := 0; i < 5; i++ {
		fmt.Println(l.When("pod-a"))
	}
	fmt.Println("requeues:", l.NumRequeues("pod-a"))
	l.Forget("pod-a")
	fmt.Println(l.When("pod-a"))

	_, err = NewItemExponential[string](-time.Second, time.Second)
	fmt.Println(err)
	// Output:
	// 5ms
	// 10ms
	// 20ms
	// 30ms
	// 30ms
	// requeues: 5
	// 5ms
	// ratelimit: negative base delay -1s
}
