package upstream_test

import (
	"testing"

	"github.com/kverify/kverify/subjects"
	"github.com/kverify/kverify/subjects/suite"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestSuite runs every component's checks on client-go, with its declared
// divergences (see subjects/ours' TestSuite for why it lives here).
func TestSuite(t *testing.T) { suite.RunSuite(t, subjects.EntriesOf(subjects.Upstream)) }
