package apiserver

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/kverify/kverify/traces"
)

// fidelityDiffs are the declared differences between the model and the
// real stack on the recorded scenarios, by scenario and step index, with
// the reason the model keeps its answer. Every other difference fails
// TestFidelity, and a declaration that no longer matches a difference
// fails it too.
var fidelityDiffs = map[string]map[int]string{}

// TestFidelity replays the scenarios recorded against the real
// kube-apiserver storage stack (the realapi module: etcd v3.7.0, the etcd3
// store and watch cache of k8s.io/apiserver v0.37.2) on the model, and
// compares the answers step by step. It runs without etcd; the realapi
// module keeps the recordings true (TestFidelityRecordings).
func TestFidelity(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "realapi", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no recordings in testdata/realapi")
	}
	for _, f := range files {
		tr, err := traces.Read(f)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimPrefix(tr.Check, "fidelity/")
		t.Run(name, func(t *testing.T) {
			steps, err := ParseScript(tr.Ops())
			if err != nil {
				t.Fatal(err)
			}
			got := Run(Config{}, steps)
			declared := fidelityDiffs[name]
			for i, s := range tr.Steps {
				s.Want = got[i]
				tr.Steps[i] = s
				reason, ok := declared[i]
				switch {
				case got[i] != s.Got && !ok:
					t.Errorf("step %d %s: the real stack answers %q, the model %q (undeclared)", i, s.Op, s.Got, got[i])
				case got[i] == s.Got && ok:
					t.Errorf("step %d %s: declared as a difference (%s), but the model now answers as the real stack", i, s.Op, reason)
				}
			}
			if t.Failed() {
				t.Logf("the scenario, real stack's answers with the model's in brackets where they differ:\n%s", tr)
			}
		})
	}
}
