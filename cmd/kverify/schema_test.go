package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kverify/kverify/mutants"
	"github.com/kverify/kverify/subjects"
)

// schemaSample are merged mutants whose kills do not hang on a race
// probe's luck: each must fail the same checks in the schema build as in a
// build of its own.
var schemaSample = []string{"ctl-requeue-ignored", "ctl-one-worker", "bo-returns-next", "bo-reset-inclusive"}

// TestSchemaAgreesWithSingleBuilds proves the schema build (mutants.Schema)
// on a sample: each sampled mutant, activated in one build that holds them
// all, fails exactly the checks its own build fails; and the schema build
// with no mutant active is the original: every check of the sampled
// components passes. Builds without -race, about half a minute; skipped
// with -short.
func TestSchemaAgreesWithSingleBuilds(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the suite five times")
	}
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	var ms []mutants.Mutant
	var comps []string
	for _, id := range schemaSample {
		m, ok := mutants.ByID(id)
		if !ok {
			t.Fatalf("mutant %s is not in the catalogue", id)
		}
		ms = append(ms, m)
		if !slices.Contains(comps, m.Component) {
			comps = append(comps, m.Component)
		}
	}
	dir := t.TempDir()
	sch, err := mutants.NewSchema(root, dir, ms, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(sch.Alone) > 0 {
		t.Fatalf("sampled mutants not merged: %v", sch.Alone)
	}
	pkgDir := filepath.Join(root, "subjects")
	merged, err := buildSuiteIn(pkgDir, sch.Overlay, false)
	if err != nil {
		t.Fatal(err)
	}
	defer merged.Close()
	var c commonFlags
	failing := func(s *suite, m mutants.Mutant, extra ...string) []string {
		subject, err := subjects.ResolveOne("mutant:" + m.ID)
		if err != nil {
			t.Fatal(err)
		}
		env, err := c.env([]string{m.Component})
		if err != nil {
			t.Fatal(err)
		}
		run, want, _ := mutantRun(subject, m, c, append(env, extra...))
		rs, _ := s.runAll(run, want)
		var out []string
		for _, r := range rs {
			if r.Status != "pass" && r.Status != "skip" {
				out = append(out, r.Check+":"+r.Status)
			}
		}
		return out
	}
	for _, m := range ms {
		single, err := buildSuiteIn(pkgDir, mustOverlay(t, m, root), false)
		if err != nil {
			t.Fatal(err)
		}
		alone := failing(single, m)
		single.Close()
		inSchema := failing(merged, m, sch.Env(m.ID))
		if len(alone) == 0 || strings.Join(alone, " ") != strings.Join(inSchema, " ") {
			t.Errorf("mutant %s fails %v alone and %v in the schema build", m.ID, alone, inSchema)
		}
	}
	// Nothing active: the original, whose checks all pass.
	for _, comp := range comps {
		m := ms[slices.IndexFunc(ms, func(m mutants.Mutant) bool { return m.Component == comp })]
		if bad := failing(merged, m, mutants.SchemaEnv+"=0"); len(bad) > 0 {
			t.Errorf("the schema build with no mutant active fails %s checks: %v", comp, bad)
		}
	}
}

func mustOverlay(t *testing.T, m mutants.Mutant, root string) string {
	t.Helper()
	dir := t.TempDir()
	o, err := m.Overlay(root, dir)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// TestSchemaLeavesImplUntouched: the schema's dispatch exists only in the
// overlay's copies: no file of the module declares or reads the active
// mutant.
func TestSchemaLeavesImplUntouched(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{"impl", "subjects/upstream"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
				return err
			}
			src, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if strings.Contains(string(src), "kverifyMutant") || strings.Contains(string(src), mutants.SchemaEnv) {
				t.Errorf("%s names the schema's active mutant", path)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
