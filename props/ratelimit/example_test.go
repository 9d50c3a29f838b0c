package ratelimit_test

import (
	"fmt"

	prl "github.com/kverify/kverify/props/ratelimit"
	"github.com/kverify/kverify/subjects/upstream"
)

// A conformance test for rate limiters is a subject of constructors and
// one call:
//
//	func TestConformance(t *testing.T) {
//		props.Run(t, ratelimit.Checks(subject))
//	}
//
// Exponential is required; a limiter the subject has no constructor for
// is not offered its check, with the reason. Here client-go's limiters
// are the subject; a subject with only an exponential limiter is offered
// the exponential checks, the forget check and the race probe.
func ExampleChecks() {
	for _, c := range prl.Checks(upstream.Limiters()) {
		fmt.Printf("%-30s %s\n", c.Name, c.Family)
	}
	only := prl.Subject{Exponential: upstream.Limiters().Exponential}
	for _, c := range prl.Checks(only) {
		if c.NotOffered != "" {
			fmt.Printf("not offered: %s\n", c.Name)
		}
	}
	// Output:
	// ratelimit/exponential          model
	// ratelimit/exponential-overflow model
	// ratelimit/exponential-sequence witness
	// ratelimit/fastslow             model
	// ratelimit/maxof                model
	// ratelimit/maxwait              model
	// ratelimit/bucket               timing
	// ratelimit/default              timing
	// ratelimit/bad-input            model
	// ratelimit/forget-releases      retention
	// ratelimit/race                 linear
	// not offered: ratelimit/fastslow
	// not offered: ratelimit/maxof
	// not offered: ratelimit/maxwait
	// not offered: ratelimit/bucket
	// not offered: ratelimit/default
	// not offered: ratelimit/bad-input
}
