package subjects_test

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/kverify/kverify/fuzz/libfuzzer"
	"github.com/kverify/kverify/mutants"
	"github.com/kverify/kverify/subjects"
	"github.com/kverify/kverify/traces/vectors"
)

// checkNames maps each registry component to the names of its checks on
// one side (ours or upstream).
func checkNames(t *testing.T, upstream bool) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, c := range subjects.Registry() {
		b := c.Ours
		if upstream {
			b = c.Upstream
		}
		if b.Checks == nil {
			t.Fatalf("registry: %s has no checks bound on %s", c.Name, map[bool]string{false: "ours", true: "upstream"}[upstream])
		}
		for _, k := range b.Checks() {
			out[c.Name] = append(out[c.Name], k.Name)
		}
	}
	return out
}

// TestRegistryConsistent: every catalogue keyed by component (the mutant
// catalogue and its kill matrix, the fuzz machines, the golden vectors,
// the declared divergences, the nested modules) names only components and
// checks the registry has, and forgets no component the registry has. A
// component added to the registry and to no catalogue, or to a catalogue
// and not the registry (so that kverify verify would silently leave it
// out), fails here; docs/adding-a-component.md is the checklist.
func TestRegistryConsistent(t *testing.T) {
	ours, up := checkNames(t, false), checkNames(t, true)
	comps := subjects.Components()
	if len(comps) == 0 {
		t.Fatal("the registry is empty")
	}
	if d := dup(comps); d != "" {
		t.Errorf("registry: component %q twice", d)
	}
	// known reports whether component/check is in the registry (ours), and
	// adds the component to seen.
	known := func(catalogue, comp, check string, seen map[string]bool) {
		t.Helper()
		if !slices.Contains(comps, comp) {
			t.Errorf("%s names component %q, which the registry does not have", catalogue, comp)
			return
		}
		seen[comp] = true
		if check != "" && !slices.Contains(ours[comp], check) {
			t.Errorf("%s names check %s/%s, which the registry's ours does not have", catalogue, comp, check)
		}
	}
	forgot := func(catalogue string, seen map[string]bool) {
		t.Helper()
		for _, c := range comps {
			if !seen[c] {
				t.Errorf("%s has nothing for component %s, which the registry has", catalogue, c)
			}
		}
	}

	seen := map[string]bool{}
	for _, m := range mutants.Catalogue {
		known("mutants.Catalogue ("+m.ID+")", m.Component, "", seen)
	}
	forgot("mutants.Catalogue", seen)

	f, err := os.Open("../mutants/matrix.tsv")
	if err != nil {
		t.Fatal(err)
	}
	matrix, err := mutants.ReadMatrix(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range matrix {
		m, ok := mutants.ByID(r.ID)
		if !ok {
			continue // mutants' TestMatrixCurrent reports stale rows
		}
		for _, k := range r.KilledBy {
			// A kill with a gate flipped names its setting after the
			// check: "reflector/requests [WatchListClient=false]".
			k, _, _ = strings.Cut(k, " [")
			known("mutants/matrix.tsv ("+r.ID+")", m.Component, k, map[string]bool{})
		}
	}

	seen = map[string]bool{}
	for target, m := range libfuzzer.Machines {
		known("fuzz/libfuzzer.Machines ("+target+")", m.Component, m.Check, seen)
	}
	forgot("fuzz/libfuzzer.Machines", seen)

	seen = map[string]bool{}
	for _, c := range vectors.Components() {
		vs, err := vectors.Generate(c)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range vs {
			known("traces/vectors ("+c+")", c, v.Header.Check, seen)
		}
	}
	forgot("traces/vectors", seen)

	for _, c := range subjects.Registry() {
		for _, d := range c.Upstream.Divergences {
			if !slices.Contains(up[c.Name], d.Check) {
				t.Errorf("upstream's divergences for %s declare check %q, which upstream does not run", c.Name, d.Check)
			}
		}
		for _, d := range c.Ours.Divergences {
			t.Errorf("ours declares a divergence for %s/%s: ours is the reference and must pass", c.Name, d.Check)
		}
	}

	for _, e := range subjects.Externals() {
		if len(e.Components) == 0 {
			t.Errorf("nested subject %s lists no components", e.Name)
		}
		for _, c := range e.Components {
			known("subjects.Externals ("+e.Name+")", c, "", map[string]bool{})
		}
	}

	for _, e := range subjects.All() {
		if !slices.Contains(comps, e.Component) {
			t.Errorf("subjects.All has an entry for %s, which the registry does not have", e.Component)
		}
	}
}

func dup(xs []string) string {
	seen := map[string]bool{}
	for _, x := range xs {
		if seen[x] {
			return x
		}
		seen[x] = true
	}
	return ""
}

// TestResolve: every --subject form resolves, and an unknown one is an
// error that lists the forms.
func TestResolve(t *testing.T) {
	for name, want := range map[string][]string{
		"ours":                                  {"ours"},
		"upstream":                              {"upstream"},
		"all":                                   {"ours", "upstream"},
		"client-go@" + subjects.UpstreamVersion: {"upstream"},
		"mutant:" + mutants.Catalogue[0].ID:     {"mutant:" + mutants.Catalogue[0].ID},
	} {
		ss, err := subjects.Resolve(name)
		if err != nil {
			t.Errorf("Resolve(%q): %v", name, err)
			continue
		}
		var got []string
		for _, s := range ss {
			got = append(got, s.Name)
		}
		if !slices.Equal(got, want) {
			t.Errorf("Resolve(%q) = %v, want %v", name, got, want)
		}
	}
	m, err := subjects.ResolveOne("mutant:" + mutants.Catalogue[0].ID)
	if err != nil || m.Target != subjects.Ours || m.Mutant == nil || !slices.Equal(m.Env(), []string{"KVERIFY_MUTANT=" + m.Mutant.ID, "KVERIFY_MUTANT_SUBJECT=ours"}) {
		t.Errorf("a mutant resolves to ours with its overlay, KVERIFY_MUTANT and KVERIFY_MUTANT_SUBJECT: %+v (env %q), %v", m, m.Env(), err)
	}
	if _, err := m.Select([]string{otherComponent(m.Mutant.Component)}); err == nil {
		t.Errorf("a mutant run without its component's checks was accepted")
	}
	for _, e := range subjects.Externals() {
		s, err := subjects.ResolveOne(e.Name)
		if err != nil || !s.Nested() || s.Dir != e.Dir {
			t.Errorf("Resolve(%q) = %+v, %v; want the nested module in %s", e.Name, s, err, e.Dir)
		}
		if _, err := s.Select([]string{"reflector"}); err == nil && !slices.Contains(e.Components, "reflector") {
			t.Errorf("%s accepted a component it has no checks for", e.Name)
		}
	}
	for _, bad := range []string{"", "nobody", "mutant:no-such-mutant", "client-go@v0.0.1", "Ours"} {
		if _, err := subjects.Resolve(bad); err == nil {
			t.Errorf("Resolve(%q) succeeded, want an error", bad)
		} else if bad == "nobody" && !strings.Contains(err.Error(), "mutant:ID") {
			t.Errorf("the error for an unknown subject does not list the forms: %v", err)
		}
	}
	if _, err := subjects.ResolveOne("all"); err == nil {
		t.Error("ResolveOne(all) succeeded, want an error: all names two subjects")
	}
}

func otherComponent(c string) string {
	for _, x := range subjects.Components() {
		if x != c {
			return x
		}
	}
	return c
}

// TestAddingAComponentChecklist: the checklist for adding a component
// (docs/adding-a-component.md) names every catalogue TestRegistryConsistent
// holds to the registry, at paths that exist.
func TestAddingAComponentChecklist(t *testing.T) {
	doc, err := os.ReadFile("../docs/adding-a-component.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{
		"subjects/registry.go", "subjects/guarantees.go", "subjects/ours/", "subjects/upstream/",
		"mutants/matrix.tsv", "fuzz/libfuzzer/machines.go", "fuzz/libfuzzer/targets.go",
		"traces/vectors/vectors.go", "props/checkkit",
	} {
		if !strings.Contains(string(doc), path) {
			t.Errorf("docs/adding-a-component.md does not name %s", path)
		}
		if _, err := os.Stat("../" + path); err != nil {
			t.Errorf("docs/adding-a-component.md names %s: %v", path, err)
		}
	}
}

// TestLayoutNamesEveryFolder: the layout tree in docs/architecture.md
// names every top-level folder of the repository.
func TestLayoutNamesEveryFolder(t *testing.T) {
	doc, err := os.ReadFile("../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir("..")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") || e.Name() == "testdata" {
			continue
		}
		if !strings.Contains(string(doc), "\n"+e.Name()+"/") {
			t.Errorf("the layout in docs/architecture.md does not name %s/", e.Name())
		}
	}
}

// TestDivergencesShaped: every declared divergence of a registry subject
// names its guarantees and the shape of its violation (issue 27, class 4).
func TestDivergencesShaped(t *testing.T) {
	for _, c := range subjects.Registry() {
		for _, b := range []subjects.Binding{c.Ours, c.Upstream} {
			if bad := subjects.Unshaped(b.Divergences); len(bad) > 0 {
				t.Errorf("component %s: declarations without Guarantees or Shape: %v", c.Name, bad)
			}
		}
	}
}
