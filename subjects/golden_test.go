package subjects

import (
	"path/filepath"
	"testing"

	"github.com/kverify/kverify/traces"
)

// TestGoldenTraces replays every committed trace: counterexamples that
// once killed a mutant, and golden vectors. Each must run without a
// violation on ours, which pins the step engine and the model: a change
// that makes a saved counterexample fail on correct code is a regression
// of the checker, not of the subject.
func TestGoldenTraces(t *testing.T) {
	files, err := filepath.Glob("../traces/testdata/*/*.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Skip("no committed traces")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			tr, err := traces.Read(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range All() {
				if e.Component == tr.Component && e.Subject == Ours && e.Replay != nil {
					if err := e.Replay(t, tr); err != nil {
						t.Fatalf("trace %s (%s, recorded on %s) fails on ours: %v", f, tr.Check, tr.Subject, err)
					}
					return
				}
			}
			t.Fatalf("no replayer for component %q", tr.Component)
		})
	}
}
