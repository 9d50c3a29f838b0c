package backoff

import (
	"testing"
	"time"

	"github.com/kverify/kverify/props/checkkit"
)

// nilStep steps a nil backoff.
func nilStep(s Subject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, _ checkkit.Config) error {
		if s.NilStep == nil {
			checkkit.SkipNotOffered(t, "the subject has no nil backoff (Subject.NilStep is nil)")
		}
		var got time.Duration
		if p := checkkit.Protect(func() { got = s.NilStep() }); p != nil {
			return checkkit.Broke(GNoPanic, "stepping a nil backoff: %v", p)
		}
		if got != 0 {
			return checkkit.Broke(GNilStep, "stepping a nil backoff returned %s", fmtD(got))
		}
		return nil
	}
}
