package subjects_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kverify/kverify/subjects"
)

// TestSuitePackages holds subjects/suites to the registry: one package
// per subject (ours, upstream) and component, each running that
// component's suite on that subject, and no other. A component added to
// the registry without its packages would be left out of the README's
// test command.
func TestSuitePackages(t *testing.T) {
	for _, subject := range []string{subjects.Ours, subjects.Upstream} {
		dir := filepath.Join("suites", subject)
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range ents {
			if e.IsDir() {
				got = append(got, e.Name())
			}
		}
		want := slices.Sorted(slices.Values(subjects.Components()))
		if !slices.Equal(got, want) {
			t.Errorf("%s: packages %v, want one per component %v", dir, got, want)
		}
		sym := map[string]string{subjects.Ours: "subjects.Ours", subjects.Upstream: "subjects.Upstream"}[subject]
		for _, c := range got {
			src, err := os.ReadFile(filepath.Join(dir, c, "suite_test.go"))
			if err != nil {
				t.Error(err)
				continue
			}
			if call := fmt.Sprintf("subjects.EntriesFor(%s, %q)", sym, c); !strings.Contains(string(src), call) {
				t.Errorf("%s/%s/suite_test.go does not run %s", dir, c, call)
			}
		}
	}
}
