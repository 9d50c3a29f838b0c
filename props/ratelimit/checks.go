package ratelimit

import "github.com/kverify/kverify/props"

// Checks returns the rate limiter checks for s.
func Checks(s Subject) []props.Check { return nil }
