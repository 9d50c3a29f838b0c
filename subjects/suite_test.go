package subjects

import (
	"flag"
	"strings"
	"testing"

	"github.com/kverify/kverify/internal/kvenv"
	"github.com/kverify/kverify/subjects/suite"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestSuite runs every check of every registered entry (see suite.RunSuite): it
// is the suite the kverify command builds and drives (KVERIFY_SUBJECTS,
// ...). A plain go test ./... runs the same suite one package per subject
// and component instead (subjects/suites), each binary with its own
// timeout: on a loaded 2-core machine one subject's whole suite took most
// of go test's 10 minutes. Named with -run
// (go test -run TestSuite/workqueue ./subjects), it runs here too.
func TestSuite(t *testing.T) {
	env, err := kvenv.Load()
	if err != nil {
		t.Fatalf("kverify's environment: %v", err)
	}
	driven := len(env.Subjects) > 0 || len(env.Components) > 0 || len(env.Only) > 0 || env.List || env.Mutant != ""
	if f := flag.Lookup("test.run"); !driven && (f == nil || !strings.Contains(f.Value.String(), "TestSuite")) {
		t.Skip("go test ./... runs the suite in subjects/ours and subjects/upstream (TestSuite there); kverify drives this one")
	}
	suite.RunSuite(t, All())
}

// TestReplay replays the trace named by KVERIFY_REPLAY (see suite.RunReplay).
func TestReplay(t *testing.T) { suite.RunReplay(t, All()) }
