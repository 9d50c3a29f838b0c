//go:build controllerruntime_before_v0_22 && !controllerruntime_before_v0_20

package controllerruntime

import (
	"time"

	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
)

// addOpts are AddWithOpts's options; before v0.22.0 a priority is an int.
func addOpts(priority int, after time.Duration, rateLimited bool) priorityqueue.AddOpts {
	return priorityqueue.AddOpts{Priority: priority, After: after, RateLimited: rateLimited}
}
