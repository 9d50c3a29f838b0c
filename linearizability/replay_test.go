package linearizability

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/anishathalye/porcupine"
)

var models = map[string]func() porcupine.Model{"fifo": QueueModel, "per-key": PerKeyModel}

// The saved histories keep their verdicts: testdata/histories/illegal-*
// must stay Illegal under some model, legal-* Ok under every model, and
// each exactly as its file's "expect" says.
func TestSavedHistories(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "histories", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatal("no saved histories")
	}
	for _, path := range paths {
		name := filepath.Base(path)
		t.Run(strings.TrimSuffix(name, ".json"), func(t *testing.T) {
			f, err := ReadHistory(path)
			if err != nil {
				t.Fatal(err)
			}
			h, err := LoadHistory(path)
			if err != nil {
				t.Fatal(err)
			}
			if len(f.Expect) == 0 {
				t.Fatal(`no "expect"`)
			}
			anyIllegal := false
			for m, want := range f.Expect {
				model, ok := models[m]
				if !ok {
					t.Fatalf("unknown model %q", m)
				}
				got, _ := CheckSteps(model(), h, DefaultSteps)
				if got != want {
					t.Errorf("%s model: %s, want %s (%s)", m, got, want, f.Note)
				}
				anyIllegal = anyIllegal || want == porcupine.Illegal
			}
			if strings.HasPrefix(name, "illegal-") != anyIllegal {
				t.Errorf("the name says illegal=%v, the expectations say %v", strings.HasPrefix(name, "illegal-"), anyIllegal)
			}
		})
	}
}

// A history survives SaveFailure and LoadHistory unchanged.
func TestSaveLoadRoundTrip(t *testing.T) {
	h := RunWorkload(newToy(defects{}), Workload{Seed: 1, Ops: 10})
	html, js, err := SaveFailure(t.TempDir(), "round trip", QueueModel(), h, porcupine.LinearizationInfo{})
	if err != nil {
		t.Fatal(err)
	}
	if html != "" || filepath.Base(js) != "round_trip.json" {
		t.Errorf("paths %q %q: want no html without a search, and a sanitised name", html, js)
	}
	again, err := LoadHistory(js)
	if err != nil {
		t.Fatal(err)
	}
	if len(again) != len(h) {
		t.Fatalf("%d ops back, want %d", len(again), len(h))
	}
	for i := range h {
		if h[i] != again[i] {
			t.Fatalf("op %d: %+v back as %+v", i, h[i], again[i])
		}
	}
}
