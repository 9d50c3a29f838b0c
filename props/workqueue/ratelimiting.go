package workqueue

import "github.com/kverify/kverify/props"

// rateLimitingChecks returns the rate-limiting queue checks; none without
// NewRateLimiting.
func rateLimitingChecks(s Subject) []props.Check { return nil }
