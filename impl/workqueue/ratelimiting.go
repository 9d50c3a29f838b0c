package workqueue

import (
	"errors"
	"reflect"

	"github.com/kverify/kverify/impl/ratelimit"
)

// RateLimitingConfig configures a RateLimiting queue. It embeds the delaying
// queue's DelayingConfig, so every field there (Name, Metrics, Clock, Order)
// means the same here. Limiter is required.
type RateLimitingConfig[T comparable] struct {
	DelayingConfig[T]
	// Limiter decides how long AddRateLimited makes an item wait, and keeps
	// the per-item failure counts behind Forget and NumRequeues. Any
	// ratelimit.Limiter works, as does a client-go TypedRateLimiter[T]: the
	// method sets are the same.
	Limiter ratelimit.Limiter[T]
}

// ErrNilLimiter is returned by NewRateLimiting when the config has no
// limiter (a nil interface, or one holding a nil pointer, map, slice, func,
// channel or interface).
var ErrNilLimiter = errors.New("workqueue: NewRateLimiting: RateLimitingConfig.Limiter is nil")

// RateLimiting is a Delaying queue that asks a rate limiter how long an item
// must wait before it is retried: AddRateLimited(item) is
// AddAfter(item, limiter.When(item)). It has every method of Delaying (and
// so of Queue) with the same guarantees, and is safe for concurrent use
// provided its limiter is. Make one with NewRateLimiting.
//
// As in client-go, Forget only resets the limiter's count for the item: it
// does not remove the item from the queue nor from the waiting items, and
// the caller must still call Done.
type RateLimiting[T comparable] struct {
	*Delaying[T]
	limiter ratelimit.Limiter[T]
}

// NewRateLimiting returns a running rate-limiting queue over a new Delaying
// queue made from cfg.DelayingConfig. It returns ErrNilLimiter, and starts
// nothing, if cfg.Limiter is nil. Like Delaying, its goroutine runs until
// ShutDown or ShutDownWithDrain.
func NewRateLimiting[T comparable](cfg RateLimitingConfig[T]) (*RateLimiting[T], error) {
	if isNilLimiter(cfg.Limiter) {
		return nil, ErrNilLimiter
	}
	return &RateLimiting[T]{Delaying: NewDelaying(cfg.DelayingConfig), limiter: cfg.Limiter}, nil
}

// AddRateLimited adds item once the limiter says it may be retried: it calls
// the limiter's When(item) exactly once (which counts one more failure of
// item) and then AddAfter(item, delay) with its answer. A delay <= 0 adds
// item at once. Like AddAfter, it is ignored once the queue is shutting
// down, though the limiter is still consulted.
func (r *RateLimiting[T]) AddRateLimited(item T) {
	r.AddAfter(item, r.limiter.When(item))
}

// Forget tells the limiter that item is finished being retried, whether it
// succeeded or failed for good, so that its next failure starts from
// scratch. It does not touch the queue: call Done as well.
func (r *RateLimiting[T]) Forget(item T) { r.limiter.Forget(item) }

// NumRequeues returns the limiter's count of item's failures (the number of
// AddRateLimited calls for item since its last Forget, for the limiters of
// package ratelimit).
func (r *RateLimiting[T]) NumRequeues(item T) int { return r.limiter.NumRequeues(item) }

// isNilLimiter reports whether l is nil or holds a nil value of a kind whose
// methods would likely panic.
func isNilLimiter[T comparable](l ratelimit.Limiter[T]) bool {
	if l == nil {
		return true
	}
	switch v := reflect.ValueOf(l); v.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.Interface:
		return v.IsNil()
	}
	return false
}
