package python

import (
	"os/exec"
	"testing"

	"github.com/kverify/kverify/subjects/suite"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestSuite runs the wire checks on the Python client, as
// TestSuite/wire/python/<check>. Without the kubernetes package every
// check fails, saying so.
func TestSuite(t *testing.T) {
	if out, err := exec.Command(Interpreter(), "-c", "import kubernetes").CombinedOutput(); err != nil {
		t.Fatalf("%s cannot import kubernetes (apt-get install python3-kubernetes, or set KVERIFY_PYTHON): %v\n%s", Interpreter(), err, out)
	}
	suite.RunSuite(t, Entries())
}

// TestReplay replays the trace named by KVERIFY_REPLAY on the Python
// client (kverify replay FILE --subject python).
func TestReplay(t *testing.T) { suite.RunReplay(t, Entries()) }
