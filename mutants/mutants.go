// Package mutants is the catalogue of deliberately broken versions of our
// implementation. Each mutant is one realistic change to one file, applied
// without editing the tree: Overlay writes the changed copy to a scratch
// directory and an overlay file for `go build -overlay` / `go test -overlay`.
// The kill matrix (kverify mutants) runs the conformance suite on each and
// requires every mutant to be killed by at least one check.
package mutants

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Mutant is one deliberate bug.
type Mutant struct {
	ID        string // stable, short, unique
	Component string // the kverify component whose suite must kill it
	File      string // path relative to the module root
	Bug       string // what the change breaks, in one sentence
	Old, New  string // the change: Old occurs exactly once in File
	// Subject is the registry subject the mutant is built into: "" for
	// ours (a change to impl/), or "upstream" for a change to client-go's
	// adapter (subjects/upstream), which adds a second bug to a subject
	// that has declared divergences: the declared violation must not
	// hide it (issue 27, class 4).
	Subject string
}

// Target is the registry subject the mutant's suite runs: Subject, or
// "ours".
func (m Mutant) Target() string {
	if m.Subject == "" {
		return "ours"
	}
	return m.Subject
}

// Apply returns the mutated contents of the file under root.
func (m Mutant) Apply(root string) ([]byte, error) {
	src, err := os.ReadFile(filepath.Join(root, m.File))
	if err != nil {
		return nil, fmt.Errorf("mutant %s: %w", m.ID, err)
	}
	if n := strings.Count(string(src), m.Old); n != 1 {
		return nil, fmt.Errorf("mutant %s: the text to change occurs %d times in %s, want exactly 1 (the file changed; update the mutant)", m.ID, n, m.File)
	}
	return []byte(strings.Replace(string(src), m.Old, m.New, 1)), nil
}

// Overlay writes the mutated file and an overlay description into dir and
// returns the overlay file's path, for go's -overlay flag.
func (m Mutant) Overlay(root, dir string) (string, error) {
	out, err := m.Apply(root)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	mutated := filepath.Join(dir, m.ID+"-"+filepath.Base(m.File))
	if err := os.WriteFile(mutated, out, 0o644); err != nil {
		return "", err
	}
	abs, err := filepath.Abs(filepath.Join(root, m.File))
	if err != nil {
		return "", err
	}
	data, err := json.Marshal(map[string]map[string]string{"Replace": {abs: mutated}})
	if err != nil {
		return "", err
	}
	overlay := filepath.Join(dir, m.ID+".overlay.json")
	return overlay, os.WriteFile(overlay, data, 0o644)
}

// ByID returns the mutant with the given ID.
func ByID(id string) (Mutant, bool) {
	for _, m := range Catalogue {
		if m.ID == id {
			return m, true
		}
	}
	return Mutant{}, false
}

// For returns the mutants of the given components (all when none given).
func For(components ...string) []Mutant {
	var out []Mutant
	for _, m := range Catalogue {
		if len(components) == 0 || contains(components, m.Component) {
			out = append(out, m)
		}
	}
	return out
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
