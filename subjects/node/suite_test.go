package node

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kverify/kverify/props/checkkit"
	"github.com/kverify/kverify/props/wire"
	"github.com/kverify/kverify/subjects/suite"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestSuite runs the wire checks on the JavaScript clients, as
// TestSuite/wire/<client>/<check>. The adapters' dependencies must be
// installed (npm ci in js/): without them every check fails, saying so.
func TestSuite(t *testing.T) {
	if _, err := os.Stat(filepath.Join(jsDir(), "node_modules")); err != nil {
		t.Fatalf("the JavaScript clients are not installed: run npm ci in %s (%v)", jsDir(), err)
	}
	suite.RunSuite(t, Entries())
}

// TestReplay replays the trace named by KVERIFY_REPLAY on its client
// (kverify replay FILE --subject client-node).
func TestReplay(t *testing.T) { suite.RunReplay(t, Entries()) }

// TestFindings pins the committed findings to the declarations
// (subjects.CheckFindings): every trace under traces/findings/client-node
// and traces/findings/fluent names a declared divergence, and every
// declared divergence has a trace (kverify replay FILE --subject client-node
// reproduces it).
func TestFindings(t *testing.T) {
	divs := map[string]map[string][]checkkit.Divergence{}
	for name, ds := range Divergences {
		divs[name] = map[string][]checkkit.Divergence{wire.Component: ds}
	}
	suite.CheckFindings(t, "../../traces/findings", divs)
}
