package retrywatcher_test

import (
	"testing"

	"github.com/kverify/kverify/subjects"
	"github.com/kverify/kverify/subjects/suite"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestSuite runs component retrywatcher's checks on upstream (see package suites for
// why one package per component).
func TestSuite(t *testing.T) {
	suite.RunSuite(t, subjects.EntriesFor(subjects.Upstream, "retrywatcher"))
}
