package python

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/kverify/kverify/props/checkkit"
	"github.com/kverify/kverify/props/wire"
	"github.com/kverify/kverify/subjects/suite"
)

// findingsDir holds the Python client's findings (python/<id>: finding.json and a
// standalone repro.py that needs only the kubernetes package and the standard
// library).
const findingsDir = "../../traces/findings"

// TestFindings pins the findings to the declarations
// (suite.CheckFindings): every trace under findingsDir/python names a
// declared divergence, and every declared divergence has a trace.
func TestFindings(t *testing.T) {
	suite.CheckFindings(t, findingsDir, map[string]map[string][]checkkit.Divergence{Name: {wire.Component: Divergences}})
}

// TestReproducers runs each finding's repro.py under the subject's
// python3 (Interpreter): it must print one DEFECT line and exit with
// status 1, and its finding.json must read as a finding of this subject.
func TestReproducers(t *testing.T) {
	if err := exec.Command(Interpreter(), "-c", "import kubernetes").Run(); err != nil {
		t.Skipf("%s cannot import kubernetes (apt-get install python3-kubernetes): %v", Interpreter(), err)
	}
	suite.RunScriptReproducers(t, findingsDir, Name, func(ctx context.Context, dir string) *exec.Cmd {
		return exec.CommandContext(ctx, Interpreter(), filepath.Join(dir, "repro.py"))
	})
}
