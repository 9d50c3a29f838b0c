package python

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kverify/kverify/props/checkkit"
	"github.com/kverify/kverify/props/wire"
	"github.com/kverify/kverify/subjects/suite"
	"github.com/kverify/kverify/traces/findings"
)

// findingsDir holds the Python client's findings (python/<id>: finding.json and a
// standalone repro.py that needs only the kubernetes package and the standard
// library).
const findingsDir = "../../traces/findings"

// TestFindings pins the findings to the declarations
// (suite.CheckFindings): every trace under findingsDir/kubectl names a
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
	reports, err := filepath.Glob(filepath.Join(findingsDir, Name, "*", "finding.json"))
	if err != nil || len(reports) == 0 {
		t.Fatalf("no findings under %s (%v)", filepath.Join(findingsDir, Name), err)
	}
	for _, report := range reports {
		id := filepath.Base(filepath.Dir(report))
		t.Run(id, func(t *testing.T) {
			b, err := os.ReadFile(report)
			if err != nil {
				t.Fatal(err)
			}
			var f findings.Finding
			dec := json.NewDecoder(bytes.NewReader(b))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&f); err != nil || f.ID != id || f.Subject != Name {
				t.Fatalf("%s: %v, or not the finding %s of %s", report, err, id, Name)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, Interpreter(), filepath.Join(filepath.Dir(report), "repro.py"))
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err = cmd.Run()
			out := strings.TrimSpace(stdout.String())
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 1 || strings.Contains(out, "\n") || !strings.HasPrefix(out, "DEFECT: ") {
				t.Fatalf("want one DEFECT line and exit status 1, got %v\nstdout: %s\nstderr: %s", err, out, stderr.String())
			}
			t.Log(out)
		})
	}
}
