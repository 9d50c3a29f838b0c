// Package ratelimit is the reference model of the work-queue rate limiters of
// client-go's util/workqueue/default_rate_limiters.go (and of
// impl/ratelimit): a per-item exponential backoff, a per-item fast/slow
// retry, an overall token bucket, and the MaxOf and MaxWait combinators.
//
// The models are pure: no goroutines, no clock, no randomness. Time is an
// explicit input where it matters (the token bucket). Model values are never
// mutated: every transition returns a new value and leaves its receiver (and
// any map or slice it shares) untouched, so a model can serve as a porcupine
// state, as rapid's expected value and as a fuzz oracle at the same time.
//
// Items are strings. The models are written for valid configurations
// (non-negative durations, burst and maxFast, qps >= 0 and not NaN); what they
// answer otherwise is unspecified.
package ratelimit

import (
	"math"
	"math/big"
	"time"
)

// Model is what the combinators are written against: a limiter state that
// answers one retry of an item at a given instant. Item-based models ignore
// now; Bucket ignores item.
type Model interface {
	// Step records a retry of item at now and returns the next state and the
	// delay.
	Step(item string, now time.Time) (Model, time.Duration)
	// Reset forgets item and returns the next state.
	Reset(item string) Model
	// NumRequeues returns how many retries of item are recorded.
	NumRequeues(item string) int
}

// Compile-time checks.
var (
	_ Model = Exponential{}
	_ Model = FastSlow{}
	_ Model = Bucket{}
	_ Model = MaxOf{}
	_ Model = MaxWait{}
)

// InfDuration is the delay meaning "never": golang.org/x/time/rate's
// InfDuration, the largest time.Duration.
const InfDuration = time.Duration(math.MaxInt64)

// ExponentialDelay is the delay of the retry that follows n failures:
// min(base * 2^n, max), computed in arbitrary precision. Capping n at 64 does
// not change the result and keeps the number small: for base >= 1,
// base * 2^64 > math.MaxInt64 >= max, and for base = 0 the product is 0.
func ExponentialDelay(base, max time.Duration, n int) time.Duration {
	n = min(n, 64)
	v := new(big.Int).Lsh(big.NewInt(int64(base)), uint(n))
	if v.Cmp(big.NewInt(int64(max))) > 0 {
		return max
	}
	return time.Duration(v.Int64())
}

// FastSlowDelay is the delay of the k-th retry (k >= 1): fast if
// k <= maxFast, slow otherwise.
func FastSlowDelay(fast, slow time.Duration, maxFast, k int) time.Duration {
	if k <= maxFast {
		return fast
	}
	return slow
}

// bump returns a copy of m with the count of item increased by one,
// saturating at math.MaxInt, and the count before the increase.
func bump(m map[string]int, item string) (map[string]int, int) {
	n := m[item]
	c := make(map[string]int, len(m)+1)
	for k, v := range m {
		c[k] = v
	}
	c[item] = n
	if n < math.MaxInt {
		c[item] = n + 1
	}
	return c, n
}

// drop returns a copy of m without item.
func drop(m map[string]int, item string) map[string]int {
	c := make(map[string]int, len(m))
	for k, v := range m {
		if k != item {
			c[k] = v
		}
	}
	return c
}

// Exponential models ItemExponential: the retry of an item that has failed n
// times since it was last forgotten waits min(Base * 2^n, Max).
// Failures[item] is n; absent means 0. Counts saturate at math.MaxInt.
type Exponential struct {
	Base, Max time.Duration
	Failures  map[string]int
}

// NewExponential returns the model of a fresh ItemExponential.
func NewExponential(base, max time.Duration) Exponential {
	return Exponential{Base: base, Max: max, Failures: map[string]int{}}
}

// When records a failure of item and returns the new state and the delay.
func (m Exponential) When(item string) (Exponential, time.Duration) {
	f, n := bump(m.Failures, item)
	return Exponential{Base: m.Base, Max: m.Max, Failures: f}, ExponentialDelay(m.Base, m.Max, n)
}

// Forget returns the state with item's failures cleared.
func (m Exponential) Forget(item string) Exponential {
	return Exponential{Base: m.Base, Max: m.Max, Failures: drop(m.Failures, item)}
}

// NumRequeues returns the failures of item since it was last forgotten.
func (m Exponential) NumRequeues(item string) int { return m.Failures[item] }

// Step is When as a Model; now is ignored.
func (m Exponential) Step(item string, now time.Time) (Model, time.Duration) { return m.When(item) }

// Reset is Forget as a Model.
func (m Exponential) Reset(item string) Model { return m.Forget(item) }

// FastSlow models ItemFastSlow: the k-th retry of an item since it was last
// forgotten (k >= 1) waits Fast if k <= MaxFast, Slow otherwise.
// Failures[item] is the number of retries so far; absent means 0. Counts
// saturate at math.MaxInt.
type FastSlow struct {
	Fast, Slow time.Duration
	MaxFast    int
	Failures   map[string]int
}

// NewFastSlow returns the model of a fresh ItemFastSlow.
func NewFastSlow(fast, slow time.Duration, maxFast int) FastSlow {
	return FastSlow{Fast: fast, Slow: slow, MaxFast: maxFast, Failures: map[string]int{}}
}

// When records a retry of item and returns the new state and the delay.
func (m FastSlow) When(item string) (FastSlow, time.Duration) {
	f, n := bump(m.Failures, item)
	// The retry is the (n+1)-th. n+1 <= MaxFast is written n < MaxFast so it
	// cannot overflow.
	d := m.Slow
	if n < m.MaxFast {
		d = m.Fast
	}
	return FastSlow{Fast: m.Fast, Slow: m.Slow, MaxFast: m.MaxFast, Failures: f}, d
}

// Forget returns the state with item's retries cleared.
func (m FastSlow) Forget(item string) FastSlow {
	return FastSlow{Fast: m.Fast, Slow: m.Slow, MaxFast: m.MaxFast, Failures: drop(m.Failures, item)}
}

// NumRequeues returns the retries of item since it was last forgotten.
func (m FastSlow) NumRequeues(item string) int { return m.Failures[item] }

// Step is When as a Model; now is ignored.
func (m FastSlow) Step(item string, now time.Time) (Model, time.Duration) { return m.When(item) }

// Reset is Forget as a Model.
func (m FastSlow) Reset(item string) Model { return m.Forget(item) }

// Bucket models a golang.org/x/time/rate Limiter used one reservation of one
// token at a time (Reserve, never Cancel): a bucket of at most Burst tokens,
// refilled continuously at QPS tokens per second. Tokens was the content at
// Last; it goes negative when reservations are made ahead of the refill.
//
// A retry at now first refills the bucket for the time elapsed since Last
// (none if now is before Last), capped at Burst, then takes one token; the
// delay is the time until the content is back to 0, that is
// -tokens/QPS seconds if it went negative. Special cases, as in the rate
// package: QPS = Inf (math.MaxFloat64, as rate.Inf) never delays and changes
// nothing; Burst = 0 with a finite QPS grants no token: the delay is
// InfDuration and nothing changes; QPS = 0 never refills and every delay
// once the bucket is empty is InfDuration, as is any delay too long for a
// time.Duration.
//
// Exactness: the rate package keeps tokens in float64 and converts between
// tokens and durations in float64; so does this model, with the same
// formulas. The implementation reads a real clock, so a check that compares
// it to this model must feed the model instants close to the ones the
// implementation used and accept a tolerance: 1µs per delay is enough when
// the model is fed the implementation's own instants.
type Bucket struct {
	QPS    float64
	Burst  int
	Tokens float64
	Last   time.Time
}

// Inf is the infinite refill rate, rate.Inf.
const Inf = math.MaxFloat64

// NewBucket returns the model of rate.NewLimiter(qps, burst): a full bucket
// last updated at the zero time. A qps of +Inf is taken as Inf.
func NewBucket(qps float64, burst int) Bucket {
	if math.IsInf(qps, 1) {
		qps = Inf
	}
	return Bucket{QPS: qps, Burst: burst, Tokens: float64(burst)}
}

// When takes one token at now and returns the new state and the delay.
func (m Bucket) When(now time.Time) (Bucket, time.Duration) {
	if m.QPS == Inf {
		return m, 0
	}
	if m.Burst < 1 {
		return m, InfDuration
	}
	elapsed := time.Duration(0)
	if now.After(m.Last) {
		elapsed = now.Sub(m.Last)
	}
	tokens := m.Tokens
	if m.QPS > 0 {
		tokens += elapsed.Seconds() * m.QPS
	}
	tokens = min(tokens, float64(m.Burst)) - 1
	delay := time.Duration(0)
	if tokens < 0 {
		delay = secondsToDuration(-tokens, m.QPS)
	}
	return Bucket{QPS: m.QPS, Burst: m.Burst, Tokens: tokens, Last: now}, delay
}

// secondsToDuration is the time to refill tokens at qps, InfDuration if
// qps is 0 or the time does not fit in a time.Duration.
func secondsToDuration(tokens, qps float64) time.Duration {
	if qps <= 0 {
		return InfDuration
	}
	ns := tokens / qps * float64(time.Second)
	if ns > float64(math.MaxInt64) {
		return InfDuration
	}
	return time.Duration(ns)
}

// TokensAt returns the content of the bucket at now, before any retry at
// now: Tokens refilled for the time since Last, capped at Burst.
func (m Bucket) TokensAt(now time.Time) float64 {
	if now.After(m.Last) && m.QPS > 0 {
		return min(m.Tokens+now.Sub(m.Last).Seconds()*m.QPS, float64(m.Burst))
	}
	return min(m.Tokens, float64(m.Burst))
}

// NumRequeues is always 0: a bucket does not track items.
func (m Bucket) NumRequeues(item string) int { return 0 }

// Step is When as a Model; item is ignored.
func (m Bucket) Step(item string, now time.Time) (Model, time.Duration) { return m.When(now) }

// Reset returns m: a bucket does not track items.
func (m Bucket) Reset(item string) Model { return m }

// MaxOf models MaxOf: every part takes the retry, and the delay is the
// largest of theirs, or 0 if all are smaller. NumRequeues is the largest of
// the parts', or 0; Reset resets every part.
type MaxOf struct {
	Parts []Model
}

// NewMaxOf returns the model combining parts (copied).
func NewMaxOf(parts ...Model) MaxOf {
	return MaxOf{Parts: append([]Model(nil), parts...)}
}

// When steps every part on item at now and returns the new state and the
// largest delay.
func (m MaxOf) When(item string, now time.Time) (MaxOf, time.Duration) {
	next := make([]Model, len(m.Parts))
	ret := time.Duration(0)
	for i, p := range m.Parts {
		var d time.Duration
		next[i], d = p.Step(item, now)
		ret = max(ret, d)
	}
	return MaxOf{Parts: next}, ret
}

// Forget resets item in every part.
func (m MaxOf) Forget(item string) MaxOf {
	next := make([]Model, len(m.Parts))
	for i, p := range m.Parts {
		next[i] = p.Reset(item)
	}
	return MaxOf{Parts: next}
}

// NumRequeues returns the largest NumRequeues of the parts, or 0.
func (m MaxOf) NumRequeues(item string) int {
	ret := 0
	for _, p := range m.Parts {
		ret = max(ret, p.NumRequeues(item))
	}
	return ret
}

// Step is When as a Model.
func (m MaxOf) Step(item string, now time.Time) (Model, time.Duration) { return m.When(item, now) }

// Reset is Forget as a Model.
func (m MaxOf) Reset(item string) Model { return m.Forget(item) }

// MaxWait models MaxWait: the delay of Inner, capped at MaxDelay.
type MaxWait struct {
	Inner    Model
	MaxDelay time.Duration
}

// When steps Inner and returns the new state and min(delay, MaxDelay).
func (m MaxWait) When(item string, now time.Time) (MaxWait, time.Duration) {
	inner, d := m.Inner.Step(item, now)
	return MaxWait{Inner: inner, MaxDelay: m.MaxDelay}, min(d, m.MaxDelay)
}

// Forget resets item in Inner.
func (m MaxWait) Forget(item string) MaxWait {
	return MaxWait{Inner: m.Inner.Reset(item), MaxDelay: m.MaxDelay}
}

// NumRequeues is Inner's.
func (m MaxWait) NumRequeues(item string) int { return m.Inner.NumRequeues(item) }

// Step is When as a Model.
func (m MaxWait) Step(item string, now time.Time) (Model, time.Duration) { return m.When(item, now) }

// Reset is Forget as a Model.
func (m MaxWait) Reset(item string) Model { return m.Forget(item) }

// Defaults, as in client-go.
const (
	// DefaultControllerBase is the base delay of DefaultController's
	// per-item part.
	DefaultControllerBase = 5 * time.Millisecond
	// DefaultItemBasedBase is the base delay of DefaultItemBased.
	DefaultItemBasedBase = time.Millisecond
	// DefaultMaxDelay is the maximal per-item delay of both defaults.
	DefaultMaxDelay = 1000 * time.Second
	// DefaultQPS is the refill rate of DefaultController's bucket.
	DefaultQPS = 10
	// DefaultBurst is the size of DefaultController's bucket.
	DefaultBurst = 100
)

// DefaultController returns the model of client-go's default controller
// limiter: the max of Exponential(5ms, 1000s) and Bucket(10 qps, burst 100).
func DefaultController() MaxOf {
	return NewMaxOf(NewExponential(DefaultControllerBase, DefaultMaxDelay), NewBucket(DefaultQPS, DefaultBurst))
}

// DefaultItemBased returns the model of client-go's default per-item
// limiter: Exponential(1ms, 1000s).
func DefaultItemBased() Exponential {
	return NewExponential(DefaultItemBasedBase, DefaultMaxDelay)
}
