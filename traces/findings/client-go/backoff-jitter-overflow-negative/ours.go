//go:build kverify_ours

package main

import (
	"time"

	kbackoff "github.com/kverify/kverify/impl/backoff"
)

// ours is kverify's Backoff with the default random source.
type ours struct{ b kbackoff.Backoff }

func (o *ours) Step() time.Duration { return o.b.Step(nil) }

func newBackoff(d time.Duration, jitter float64) backoff {
	return &ours{kbackoff.Backoff{Duration: d, Jitter: jitter}}
}
