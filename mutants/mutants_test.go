package mutants

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
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

// TestMatrixCurrent keeps the committed kill matrix in step with the
// catalogue: CI's kverify mutants --cover samples from it, so a mutant it
// does not list is run in full there, and a mutant it lists as killed by
// nothing would drop out of the sample. make mutants rewrites it.
func TestMatrixCurrent(t *testing.T) {
	f, err := os.Open(filepath.Join("..", MatrixFile))
	if err != nil {
		t.Fatalf("%v (make mutants writes it)", err)
	}
	defer f.Close()
	m, err := ReadMatrix(f)
	if err != nil {
		t.Fatal(err)
	}
	unlisted, stale := m.Missing()
	if len(unlisted) > 0 {
		t.Errorf("%s does not list %v: run make mutants", MatrixFile, unlisted)
	}
	if len(stale) > 0 {
		t.Errorf("%s lists mutants no longer catalogued: %v: run make mutants", MatrixFile, stale)
	}
	for _, r := range m {
		if len(r.KilledBy) == 0 {
			t.Errorf("%s: mutant %s is killed by no check", MatrixFile, r.ID)
		}
	}
}

func TestMatrixRoundTripAndCover(t *testing.T) {
	ms := []Mutant{{ID: "a", Component: "c"}, {ID: "b", Component: "c"}, {ID: "d", Component: "c"}, {ID: "e", Component: "c"}}
	m := Matrix{
		{ID: "a", KilledBy: []string{"x", "y"}, Worst: 2 * time.Second},
		{ID: "b", KilledBy: []string{"x*"}, Worst: time.Second},
		{ID: "d", KilledBy: []string{"y"}, Worst: 3 * time.Second},
		{ID: "e", KilledBy: []string{"x", "y"}, Worst: 5 * time.Second},
	}
	var b strings.Builder
	if err := WriteMatrix(&b, m); err != nil {
		t.Fatal(err)
	}
	back, err := ReadMatrix(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, m) {
		t.Fatalf("round trip: got %v, want %v", back, m)
	}
	var ids []string
	for _, mu := range Cover(m, ms) {
		ids = append(ids, mu.ID)
	}
	// x: b and a are the two fastest; y: a and d (e is the slowest of
	// both).
	if want := []string{"a", "b", "d"}; !reflect.DeepEqual(ids, want) {
		t.Errorf("Cover = %v, want %v", ids, want)
	}
	if got := Killers(m, ms); got["c/x"] != "b" || got["c/y"] != "a" {
		t.Errorf("Killers = %v, want c/x: b, c/y: a", got)
	}
	if _, err := ReadMatrix(strings.NewReader("a\tx\n")); err == nil {
		t.Error("ReadMatrix accepted a line with 2 fields")
	}
	if _, err := ReadMatrix(strings.NewReader("a\tx\tsoon\n")); err == nil {
		t.Error("ReadMatrix accepted a bad duration")
	}
}

// TestClasses: every mutant a bug class names is in the catalogue, and each
// class has at least MinPerClass mutants.
func TestClasses(t *testing.T) {
	for _, c := range Classes {
		if len(c.Mutants) < MinPerClass {
			t.Errorf("class %d (%s) has %d mutants, want at least %d", c.N, c.Name, len(c.Mutants), MinPerClass)
		}
		for _, id := range c.Mutants {
			if _, ok := ByID(id); !ok {
				t.Errorf("class %d names %s, which is not in the catalogue", c.N, id)
			}
		}
	}
}
