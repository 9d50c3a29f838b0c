//go:build kverify_ours

package main

import (
	"time"

	"github.com/kverify/kverify/impl/ratelimit"
)

func newLimiter(base, max time.Duration) limiter {
	l, err := ratelimit.NewItemExponential[interface{}](base, max)
	if err != nil {
		panic(err)
	}
	return l
}
