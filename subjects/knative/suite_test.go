package knative

import (
	"testing"

	"github.com/kverify/kverify/props/checkkit"
	"github.com/kverify/kverify/subjects"
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

// TestSuite runs the work queue family's checks (the plain queue, the
// delaying queue, the rate-limiting queue) on the two-lane queue, under
// the Knative profile (what the two lanes promise), and the controller
// component's on controller.Impl, with their declared divergences. kverify
// verify --subject knative runs it.
func TestSuite(t *testing.T) { suite.RunSuite(t, Entries()) }

// TestReplay replays the trace named by KVERIFY_REPLAY on the two-lane
// queue or controller.Impl (kverify replay FILE --subject knative).
func TestReplay(t *testing.T) { suite.RunReplay(t, Entries()) }

// TestFindings pins the committed findings to the declarations: every
// trace under traces/findings/knative names a declared divergence, and
// every declared divergence has a trace.
func TestFindings(t *testing.T) {
	suite.CheckFindings(t, "../../traces/findings", map[string]map[string][]checkkit.Divergence{Name: divergences()})
}

// TestDivergencesShaped: every declaration names its guarantees and the
// shape of its violation.
func TestDivergencesShaped(t *testing.T) {
	for comp, ds := range divergences() {
		if bad := subjects.Unshaped(ds); len(bad) > 0 {
			t.Errorf("component %s: declarations without Guarantees or Shape: %v", comp, bad)
		}
	}
}
