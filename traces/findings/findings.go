// Package findings reads the upstream-ready defect reports kverify keeps
// beside its traces: traces/findings/<subject>/<id>/, each a standalone
// reproducer (main.go, which imports only the upstream module, and its
// ours.go twin built with -tags kverify_ours) and its report
// (finding.json).
//
// A reproducer prints one line and exits: "DEFECT: ..." and status 1 when
// the defect shows, "OK: ..." and status 0 when the promise holds. The
// tests of this package keep each one true: it fails on the pinned
// release when the release is in its range, and passes on ours; and the
// behaviour matrix (docs/matrix.json, kverify matrix) ran it on every
// release, where it must fail exactly on the releases of its range.
package findings

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kverify/kverify/subjects/upstream"
)

// Dir is the findings directory, relative to the module root.
var Dir = filepath.Join("traces", "findings")

// Finding is one defect's report (finding.json).
type Finding struct {
	ID      string `json:"id"`
	Subject string `json:"subject"` // the kverify subject that declares it: client-go, controller-runtime
	Module  string `json:"module"`  // the module whose code has it
	// Checks are the checks whose declared divergence this is.
	Checks   []string `json:"checks"`
	Title    string   `json:"title"`
	Sequence []string `json:"sequence"` // the minimal API sequence
	Promise  string   `json:"promise"`  // the doc it contradicts, with file:line
	Observed string   `json:"observed"`
	Pinned   string   `json:"pinned"` // file:line at the pinned release
	Newest   string   `json:"newest"` // file:line at the newest release
	// Upstream is the existing upstream issue or pull request, or what was
	// searched for none.
	Upstream string `json:"upstream"`
	// Releases are the releases that have it (upstream.InRange's form),
	// as the behaviour matrix measured.
	Releases string `json:"releases"`
	// First is the first release of the matrix that has it.
	First string `json:"first"`

	// Dir is the finding's directory, relative to the module root.
	Dir string `json:"-"`
	// Reproducer is the reproducer's file in Dir: main.go for a Go module,
	// repro.mjs for a JavaScript library.
	Reproducer string `json:"-"`
}

// Load reads every finding under root's findings directory, in order of
// subject and id, and checks each is complete.
func Load(root string) ([]Finding, error) {
	files, err := filepath.Glob(filepath.Join(root, Dir, "*", "*", "finding.json"))
	if err != nil {
		return nil, err
	}
	var out []Finding
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var x Finding
		dec := json.NewDecoder(strings.NewReader(string(b)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&x); err != nil {
			return nil, fmt.Errorf("%s: %v", f, err)
		}
		x.Dir, _ = filepath.Rel(root, filepath.Dir(f))
		for _, r := range []string{"main.go", "repro.mjs"} {
			if _, err := os.Stat(filepath.Join(filepath.Dir(f), r)); err == nil {
				x.Reproducer = r
				break
			}
		}
		if err := x.validate(); err != nil {
			return nil, fmt.Errorf("%s: %v", f, err)
		}
		out = append(out, x)
	}
	slices.SortFunc(out, func(a, b Finding) int { return strings.Compare(a.Subject+"/"+a.ID, b.Subject+"/"+b.ID) })
	return out, nil
}

func (f Finding) validate() error {
	if f.ID != filepath.Base(f.Dir) {
		return fmt.Errorf("id %q is not its directory's name %q", f.ID, filepath.Base(f.Dir))
	}
	if f.Subject != filepath.Base(filepath.Dir(f.Dir)) {
		return fmt.Errorf("subject %q is not its parent directory's name", f.Subject)
	}
	for name, v := range map[string]string{"module": f.Module, "title": f.Title, "promise": f.Promise, "observed": f.Observed, "pinned": f.Pinned, "newest": f.Newest, "upstream": f.Upstream, "first": f.First} {
		if strings.TrimSpace(v) == "" {
			return fmt.Errorf("%s is empty", name)
		}
	}
	if f.Reproducer == "" {
		return fmt.Errorf("no reproducer (main.go or repro.mjs) beside it")
	}
	if len(f.Checks) == 0 || len(f.Sequence) == 0 {
		return fmt.Errorf("checks and sequence must not be empty")
	}
	if _, err := upstream.InRange(f.Releases, "v0.0.0"); err != nil {
		return err
	}
	return nil
}

// HasRelease reports whether the finding's range holds release.
func (f Finding) HasRelease(release string) bool {
	ok, err := upstream.InRange(f.Releases, release)
	return err == nil && ok
}

// Report is the finding as an upstream issue's body, in Markdown.
func (f Finding) Report() string {
	var b strings.Builder
	fmt.Fprintf(&b, "## %s\n\n", f.Title)
	fmt.Fprintf(&b, "**Module:** %s  \n**Releases:** %s (first in the matrix: %s)  \n**kverify checks:** %s\n\n", f.Module, orEvery(f.Releases), f.First, strings.Join(f.Checks, ", "))
	fmt.Fprintf(&b, "**What the doc promises:** %s\n\n**What happens:** %s\n\n", f.Promise, f.Observed)
	b.WriteString("**Minimal sequence:**\n\n```go\n")
	for _, s := range f.Sequence {
		b.WriteString(s + "\n")
	}
	b.WriteString("```\n\n")
	fmt.Fprintf(&b, "**Where:** %s (pinned); %s (newest)\n\n", f.Pinned, f.Newest)
	fmt.Fprintf(&b, "**Upstream:** %s\n\n", f.Upstream)
	run := "`go run .` in its directory"
	if f.Reproducer != "main.go" {
		run = "`node " + f.Reproducer + "` (Node 22 or later; its top comment has the exact command)"
	}
	fmt.Fprintf(&b, "**Reproducer:** `%s/%s` imports only %s; %s prints DEFECT and exits 1 while the defect is there.\n", filepath.ToSlash(f.Dir), f.Reproducer, f.Module, run)
	return b.String()
}

func orEvery(r string) string {
	if r == "" {
		return "every release checked"
	}
	return r
}
