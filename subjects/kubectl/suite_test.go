package kubectl

import (
	"testing"

	"github.com/kverify/kverify/subjects/suite"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestSuite runs the wire checks on kubectl get -w, as
// TestSuite/wire/kubectl/<check>. Without a kubectl every check fails,
// saying so.
func TestSuite(t *testing.T) {
	if Binary() == "" {
		t.Fatal("no kubectl: set KVERIFY_KUBECTL or put kubectl on PATH")
	}
	suite.RunSuite(t, Entries())
}

// TestReplay replays the trace named by KVERIFY_REPLAY on kubectl
// (kverify replay FILE --subject kubectl).
func TestReplay(t *testing.T) { suite.RunReplay(t, Entries()) }
