//go:build !controllerruntime_before_v0_22

package controllerruntime

import (
	"time"

	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
)

// addOpts are AddWithOpts's options; from v0.22.0 a priority is a
// pointer (nil: keep a queued item's priority, or 0).
func addOpts(priority int, after time.Duration, rateLimited bool) priorityqueue.AddOpts {
	return priorityqueue.AddOpts{Priority: &priority, After: after, RateLimited: rateLimited}
}
