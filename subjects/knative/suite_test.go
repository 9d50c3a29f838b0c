package knative

import (
	"os"
	"testing"

	"github.com/kverify/kverify/props/checkkit"
	"github.com/kverify/kverify/subjects/suite"
	"go.uber.org/goleak"
)

// TestMain checks for leaks, except the two goroutines knative's
// dependencies start at init and keep for the life of the process
// (OpenCensus's view worker, knative's metrics worker): no queue owns them.
// Not after a check hung (the drain spin, declared): its goroutines still
// run, and the checks after it ran in fresh processes, each checked.
func TestMain(m *testing.M) {
	checkkit.VerifyTestMain(m,
		goleak.IgnoreTopFunction("go.opencensus.io/stats/view.(*worker).start"),
		goleak.IgnoreTopFunction("knative.dev/pkg/metrics.(*metricsWorker).start"))
}

// TestSuite (the work queue family's checks on the two-lane queue) comes
// with the profile that says what the two lanes promise and the
// declarations of what they break (issue 42): today most checks fail on
// it, the asynchronous hand-off between the lanes and the drain defect
// (traces/findings/knative) among the causes. KVERIFY_KNATIVE_NOW=1 go
// test -run TestSuiteNow shows where it stands (an environment variable,
// not a flag: a check that hangs reruns the rest in a fresh process).
func TestSuiteNow(t *testing.T) {
	if os.Getenv("KVERIFY_KNATIVE_NOW") == "" {
		t.Skip("issue 42 in progress: set KVERIFY_KNATIVE_NOW=1 to run the work queue checks on the two-lane queue")
	}
	suite.RunSuite(t, Entries())
}

// TestReplay replays the trace named by KVERIFY_REPLAY on the two-lane
// queue (kverify replay FILE --subject knative).
func TestReplay(t *testing.T) { suite.RunReplay(t, Entries()) }

// TestFindings pins the committed findings to the declarations: every
// trace under traces/findings/knative names a declared divergence, and
// every declared divergence has a trace.
func TestFindings(t *testing.T) {
	suite.CheckFindings(t, "../../traces/findings", map[string]map[string][]checkkit.Divergence{Name: divergences()})
}
