package findings

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const root = "../.."

func load(t *testing.T) []Finding {
	t.Helper()
	fs, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) == 0 {
		t.Fatal("no findings under " + Dir)
	}
	return fs
}

// TestReproducers runs every client-go reproducer at the pinned release
// and on ours (see CheckReproducers). The release is the one the
// reproducers are built against: client-go as this module's go.mod
// selects it (subjects/upstream.Release, which TestReleaseIsPinned there
// holds to go.mod), read from go list so that this package's test does not
// build the upstream subject. The check that every declared defect has a
// finding is subjects/upstream's TestEveryDefectHasAReproducer.
func TestReproducers(t *testing.T) {
	if testing.Short() {
		t.Skip("builds every reproducer twice")
	}
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Version}}", "k8s.io/client-go")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -m k8s.io/client-go: %v", err)
	}
	CheckReproducers(t, root, "client-go", root, "./"+filepath.ToSlash(filepath.Join(Dir, "client-go"))+"/...", strings.TrimSpace(string(out)))
}

// TestMatrixAgrees holds each finding's range to the behaviour matrix
// (docs/matrix.json, kverify matrix), which ran every reproducer on every
// release: it showed the defect exactly on the releases of the range (a
// release where the reproducer does not build lacks the API, so it must
// be outside the range).
func TestMatrixAgrees(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "docs", "matrix.json"))
	if err != nil {
		t.Fatalf("the behaviour matrix: %v (make matrix writes it)", err)
	}
	var m struct {
		Releases []struct {
			Release  string
			Findings map[string]struct{ Status, Line string }
		}
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, f := range load(t) {
		if f.Subject != "client-go" {
			continue
		}
		first := ""
		for _, r := range m.Releases {
			run, ok := r.Findings[f.ID]
			if !ok {
				t.Errorf("%s: not run on %s (make matrix)", f.ID, r.Release)
				continue
			}
			present := run.Status == "present"
			if present && first == "" {
				first = r.Release
			}
			if present != f.HasRelease(r.Release) || (run.Status != "present" && run.Status != "absent" && run.Status != "no-api") {
				t.Errorf("%s on %s: %s (%s), but its range %q says %v", f.ID, r.Release, run.Status, run.Line, f.Releases, f.HasRelease(r.Release))
			}
		}
		if first != f.First {
			t.Errorf("%s: first release with the defect in the matrix is %q, finding.json says %q", f.ID, first, f.First)
		}
	}
}

// TestReferences holds every finding's upstream references to the list in
// references.tsv (CheckReferences): a number a finding.json cites that the
// list does not give it, a listed reference its finding no longer cites,
// or a listed finding that does not exist fails.
func TestReferences(t *testing.T) {
	refs, err := LoadReferences(root)
	if err != nil {
		t.Fatal(err)
	}
	fds := load(t)
	for _, err := range CheckReferences(fds, refs) {
		t.Error(err)
	}
	// Load hands each finding its references.
	for _, f := range fds {
		n := 0
		for _, r := range refs {
			if r.Finding == f.ID {
				n++
			}
		}
		if len(f.References) != n {
			t.Errorf("%s: Load gave it %d references, the list has %d", f.ID, len(f.References), n)
		}
	}
}

// TestCheckReferencesCatches: the check fails on an uncited listing, on an
// unlisted citation, on a repository that does not match, and on a
// finding that does not exist.
func TestCheckReferencesCatches(t *testing.T) {
	f := Finding{ID: "x", Upstream: "kubernetes/kubernetes#10 (open); related: PR #20, https://github.com/o/r/pull/30", Sequence: []string{"Watch #99"}}
	if got := f.Citations(); !slices.Equal(got, []Citation{{"kubernetes/kubernetes", 10}, {"", 20}, {"o/r", 30}}) {
		t.Fatalf("Citations() = %v", got)
	}
	ok := []Reference{
		{Finding: "x", Repo: "kubernetes/kubernetes", Number: 10},
		{Finding: "x", Repo: "kubernetes/kubernetes", Number: 20},
		{Finding: "x", Repo: "o/r", Number: 30},
	}
	if errs := CheckReferences([]Finding{f}, ok); len(errs) != 0 {
		t.Errorf("a complete list fails: %v", errs)
	}
	for name, refs := range map[string][]Reference{
		"unlisted citation": ok[:2],
		"uncited listing":   append(slices.Clone(ok), Reference{Finding: "x", Repo: "kubernetes/kubernetes", Number: 40}),
		"other repository":  {ok[0], ok[1], {Finding: "x", Repo: "o/other", Number: 30}},
		"no such finding":   append(slices.Clone(ok), Reference{Finding: "y", Repo: "o/r", Number: 30}),
		"listed twice":      append(slices.Clone(ok), ok[0]),
	} {
		if errs := CheckReferences([]Finding{f}, refs); len(errs) == 0 {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := parseReference("x\tkubernetes#1\tissue\topen\treport\t"); err == nil {
		t.Error("a reference without owner/name parsed")
	}
	if _, err := parseReference("x\tkubernetes/kubernetes#1\tissue\tfixed\treport\t"); err == nil {
		t.Error("state \"fixed\" parsed")
	}
}
