package lasso

import (
	"testing"

	"github.com/kverify/kverify/props/checkkit"
	"github.com/kverify/kverify/subjects"
	"github.com/kverify/kverify/subjects/suite"
	"go.uber.org/goleak"
)

// TestMain checks for leaks, except the goroutines left in a synctest
// bubble that ended in the deadlock panic, which the check whose bubble it
// was reported (a Termination or No panic violation), and which stay
// blocked for the life of the process: lasso's health loop
// (healthLoop, divergences.go: controller/stop meets it every run) and
// lasso's informer stopped in client-go's watch-list backoff
// (informerOutlivesStop, wire.go: wire/schedules meets it now and then),
// with the informer's other goroutines, which wait for that one.
func TestMain(m *testing.M) {
	checkkit.VerifyTestMain(m,
		goleak.IgnoreAnyFunction("github.com/rancher/lasso/pkg/cache.(*healthcheck).pingUntilGood"),
		goleak.IgnoreAnyFunction("k8s.io/client-go/tools/cache.(*Reflector).watchList.func1"),
		goleak.IgnoreAnyFunction("k8s.io/client-go/tools/cache.(*controller).RunWithContext"),
		goleak.IgnoreAnyFunction("k8s.io/client-go/tools/cache.(*sharedProcessor).run"),
		goleak.IgnoreAnyFunction("k8s.io/client-go/tools/cache.(*processorListener).run"),
		goleak.IgnoreAnyFunction("k8s.io/client-go/tools/cache.(*processorListener).pop"))
}

// TestSuite runs the controller component's checks on lasso's shared
// controller, as TestSuite/controller/lasso/<check>: it passes when lasso
// behaves as the checks and its declared divergences say.
func TestSuite(t *testing.T) { suite.RunSuite(t, Entries()) }

// TestReplay replays the trace named by KVERIFY_REPLAY on lasso (kverify
// replay FILE --subject lasso).
func TestReplay(t *testing.T) { suite.RunReplay(t, Entries()) }

// TestFindings pins the findings to the declarations: every trace under
// traces/findings/lasso names a
// declared divergence, and every declared divergence has a trace.
func TestFindings(t *testing.T) {
	suite.CheckFindings(t, findingsDir, map[string]map[string][]checkkit.Divergence{Name: divergences()})
}

// findingsDir holds the findings (the reproducers are the module
// traces/findings/lasso, whose TestReproducers runs them).
const findingsDir = "../../traces/findings"

// TestDivergencesShaped: every declaration names its guarantees and the
// shape of its violation.
func TestDivergencesShaped(t *testing.T) {
	for comp, ds := range divergences() {
		if bad := subjects.Unshaped(ds); len(bad) > 0 {
			t.Errorf("component %s: declarations without Guarantees or Shape: %v", comp, bad)
		}
	}
}
