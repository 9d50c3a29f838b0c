// Package ratelimit is the conformance suite for per-item rate limiters,
// checked against the models in spec/ratelimit.
package ratelimit

import "time"

// Limiter is the method set of a rate limiter over string items
// (client-go's TypedRateLimiter[string]).
type Limiter interface {
	When(item string) time.Duration
	Forget(item string)
	NumRequeues(item string) int
}

// Subject is a family of rate limiters under test: one constructor per
// kind. A constructor may reject bad parameters with an error; one that
// cannot fail returns nil.
type Subject struct {
	Exponential       func(base, max time.Duration) (Limiter, error)
	FastSlow          func(fast, slow time.Duration, maxFast int) (Limiter, error)
	Bucket            func(qps float64, burst int) (Limiter, error)
	MaxOf             func(limiters ...Limiter) (Limiter, error)
	MaxWait           func(l Limiter, max time.Duration) (Limiter, error)
	DefaultController func() Limiter
	DefaultItemBased  func() Limiter
}
