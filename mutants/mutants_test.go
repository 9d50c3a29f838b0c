package mutants

import (
	"path/filepath"
	"testing"
)

// TestCatalogueApplies keeps the catalogue in step with the code: every
// mutant's text must occur exactly once in its file, and IDs are unique.
func TestCatalogueApplies(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, m := range Catalogue {
		if seen[m.ID] {
			t.Errorf("duplicate mutant ID %s", m.ID)
		}
		seen[m.ID] = true
		if m.Component == "" || m.Bug == "" {
			t.Errorf("mutant %s: component and bug are required", m.ID)
		}
		if _, err := m.Apply(root); err != nil {
			t.Error(err)
		}
	}
}
