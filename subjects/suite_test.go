package subjects

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestSuite runs every check of every registered entry (see RunSuite).
func TestSuite(t *testing.T) { RunSuite(t, All()) }

// TestReplay replays the trace named by KVERIFY_REPLAY (see RunReplay).
func TestReplay(t *testing.T) { RunReplay(t, All()) }
