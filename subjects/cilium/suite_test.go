package cilium

import (
	"testing"

	"github.com/kverify/kverify/props/checkkit"
	"github.com/kverify/kverify/subjects"
	"github.com/kverify/kverify/subjects/suite"
)

// TestMain checks for leaks.
func TestMain(m *testing.M) { checkkit.VerifyTestMain(m) }

// TestSuite runs the resource component's check and the wire component's
// checks on cilium's Resource[T], as TestSuite/<component>/cilium/<check>.
func TestSuite(t *testing.T) { suite.RunSuite(t, Entries()) }

// TestReplay replays the trace named by KVERIFY_REPLAY on cilium (kverify
// replay FILE --subject cilium).
func TestReplay(t *testing.T) { suite.RunReplay(t, Entries()) }

// TestDivergencesShaped: every declaration names its guarantees and the
// shape of its violation.
func TestDivergencesShaped(t *testing.T) {
	for comp, ds := range divergences() {
		if bad := subjects.Unshaped(ds); len(bad) > 0 {
			t.Errorf("component %s: declarations without Guarantees or Shape: %v", comp, bad)
		}
	}
}

// TestFindings pins the findings to the declarations: every trace under
// traces/findings/cilium names a declared divergence, and every declared
// divergence has a trace.
func TestFindings(t *testing.T) {
	suite.CheckFindings(t, findingsDir, map[string]map[string][]checkkit.Divergence{Name: divergences()})
}

// findingsDir holds the findings (the reproducers are the module
// traces/findings/cilium, whose TestReproducers runs them).
const findingsDir = "../../traces/findings"
