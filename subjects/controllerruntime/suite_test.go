package controllerruntime

import (
	"os"
	"testing"

	"github.com/kverify/kverify/props"
	pwq "github.com/kverify/kverify/props/workqueue"
)

// TestSuite runs the workqueue family's checks on the priority queue under
// client-go's semantics. Until the priority queue's profile exists (issue
// 10), most checks fail on deliberate differences, so the run is opt-in:
// KVERIFY_CR_SUITE=1 go test . prints the findings.
func TestSuite(t *testing.T) {
	if os.Getenv("KVERIFY_CR_SUITE") == "" {
		t.Skip("the priority queue's profile is not written yet (issue 10); KVERIFY_CR_SUITE=1 runs the client-go checks on it")
	}
	for _, c := range []struct {
		component string
		checks    func(pwq.Subject) []props.Check
	}{
		{pwq.Component, pwq.QueueChecks},
		{pwq.ComponentDelaying, pwq.DelayingChecks},
		{pwq.ComponentRateLimit, pwq.RateLimitChecks},
	} {
		t.Run(c.component, func(t *testing.T) {
			props.Run(t, c.checks(Subject()), props.WithSubject(Name))
		})
	}
}
