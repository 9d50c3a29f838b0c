package ours

import (
	"time"

	rl "github.com/kverify/kverify/impl/ratelimit"
	prl "github.com/kverify/kverify/props/ratelimit"
)

// Limiters are our rate limiters as a subject. The limiters satisfy
// prl.Limiter as they are; the combinators' parts are prl.Limiters, which
// satisfy rl.Limiter[string] (the same method set).
func Limiters() prl.Subject {
	return prl.Subject{
		Exponential: func(base, max time.Duration) (prl.Limiter, error) {
			return limiter(rl.NewItemExponential[string](base, max))
		},
		FastSlow: func(fast, slow time.Duration, maxFast int) (prl.Limiter, error) {
			return limiter(rl.NewItemFastSlow[string](fast, slow, maxFast))
		},
		Bucket: func(qps float64, burst int) (prl.Limiter, error) {
			return limiter(rl.NewBucket[string](qps, burst))
		},
		MaxOf: func(ls ...prl.Limiter) (prl.Limiter, error) {
			return limiter(rl.NewMaxOf(parts(ls)...))
		},
		MaxWait: func(l prl.Limiter, max time.Duration) (prl.Limiter, error) {
			var inner rl.Limiter[string]
			if l != nil {
				inner = l
			}
			return limiter(rl.NewMaxWait(inner, max))
		},
		DefaultController: func() prl.Limiter { return rl.DefaultController[string]() },
		DefaultItemBased:  func() prl.Limiter { return rl.DefaultItemBased[string]() },
	}
}

// limiter returns l as a prl.Limiter, or a nil interface (not a typed nil
// pointer) with the constructor's error.
func limiter[L prl.Limiter](l L, err error) (prl.Limiter, error) {
	if err != nil {
		return nil, err
	}
	return l, nil
}

// parts converts the parts of a combinator, keeping nil parts nil.
func parts(ls []prl.Limiter) []rl.Limiter[string] {
	out := make([]rl.Limiter[string], len(ls))
	for i, l := range ls {
		if l != nil {
			out[i] = l
		}
	}
	return out
}
