package backoff

import (
	"testing"
	"time"

	"github.com/kverify/kverify/props"
)

// nilStep steps a nil backoff.
func nilStep(s Subject) func(*testing.T, props.Config) error {
	return func(t *testing.T, _ props.Config) error {
		if s.NilStep == nil {
			props.SkipNotOffered(t, "the subject has no nil backoff (Subject.NilStep is nil)")
		}
		var got time.Duration
		if p := props.Protect(func() { got = s.NilStep() }); p != nil {
			return props.Broke(gNoPanic, "stepping a nil backoff: %v", p)
		}
		if got != 0 {
			return props.Broke("a nil backoff steps to 0", "stepping a nil backoff returned %s", fmtD(got))
		}
		return nil
	}
}
