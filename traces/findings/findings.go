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
//
// The upstream issues and pull requests the findings cite are listed, with
// their recorded state, in references.tsv beside them (References,
// CheckReferences).
package findings

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/kverify/kverify/internal/releaserange"
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
	// Releases are the releases that have it (in the form of
	// internal/releaserange.InRange), as the behaviour matrix measured.
	Releases string `json:"releases"`
	// First is the first release of the matrix that has it.
	First string `json:"first"`

	// Dir is the finding's directory, relative to the module root.
	Dir string `json:"-"`
	// Reproducer is the reproducer's file in Dir: main.go for a Go module,
	// repro.mjs for a JavaScript library, repro.py for kubectl and the
	// Python client.
	Reproducer string `json:"-"`
	// References are the upstream issues and pull requests it cites, as
	// references.tsv records them.
	References []Reference `json:"-"`
}

// Load reads every finding under root's findings directory, in order of
// subject and id, and checks each is complete; each carries its references
// from references.tsv (CheckReferences holds the two to each other).
func Load(root string) ([]Finding, error) {
	refs, err := LoadReferences(root)
	if err != nil {
		return nil, err
	}
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
		for _, r := range []string{"main.go", "repro.mjs", "repro.py"} {
			if _, err := os.Stat(filepath.Join(filepath.Dir(f), r)); err == nil {
				x.Reproducer = r
				break
			}
		}
		if err := x.validate(); err != nil {
			return nil, fmt.Errorf("%s: %v", f, err)
		}
		for _, r := range refs {
			if r.Finding == x.ID {
				x.References = append(x.References, r)
			}
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
		return fmt.Errorf("no reproducer (main.go, repro.mjs or repro.py) beside it")
	}
	if len(f.Checks) == 0 || len(f.Sequence) == 0 {
		return fmt.Errorf("checks and sequence must not be empty")
	}
	if _, err := releaserange.InRange(f.Releases, "v0.0.0"); err != nil {
		return err
	}
	return nil
}

// HasRelease reports whether the finding's range holds release.
func (f Finding) HasRelease(release string) bool {
	ok, err := releaserange.InRange(f.Releases, release)
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
	if len(f.References) > 0 {
		b.WriteString("**Upstream references** (state as recorded in traces/findings/references.tsv):\n\n")
		for _, r := range f.References {
			fmt.Fprintf(&b, "- [%s](%s): %s, %s; %s", r, r.URL(), r.Kind, r.State, r.Role)
			if r.Note != "" {
				fmt.Fprintf(&b, ": %s", r.Note)
			}
			b.WriteString("\n")
		}
		b.WriteString("\n")
	}
	run := "`go run .` in its directory"
	switch f.Reproducer {
	case "repro.mjs":
		run = "`node " + f.Reproducer + "` (Node 22 or later; its top comment has the exact command)"
	case "repro.py":
		run = "`python3 " + f.Reproducer + "` (its top comment says what it needs)"
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

// ReferencesFile is the list of the findings' upstream references,
// relative to the module root.
var ReferencesFile = filepath.Join(Dir, "references.tsv")

// Reference is an upstream issue or pull request a finding cites, with
// its state as last recorded (a line of references.tsv).
type Reference struct {
	Finding string // the citing finding's id
	Repo    string // owner/name on GitHub
	Number  int
	Kind    string // issue or pr
	State   string // open, merged, closed or unrecorded
	Role    string // report, fix, origin or related
	Note    string
}

// The values references.tsv allows in its kind, state and role columns.
var (
	RefKinds  = []string{"issue", "pr"}
	RefStates = []string{"open", "merged", "closed", "unrecorded"}
	RefRoles  = []string{"report", "fix", "origin", "related"}
)

func (r Reference) String() string { return fmt.Sprintf("%s#%d", r.Repo, r.Number) }

// URL is the reference's page on GitHub.
func (r Reference) URL() string {
	kind := "issues"
	if r.Kind == "pr" {
		kind = "pull"
	}
	return fmt.Sprintf("https://github.com/%s/%s/%d", r.Repo, kind, r.Number)
}

// Short is the reference with kubernetes/kubernetes shortened to
// kubernetes, for tables.
func (r Reference) Short() string {
	if r.Repo == "kubernetes/kubernetes" {
		return fmt.Sprintf("kubernetes#%d", r.Number)
	}
	return r.String()
}

// LoadReferences reads references.tsv under root: a header line, then
// finding, reference (owner/name#N), kind, state, role and note,
// tab-separated; lines starting with # are comments.
func LoadReferences(root string) ([]Reference, error) {
	path := filepath.Join(root, ReferencesFile)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []Reference
	sc := bufio.NewScanner(bytes.NewReader(b))
	header := true
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if header {
			header = false
			if !strings.HasPrefix(line, "finding\treference\t") {
				return nil, fmt.Errorf("%s:%d: the header must be finding, reference, kind, state, role, note", path, n)
			}
			continue
		}
		r, err := parseReference(line)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, n, err)
		}
		out = append(out, r)
	}
	return out, sc.Err()
}

func parseReference(line string) (Reference, error) {
	f := strings.Split(line, "\t")
	if len(f) != 6 {
		return Reference{}, fmt.Errorf("%d columns, want 6 (finding, reference, kind, state, role, note)", len(f))
	}
	repo, num, ok := strings.Cut(f[1], "#")
	n, err := strconv.Atoi(num)
	if !ok || err != nil || n <= 0 || strings.Count(repo, "/") != 1 {
		return Reference{}, fmt.Errorf("reference %q is not owner/name#N", f[1])
	}
	r := Reference{Finding: f[0], Repo: repo, Number: n, Kind: f[2], State: f[3], Role: f[4], Note: f[5]}
	for _, c := range []struct {
		name, v string
		allowed []string
	}{{"kind", r.Kind, RefKinds}, {"state", r.State, RefStates}, {"role", r.Role, RefRoles}} {
		if !slices.Contains(c.allowed, c.v) {
			return Reference{}, fmt.Errorf("%s: %s %q is none of %s", r, c.name, c.v, strings.Join(c.allowed, ", "))
		}
	}
	return r, nil
}

// Citation is an issue or pull request number a finding's text cites;
// Repo is empty when the text gives the number alone (#N, kubernetes#N).
type Citation struct {
	Repo   string
	Number int
}

var citationRE = regexp.MustCompile(`(?:\b([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+))?#(\d+)|github\.com/([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)/(?:issues|pull)/(\d+)`)

// Citations are the issue and pull request numbers the finding's prose
// cites (every field of finding.json but the sequence, whose #N count
// calls).
func (f Finding) Citations() []Citation {
	var out []Citation
	for _, text := range []string{f.Title, f.Promise, f.Observed, f.Pinned, f.Newest, f.Upstream} {
		for _, m := range citationRE.FindAllStringSubmatch(text, -1) {
			c := Citation{Repo: m[1]}
			num := m[2]
			if m[4] != "" {
				c.Repo, num = m[3], m[4]
			}
			c.Number, _ = strconv.Atoi(num)
			if !slices.Contains(out, c) {
				out = append(out, c)
			}
		}
	}
	return out
}

// CheckReferences holds the findings and references.tsv to each other:
// every number a finding cites is listed for it (under the same
// repository when the text names one), every listed reference is cited by
// its finding, no reference is listed twice for a finding, and every
// listed finding exists.
func CheckReferences(fds []Finding, refs []Reference) []error {
	var errs []error
	byID := map[string]Finding{}
	for _, f := range fds {
		if _, dup := byID[f.ID]; dup {
			errs = append(errs, fmt.Errorf("finding id %s is used twice: references.tsv cannot tell them apart", f.ID))
		}
		byID[f.ID] = f
	}
	seen := map[string]bool{}
	for _, r := range refs {
		f, ok := byID[r.Finding]
		if !ok {
			errs = append(errs, fmt.Errorf("%s lists %s for finding %s, which does not exist", ReferencesFile, r, r.Finding))
			continue
		}
		if k := r.Finding + " " + r.String(); seen[k] {
			errs = append(errs, fmt.Errorf("%s lists %s for %s twice", ReferencesFile, r, r.Finding))
		} else {
			seen[k] = true
		}
		if !slices.ContainsFunc(f.Citations(), func(c Citation) bool { return c.Number == r.Number && (c.Repo == "" || c.Repo == r.Repo) }) {
			errs = append(errs, fmt.Errorf("%s lists %s for %s, whose finding.json does not cite it", ReferencesFile, r, r.Finding))
		}
	}
	for _, f := range fds {
		for _, c := range f.Citations() {
			listed := slices.ContainsFunc(refs, func(r Reference) bool {
				return r.Finding == f.ID && r.Number == c.Number && (c.Repo == "" || c.Repo == r.Repo)
			})
			if !listed {
				cited := "#" + strconv.Itoa(c.Number)
				if c.Repo != "" {
					cited = c.Repo + cited
				}
				errs = append(errs, fmt.Errorf("%s cites %s, which %s does not list for it", f.ID, cited, ReferencesFile))
			}
		}
	}
	return errs
}
