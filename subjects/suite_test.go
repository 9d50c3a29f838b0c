package subjects

import (
	"flag"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestSuite runs every check of every registered entry (see RunSuite): it
// is the suite the kverify command builds and drives (KVERIFY_SUBJECTS,
// ...). A plain go test ./... runs the same suite one subject per package
// instead (subjects/ours and subjects/upstream, TestSuite), each binary
// with its own timeout, half as long: on a loaded 2-core machine this
// package's run took most of go test's 10 minutes. Named with -run
// (go test -run TestSuite/workqueue ./subjects), it runs here too.
func TestSuite(t *testing.T) {
	env := loadEnv(t)
	driven := len(env.Subjects) > 0 || len(env.Components) > 0 || len(env.Only) > 0 || env.List || env.Mutant != ""
	if f := flag.Lookup("test.run"); !driven && (f == nil || !strings.Contains(f.Value.String(), "TestSuite")) {
		t.Skip("go test ./... runs the suite in subjects/ours and subjects/upstream (TestSuite there); kverify drives this one")
	}
	RunSuite(t, All())
}

// TestReplay replays the trace named by KVERIFY_REPLAY (see RunReplay).
func TestReplay(t *testing.T) { RunReplay(t, All()) }
