package main

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/kverify/kverify/traces/findings"
)

// TestMatrixMarkdownCurrent: docs/matrix.md, whose summary tables the
// README links to, is what kverify matrix renders from docs/matrix.json
// and the findings (kverify matrix --render writes it again).
func TestMatrixMarkdownCurrent(t *testing.T) {
	b, err := os.ReadFile("../../docs/matrix.json")
	if err != nil {
		t.Fatal(err)
	}
	var rep matrixReport
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	fds, err := findings.Load("../..")
	if err != nil {
		t.Fatal(err)
	}
	var md strings.Builder
	writeMatrixMarkdown(&md, &rep, fds)
	got, err := os.ReadFile("../../docs/matrix.md")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != md.String() {
		t.Error("docs/matrix.md is not what docs/matrix.json renders: run go run ./cmd/kverify matrix --render")
	}
	if !strings.Contains(md.String(), "## Summary\n\n| component \\ client-go v0.") {
		t.Error("docs/matrix.md has no summary table")
	}
}

func TestWithFirstPatches(t *testing.T) {
	got := withFirstPatches([]string{"v0.20.15", "v0.21.0", "v0.37.2", "v0.38.0-beta.0"})
	want := []string{"v0.20.0", "v0.20.15", "v0.21.0", "v0.37.0", "v0.37.2", "v0.38.0-beta.0"}
	if !slices.Equal(got, want) {
		t.Errorf("withFirstPatches = %v, want %v", got, want)
	}
}

// TestChangesWithGates: a run with a gate flipped is compared with its
// release's default run, and the next release with the last default run.
func TestChangesWithGates(t *testing.T) {
	rep := &matrixReport{Releases: []*releaseResult{
		{Release: "v0.33.13", Checks: map[string]string{"reflector/reflector/stops": "pass"}},
		{Release: "v0.33.13", Gates: "WatchListClient=true", Checks: map[string]string{"reflector/reflector/stops": "fail"}},
		{Release: "v0.34.13", Checks: map[string]string{"reflector/reflector/stops": "pass"}},
	}}
	var b strings.Builder
	writeChanges(&b, rep, nil)
	out := b.String()
	if !strings.Contains(out, "**v0.33.13 with WatchListClient=true** (from its defaults)") || !strings.Contains(out, "pass → fail") {
		t.Errorf("the gate's run is not compared with its defaults:\n%s", out)
	}
	if strings.Contains(out, "**v0.34.13**") {
		t.Errorf("v0.34.13 was compared with the gate's run, not v0.33.13's defaults:\n%s", out)
	}
	if got := rep.Releases[1].label(); got != "33.13 WLC=true" {
		t.Errorf("label = %q", got)
	}
}

// TestNamedMatrixMarkdown: a --subjects matrix names its subjects as
// columns, lists no client-go findings, and says what failed and what was
// not offered, per subject.
func TestNamedMatrixMarkdown(t *testing.T) {
	rep := &matrixReport{Named: []string{"client-node@0.22.3", "client-node"}, Releases: []*releaseResult{
		{Release: "client-node@0.22.3", Checks: map[string]string{"wire/wire/outage": "fail", "wire/wire/faults-exhaustive": "not-offered"},
			Failures:   map[string]string{"wire/wire/outage": "broke after quiescence ..."},
			NotOffered: map[string]string{"wire/wire/faults-exhaustive": "the subject runs in real time"}},
		{Release: "client-node", Checks: map[string]string{"wire/wire/outage": "pass", "wire/wire/faults-exhaustive": "not-offered"}},
	}}
	var b strings.Builder
	writeMatrixMarkdown(&b, rep, nil)
	md := b.String()
	for _, want := range []string{
		"# The behaviour matrix: client-node@0.22.3, client-node",
		"kverify matrix --subjects client-node@0.22.3,client-node",
		"| component \\ subject | client-node@0.22.3 | client-node |",
		"| wire | **1F** | 1✓ |",
		"| wire/wire/outage | **F** | ✓ |",
		"- client-node@0.22.3 wire/wire/outage: **F** broke after quiescence ...",
		"- client-node@0.22.3 wire/wire/faults-exhaustive: not offered: the subject runs in real time",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("missing %q in:\n%s", want, md)
		}
	}
	if strings.Contains(md, "client-go") {
		t.Errorf("a --subjects matrix mentions client-go:\n%s", md)
	}
}
