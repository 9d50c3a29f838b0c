package kubectl

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/kverify/kverify/props/checkkit"
	"github.com/kverify/kverify/props/wire"
	"github.com/kverify/kverify/subjects/suite"
)

// findingsDir holds kubectl's findings (kubectl/<id>: finding.json and a
// standalone repro.py that needs only kubectl and Python's standard
// library).
const findingsDir = "../../traces/findings"

// TestFindings pins the findings to the declarations
// (suite.CheckFindings): every trace under findingsDir/kubectl names a
// declared divergence, and every declared divergence has a trace.
func TestFindings(t *testing.T) {
	suite.CheckFindings(t, findingsDir, map[string]map[string][]checkkit.Divergence{Name: {wire.Component: Divergences}})
}

// TestReproducers runs each finding's repro.py on the subject's kubectl
// (Binary): it must print one DEFECT line and exit with status 1, and its
// finding.json must read as a finding of this subject.
func TestReproducers(t *testing.T) {
	kubectl := Binary()
	if kubectl == "" {
		t.Skip("no kubectl: set KVERIFY_KUBECTL or put kubectl on PATH")
	}
	suite.RunScriptReproducers(t, findingsDir, Name, func(ctx context.Context, dir string) *exec.Cmd {
		cmd := exec.CommandContext(ctx, "python3", filepath.Join(dir, "repro.py"))
		cmd.Env = append(os.Environ(), "KUBECTL="+kubectl)
		return cmd
	})
}
