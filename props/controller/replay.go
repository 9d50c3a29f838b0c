package controller

import (
	"fmt"
	"testing"

	"github.com/kverify/kverify/props/checkkit"
	"github.com/kverify/kverify/traces"
)

// Replay runs a saved trace of one of the controller checks on s: it runs
// the check again. The fixed scenarios are deterministic; for
// controller/converge the seed printed with the trace reproduces the run
// with -rapid.seed, and the trace's steps show the schedule it drew.
func Replay(t *testing.T, s Subject, tr *traces.Trace) error {
	for _, c := range Checks(s) {
		if c.Name == tr.Check {
			if c.NotOffered != "" {
				return fmt.Errorf("controller: %s is not offered to the subject: %s", c.Name, c.NotOffered)
			}
			return c.Run(t, checkkit.Config{})
		}
	}
	return fmt.Errorf("controller: no replay for check %q", tr.Check)
}
