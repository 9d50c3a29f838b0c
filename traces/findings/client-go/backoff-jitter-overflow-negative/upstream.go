//go:build !kverify_ours

package main

import (
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

func newBackoff(d time.Duration, jitter float64) backoff {
	return &wait.Backoff{Duration: d, Jitter: jitter}
}
