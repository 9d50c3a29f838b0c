//go:build !kverify_ours

package main

import (
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

func newBackoff(d time.Duration, factor float64, steps int) backoff {
	return &wait.Backoff{Duration: d, Factor: factor, Steps: steps}
}
