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
