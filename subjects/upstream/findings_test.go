package upstream

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kverify/kverify/props/checkkit"
	"github.com/kverify/kverify/traces/findings"
	"golang.org/x/mod/modfile"
)

// root is the module root, relative to this package.
const root = "../.."

// TestEveryDefectHasAReproducer holds client-go's findings
// (traces/findings/client-go) and this package's declarations to each
// other: every finding names checks whose declared divergence is a
// defect, and every declared defect has a finding. It lives here, not in
// traces/findings, so that the findings package and its test do not build
// client-go's informers and tools.
func TestEveryDefectHasAReproducer(t *testing.T) {
	defects := map[string]checkkit.Divergence{}
	for _, e := range Entries() {
		for _, d := range e.Divergences {
			switch d.Class {
			case checkkit.ClassDefect:
				defects[d.Check] = d
			case checkkit.ClassDesign, checkkit.ClassPrecondition:
			default:
				t.Errorf("%s/%s: class %q is none of defect, design, precondition", e.Component, d.Check, d.Class)
			}
			if strings.TrimSpace(d.Evidence) == "" {
				t.Errorf("%s/%s: no evidence for its class", e.Component, d.Check)
			}
		}
	}
	fs, err := findings.Load(root)
	if err != nil {
		t.Fatal(err)
	}
	covered := map[string]bool{}
	n := 0
	for _, f := range fs {
		if f.Subject != "client-go" {
			continue
		}
		n++
		for _, c := range f.Checks {
			if _, ok := defects[c]; !ok {
				t.Errorf("%s: check %s has no divergence declared a defect", f.ID, c)
			}
			covered[c] = true
		}
	}
	if n == 0 {
		t.Fatalf("no client-go findings under %s", filepath.Join(findings.Dir, "client-go"))
	}
	for c, d := range defects {
		// A random check that meets the behaviour now and then shares its
		// finding with the fixed check that declares the same reason.
		if !covered[c] && !slices.ContainsFunc(slices.Collect(maps.Values(defects)), func(o checkkit.Divergence) bool { return covered[o.Check] && o.Reason == d.Reason }) {
			t.Errorf("declared defect %s has no reproducer under %s", c, filepath.Join(findings.Dir, "client-go"))
		}
	}
}

// TestReleaseIsPinned holds Release to the client-go release go.mod
// requires: the one this package's adapters and traces/findings'
// reproducers are built against (traces/findings' TestReproducers reads
// it from go.mod).
func TestReleaseIsPinned(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	mf, err := modfile.ParseLax("go.mod", b, nil)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(mf.Require, func(r *modfile.Require) bool { return r.Mod.Path == "k8s.io/client-go" })
	if i < 0 {
		t.Fatal("go.mod does not require k8s.io/client-go")
	}
	if got := mf.Require[i].Mod.Version; got != Release {
		t.Errorf("go.mod requires k8s.io/client-go %s; Release is %s", got, Release)
	}
}
