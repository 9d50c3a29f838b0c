// Package ratelimit provides the rate limiters a work queue uses to decide how
// long an item waits before it is retried. It mirrors the limiters of
// k8s.io/client-go v0.37.2 util/workqueue/default_rate_limiters.go, generic
// over the item type, with stricter guarantees:
//
//   - No delay returned by a limiter of this package is ever negative, and
//     ItemExponential and ItemFastSlow never return more than the largest
//     delay they were configured with.
//   - Constructors validate their arguments and return an error instead of
//     building a limiter that misbehaves later. No function or method panics,
//     whatever its arguments; the zero value of every limiter type is usable.
//   - Per-item failure counters saturate at math.MaxInt instead of wrapping.
//   - Every limiter is safe for concurrent use by multiple goroutines,
//     provided the limiters a combinator wraps are.
//
// Where this package diverges from upstream:
//
//   - Upstream's ItemExponential When computes baseDelay*2^failures in
//     float64 and converts it with time.Duration(backoff) after checking
//     backoff > math.MaxInt64. A product of exactly 2^63 (for example a 1ns
//     base after 63 failures, or a 2^62ns base after one) passes that check
//     and converts to math.MinInt64 on amd64, so upstream returns a negative
//     delay. Bases above 2^53ns are also rounded by the float64 conversion.
//     Here the delay is computed exactly in integers: min(base*2^n, max).
//   - Upstream accepts a negative base delay and then returns negative
//     delays; NewItemExponential rejects it (and a negative max).
//   - Upstream's failure counter is an int incremented without a bound, which
//     wraps after 2^63-1 calls (after which upstream returns base*2^-k, and
//     NumRequeues goes negative). Here it saturates at math.MaxInt; the delay
//     computed from a saturated counter is still the correct one (max for
//     ItemExponential, slow for ItemFastSlow).
//   - Upstream's constructors accept nil or zero limiters; NewMaxOf and
//     NewMaxWait reject them.
//   - Upstream's Bucket When is lim.Reserve().Delay(), which reads the clock
//     twice; Bucket.When reads it once (see there), so its delay is exactly
//     the wait the token bucket computed.
//
// Everything else (the sequence of delays, what NumRequeues reports, that
// MaxOf calls every limiter even after the first large answer, and the
// token-bucket behaviour of Bucket, including its start with a full bucket)
// follows upstream.
//
// What a limiter keeps per item, and for how long (the suite checks it:
// ratelimit/forget-releases): ItemExponential and ItemFastSlow keep one
// failure counter per item from its first When until its Forget, which
// deletes the entry (a counter reset to zero would keep the key for
// good); the state held is therefore bounded by the items retried and not
// yet forgotten. Bucket keeps nothing per item. MaxOf and MaxWait keep
// nothing of their own and forward Forget.
package ratelimit

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Limiter decides how long an item must wait before it is processed again.
// It has the method set of client-go's TypedRateLimiter, so the limiters of
// this package can be used where a workqueue.TypedRateLimiter is expected.
type Limiter[T comparable] interface {
	// When records one more failure (retry) of item and returns how long item
	// should wait before it is retried.
	When(item T) time.Duration
	// Forget indicates that item is finished being retried, whether it
	// succeeded or failed for good: the limiter stops tracking it and the
	// next When for item starts from scratch.
	Forget(item T)
	// NumRequeues returns how many failures item has had, that is how many
	// times When was called for item since the last Forget of item.
	NumRequeues(item T) int
}

// Compile-time checks that every limiter implements Limiter.
var (
	_ Limiter[string] = (*ItemExponential[string])(nil)
	_ Limiter[string] = (*ItemFastSlow[string])(nil)
	_ Limiter[string] = (*Bucket[string])(nil)
	_ Limiter[string] = (*MaxOf[string])(nil)
	_ Limiter[string] = (*MaxWait[string])(nil)
)

// Default parameters, as in client-go.
const (
	// DefaultControllerBase is the base delay of the per-item exponential
	// part of DefaultController.
	DefaultControllerBase = 5 * time.Millisecond
	// DefaultItemBasedBase is the base delay of DefaultItemBased.
	DefaultItemBasedBase = time.Millisecond
	// DefaultMaxDelay is the maximal per-item delay of DefaultController and
	// DefaultItemBased.
	DefaultMaxDelay = 1000 * time.Second
	// DefaultQPS is the refill rate, in tokens per second, of the overall
	// token bucket of DefaultController.
	DefaultQPS = 10
	// DefaultBurst is the size of the overall token bucket of
	// DefaultController.
	DefaultBurst = 100
)

// DefaultController returns the limiter client-go uses for controllers: the
// maximum of a per-item exponential backoff (5ms doubling up to 1000s) and an
// overall token bucket (10 qps, burst 100) shared by all items.
func DefaultController[T comparable]() Limiter[T] {
	return &MaxOf[T]{limiters: []Limiter[T]{
		newItemExponential[T](DefaultControllerBase, DefaultMaxDelay),
		NewBucketFromLimiter[T](rate.NewLimiter(rate.Limit(DefaultQPS), DefaultBurst)),
	}}
}

// DefaultItemBased returns client-go's default per-item limiter: an
// exponential backoff from 1ms doubling up to 1000s.
func DefaultItemBased[T comparable]() Limiter[T] {
	return newItemExponential[T](DefaultItemBasedBase, DefaultMaxDelay)
}

// saturatingInc returns n+1, or n if n+1 would overflow.
func saturatingInc(n int) int {
	if n == math.MaxInt {
		return n
	}
	return n + 1
}

// exponentialDelay returns min(base*2^n, max) computed exactly, for base >= 0,
// max >= 0 and n >= 0; it never overflows. For out-of-range arguments it
// returns 0 rather than a negative delay: a negative n counts as 0 and a
// negative base or max as 0.
func exponentialDelay(base, max time.Duration, n int) time.Duration {
	if base <= 0 || max <= 0 {
		return 0
	}
	if base >= max {
		return max
	}
	d := base
	// Each iteration doubles d while 2d <= max, so the loop runs at most 62
	// times whatever n is. max/2 rounds down, so d > max/2 iff 2d > max, and
	// 2d <= max <= math.MaxInt64 cannot overflow.
	for i := 0; i < n; i++ {
		if d > max/2 {
			return max
		}
		d *= 2
	}
	return d
}

// ItemExponential is a per-item exponential backoff: the n-th call of When
// for an item (counting from 0 since the item was last forgotten) returns
// min(base*2^n, max). Create it with NewItemExponential; the zero value
// behaves like NewItemExponential(0, 0) (every delay is 0).
type ItemExponential[T comparable] struct {
	mu       sync.Mutex
	failures map[T]int

	base time.Duration
	max  time.Duration
}

// NewItemExponential returns an ItemExponential with the given base and
// maximal delay. It returns an error if base or max is negative. A base of 0
// makes every delay 0; a max below base makes every delay max.
func NewItemExponential[T comparable](base, max time.Duration) (*ItemExponential[T], error) {
	if base < 0 {
		return nil, fmt.Errorf("ratelimit: negative base delay %v", base)
	}
	if max < 0 {
		return nil, fmt.Errorf("ratelimit: negative max delay %v", max)
	}
	return newItemExponential[T](base, max), nil
}

func newItemExponential[T comparable](base, max time.Duration) *ItemExponential[T] {
	return &ItemExponential[T]{failures: map[T]int{}, base: base, max: max}
}

// When records a failure of item and returns min(base*2^n, max), where n is
// the number of failures item had before this call. The result is in
// [0, max] and never overflows.
func (r *ItemExponential[T]) When(item T) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.failures == nil {
		r.failures = map[T]int{}
	}
	n := r.failures[item]
	r.failures[item] = saturatingInc(n)
	return exponentialDelay(r.base, r.max, n)
}

// NumRequeues returns the number of When calls for item since it was last
// forgotten, saturated at math.MaxInt.
func (r *ItemExponential[T]) NumRequeues(item T) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failures[item]
}

// Forget resets the failure count of item to 0.
func (r *ItemExponential[T]) Forget(item T) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.failures, item)
}

// ItemFastSlow retries an item quickly a number of times, then slowly: the
// k-th call of When for an item (counting from 1 since the item was last
// forgotten) returns fast if k <= maxFast and slow otherwise. Create it with
// NewItemFastSlow; the zero value behaves like NewItemFastSlow(0, 0, 0).
type ItemFastSlow[T comparable] struct {
	mu       sync.Mutex
	failures map[T]int

	fast    time.Duration
	slow    time.Duration
	maxFast int
}

// NewItemFastSlow returns an ItemFastSlow that answers fast to the first
// maxFast calls of When for an item and slow afterwards. It returns an error
// if fast or slow is negative or maxFast is negative. slow need not be larger
// than fast.
func NewItemFastSlow[T comparable](fast, slow time.Duration, maxFast int) (*ItemFastSlow[T], error) {
	if fast < 0 {
		return nil, fmt.Errorf("ratelimit: negative fast delay %v", fast)
	}
	if slow < 0 {
		return nil, fmt.Errorf("ratelimit: negative slow delay %v", slow)
	}
	if maxFast < 0 {
		return nil, fmt.Errorf("ratelimit: negative number of fast attempts %d", maxFast)
	}
	return &ItemFastSlow[T]{failures: map[T]int{}, fast: fast, slow: slow, maxFast: maxFast}, nil
}

// When records a failure of item and returns fast if this is one of the
// first maxFast calls for item since it was last forgotten, slow otherwise.
func (r *ItemFastSlow[T]) When(item T) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.failures == nil {
		r.failures = map[T]int{}
	}
	// prev < maxFast is k <= maxFast for k = prev+1, and it stays exact when
	// the counter saturates: a saturated prev is >= math.MaxInt >= maxFast.
	prev := r.failures[item]
	r.failures[item] = saturatingInc(prev)
	if prev < r.maxFast {
		return r.fast
	}
	return r.slow
}

// NumRequeues returns the number of When calls for item since it was last
// forgotten, saturated at math.MaxInt.
func (r *ItemFastSlow[T]) NumRequeues(item T) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failures[item]
}

// Forget resets the failure count of item to 0.
func (r *ItemFastSlow[T]) Forget(item T) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.failures, item)
}

// Bucket is an overall token bucket shared by all items, backed by a
// golang.org/x/time/rate Limiter: each When takes one token, waiting for it
// if the bucket is empty. The bucket starts full. Forget does nothing and
// NumRequeues is always 0. The zero value never delays.
type Bucket[T comparable] struct {
	lim *rate.Limiter
}

// NewBucket returns a Bucket refilled at qps tokens per second up to burst
// tokens. It returns an error if qps is negative or NaN or burst is negative.
// Following the rate package:
//
//   - qps = math.Inf(1) is taken as rate.Inf (math.MaxFloat64), which
//     never delays, whatever burst is;
//   - burst = 0 with a finite qps can grant no token: every When returns
//     rate.InfDuration (math.MaxInt64) and the bucket does not change;
//   - qps = 0 with burst > 0 never refills: the first burst calls return 0
//     and every later call returns rate.InfDuration, that is "never" (so
//     does a qps so small that the wait overflows a time.Duration).
func NewBucket[T comparable](qps float64, burst int) (*Bucket[T], error) {
	if math.IsNaN(qps) || qps < 0 {
		return nil, fmt.Errorf("ratelimit: invalid qps %v", qps)
	}
	if burst < 0 {
		return nil, fmt.Errorf("ratelimit: negative burst %d", burst)
	}
	limit := rate.Limit(qps)
	if math.IsInf(qps, 1) {
		limit = rate.Inf
	}
	return &Bucket[T]{lim: rate.NewLimiter(limit, burst)}, nil
}

// NewBucketFromLimiter returns a Bucket backed by lim, which it shares with
// its other users. A nil lim gives a Bucket that never delays.
func NewBucketFromLimiter[T comparable](lim *rate.Limiter) *Bucket[T] {
	return &Bucket[T]{lim: lim}
}

// When takes a token and returns how long to wait until it is available.
// It is lim.ReserveN(now, 1).DelayFrom(now) with now = time.Now(): the same
// reservation as upstream's lim.Reserve().Delay(), but the delay is measured
// from the instant of the reservation rather than read from the clock again
// afterwards, so it is exactly the wait the rate package computed (upstream's
// is smaller by the time that elapses between the two clock readings, and
// its "never" falls short of rate.InfDuration by as much). The result is
// never negative; it is rate.InfDuration if the bucket can never grant the
// token.
func (r *Bucket[T]) When(item T) time.Duration {
	if r.lim == nil {
		return 0
	}
	now := time.Now()
	d := r.lim.ReserveN(now, 1).DelayFrom(now)
	if d < 0 { // DelayFrom never returns a negative duration; belt and braces.
		return 0
	}
	return d
}

// NumRequeues returns 0: a Bucket does not track items.
func (r *Bucket[T]) NumRequeues(item T) int {
	return 0
}

// Forget does nothing: a Bucket does not track items.
func (r *Bucket[T]) Forget(item T) {}

// MaxOf combines limiters by taking the worst case: When calls every limiter
// (so each one records the failure) and returns the largest delay. Used with
// a token bucket, the burst can appear to be exceeded when some items are
// separately delayed longer. The zero value has no limiters and never delays.
type MaxOf[T comparable] struct {
	limiters []Limiter[T]
}

// errNilLimiter is returned for a nil limiter argument.
var errNilLimiter = errors.New("ratelimit: nil limiter")

// isNil reports whether l is nil or holds a nil pointer, map, slice, func,
// channel or interface, on which calling a method is likely to panic.
func isNil[T comparable](l Limiter[T]) bool {
	if l == nil {
		return true
	}
	v := reflect.ValueOf(l)
	switch v.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.Interface:
		return v.IsNil()
	}
	return false
}

// NewMaxOf returns a MaxOf over limiters (copied). It returns an error if
// limiters is empty or any of them is nil (including a typed nil pointer).
func NewMaxOf[T comparable](limiters ...Limiter[T]) (*MaxOf[T], error) {
	if len(limiters) == 0 {
		return nil, errors.New("ratelimit: MaxOf needs at least one limiter")
	}
	for i, l := range limiters {
		if isNil(l) {
			return nil, fmt.Errorf("%w at index %d", errNilLimiter, i)
		}
	}
	return &MaxOf[T]{limiters: append([]Limiter[T](nil), limiters...)}, nil
}

// When calls When on every limiter, in order, and returns the largest delay,
// or 0 if every delay is smaller (as upstream, the result is never negative).
func (r *MaxOf[T]) When(item T) time.Duration {
	ret := time.Duration(0)
	for _, l := range r.limiters {
		if d := l.When(item); d > ret {
			ret = d
		}
	}
	return ret
}

// NumRequeues returns the largest NumRequeues of the limiters, or 0 if every
// one is smaller.
func (r *MaxOf[T]) NumRequeues(item T) int {
	ret := 0
	for _, l := range r.limiters {
		if n := l.NumRequeues(item); n > ret {
			ret = n
		}
	}
	return ret
}

// Forget forwards to every limiter.
func (r *MaxOf[T]) Forget(item T) {
	for _, l := range r.limiters {
		l.Forget(item)
	}
}

// MaxWait caps the delays of a limiter: When returns min(l.When(item),
// maxDelay). Forget and NumRequeues forward to l. The zero value wraps no
// limiter: it never delays and counts nothing.
type MaxWait[T comparable] struct {
	limiter  Limiter[T]
	maxDelay time.Duration
}

// NewMaxWait returns a MaxWait capping l at maxDelay. It returns an error if
// l is nil (including a typed nil pointer) or maxDelay is negative.
func NewMaxWait[T comparable](l Limiter[T], maxDelay time.Duration) (*MaxWait[T], error) {
	if isNil(l) {
		return nil, errNilLimiter
	}
	if maxDelay < 0 {
		return nil, fmt.Errorf("ratelimit: negative max delay %v", maxDelay)
	}
	return &MaxWait[T]{limiter: l, maxDelay: maxDelay}, nil
}

// When returns min(l.When(item), maxDelay). As upstream it does not clamp
// below: a wrapped limiter that returns a negative delay (none of this
// package does) has it passed through.
func (w *MaxWait[T]) When(item T) time.Duration {
	if w.limiter == nil {
		return 0
	}
	d := w.limiter.When(item)
	if d > w.maxDelay {
		return w.maxDelay
	}
	return d
}

// Forget forwards to the wrapped limiter.
func (w *MaxWait[T]) Forget(item T) {
	if w.limiter != nil {
		w.limiter.Forget(item)
	}
}

// NumRequeues forwards to the wrapped limiter.
func (w *MaxWait[T]) NumRequeues(item T) int {
	if w.limiter == nil {
		return 0
	}
	return w.limiter.NumRequeues(item)
}
