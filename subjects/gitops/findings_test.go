package gitops

import (
	"context"
	"encoding/json"
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

// findingsDir holds the cluster cache's findings, one directory each under
// gitops/ (finding.json and a standalone main.go), and the module they
// build in (gitops/go.mod: gitops-engine v0.7.3 on k8s.io/* v0.23.1, no
// kverify, so the reproducers have no ours.go twin), beside the other
// subjects' findings.
const findingsDir = "../../traces/findings"

// TestFindings pins the findings to the declarations
// (suite.CheckFindings): every trace under findingsDir/gitops names a
// declared divergence, and every declared divergence has a trace.
func TestFindings(t *testing.T) {
	suite.CheckFindings(t, findingsDir, map[string]map[string][]checkkit.Divergence{Name: {wire.Component: Divergences}})
}

// TestReproducers builds the findings' reproducers (go build in
// findingsDir/gitops) and runs each: on the pinned release each must
// print one DEFECT line and exit 1 (findings.Run), and its finding.json
// must read as a findings.Finding of this subject.
func TestReproducers(t *testing.T) {
	if testing.Short() {
		t.Skip("builds gitops-engine")
	}
	dir := filepath.Join(findingsDir, Name)
	reports, err := filepath.Glob(filepath.Join(dir, "*", "finding.json"))
	if err != nil || len(reports) == 0 {
		t.Fatalf("no findings under %s (%v)", dir, err)
	}
	bin := t.TempDir()
	cmd := exec.Command("go", "build", "-o", bin+string(filepath.Separator), "./...")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./... in %s: %v\n%s", dir, err, out)
	}
	for _, report := range reports {
		id := filepath.Base(filepath.Dir(report))
		t.Run(id, func(t *testing.T) {
			b, err := os.ReadFile(report)
			if err != nil {
				t.Fatal(err)
			}
			var f findings.Finding
			dec := json.NewDecoder(strings.NewReader(string(b)))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&f); err != nil {
				t.Fatalf("%s: %v", report, err)
			}
			if f.ID != id || f.Subject != Name || f.Title == "" || f.Promise == "" || f.Observed == "" || f.Pinned == "" || f.Newest == "" || f.Upstream == "" || f.First == "" || len(f.Checks) == 0 || len(f.Sequence) == 0 {
				t.Errorf("%s: incomplete, or not the finding %s of subject %s", report, id, Name)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			line, defect, err := findings.Run(ctx, filepath.Join(bin, id))
			if err != nil {
				t.Fatal(err)
			}
			if !defect {
				t.Errorf("on %s the reproducer printed %q; want DEFECT", Version, line)
			}
			t.Log(line)
		})
	}
}
