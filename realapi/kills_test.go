package realapi

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/kverify/kverify/mutants"
)

// realKills are reflector mutants from the catalogue that the differential
// runs against the real stack must kill, each with the test that kills it
// and the property its failure must name. Every property of this module is
// in the list, so none of them is a check that cannot fail.
var realKills = []struct {
	mutant, run, property string
}{
	{"refl-watchlist-no-match", "TestSync/ours/client-watchlist=true/server-watchlist=true", "request shapes"},
	{"refl-bookmark-not-earning", "TestSync/ours/client-watchlist=true/server-watchlist=true", "earned versions"},
	{"refl-watch-not-stopped", "TestRestart/ours/client-watchlist=false", "no leak after stop"},
	{"refl-expired-watch-rewatches", "TestRestart/ours/client-watchlist=false", "convergence"},
	{"inf-process-skips-deletes", "TestInformer/ours/watchlist=true", "convergence"},
	{"inf-listener-delete-new", "TestInformer/ours/watchlist=true", "notifications"},
	{"inf-never-synced", "TestInformer/ours/watchlist=true", "synced"},
}

// TestKills builds this package's tests with each mutant of realKills (go
// -overlay) and runs the test that must kill it. It builds the test binary
// once per mutant, so it runs only with REALAPI_MUTANTS=1 (make realapi).
func TestKills(t *testing.T) {
	if os.Getenv("REALAPI_MUTANTS") != "1" {
		t.Skip("REALAPI_MUTANTS=1 runs it (make realapi): one test build per mutant")
	}
	for _, k := range realKills {
		t.Run(k.mutant, func(t *testing.T) {
			m, ok := mutants.ByID(k.mutant)
			if !ok {
				t.Fatalf("no mutant %s in the catalogue", k.mutant)
			}
			overlay, err := m.Overlay("..", t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			run := "^" + strings.ReplaceAll(k.run, "/", "$/^") + "$"
			cmd := exec.Command("go", "test", "-count=1", "-overlay", overlay, "-run", run, ".")
			cmd.Env = append(os.Environ(), "REALAPI_MUTANTS=0")
			out, err := cmd.CombinedOutput()
			switch {
			case err == nil:
				t.Errorf("mutant %s (%s) survived %s:\n%s", m.ID, m.Bug, k.run, out)
			case !strings.Contains(string(out), k.property+":"):
				t.Errorf("mutant %s failed %s, but not by %q:\n%s", m.ID, k.run, k.property, out)
			}
		})
	}
}
