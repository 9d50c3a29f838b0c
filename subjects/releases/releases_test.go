package releases

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/mod/semver"
)

func TestKeepFile(t *testing.T) {
	for _, c := range []struct {
		src, release string
		keep, strip  bool
	}{
		{"package upstream\n", "v0.20.15", true, false},
		{"//go:build !clientgo_before_v0_31\n\npackage upstream\n", "v0.37.2", true, true},
		{"//go:build !clientgo_before_v0_31\n\npackage upstream\n", "v0.30.14", false, true},
		{"//go:build clientgo_before_v0_31 && !clientgo_before_v0_27\n\npackage upstream\n", "v0.27.16", true, true},
		{"//go:build clientgo_before_v0_31 && !clientgo_before_v0_27\n\npackage upstream\n", "v0.26.15", false, true},
		{"//go:build ignore && clientgo_before_v0_23\n\npackage upstream\n", "v0.22.17", true, true},
		{"//go:build ignore && clientgo_before_v0_23\n\npackage upstream\n", "v0.23.0", false, true},
		// A pre-release is older than its release.
		{"//go:build clientgo_before_v0_38\n\npackage upstream\n", "v0.38.0-beta.0", true, true},
		// Other tags are go build's to decide.
		{"//go:build linux\n\npackage upstream\n", "v0.20.15", true, false},
	} {
		keep, strip, _, err := keepFile([]byte(c.src), c.release)
		if err != nil || keep != c.keep || strip != c.strip {
			t.Errorf("%q at %s: keep %v strip %v err %v; want %v %v", c.src, c.release, keep, strip, err, c.keep, c.strip)
		}
	}
}

func TestCheck(t *testing.T) {
	for _, ok := range []string{"v0.20.0", "v0.38.0-beta.0", Pinned} {
		if err := Check(ok); err != nil {
			t.Errorf("Check(%s): %v", ok, err)
		}
	}
	for _, bad := range []string{"v0.19.16", "0.30.1", "v0.30", "latest", "v0.30.1+incompatible"} {
		if err := Check(bad); err == nil {
			t.Errorf("Check(%s) accepted it", bad)
		}
	}
}

func TestMatrixIsTheNewestPatchOfEachMinor(t *testing.T) {
	if Matrix[0] < "v0.20" || !contains(Matrix, Pinned) {
		t.Fatalf("Matrix %v must start at v0.20 and hold the pinned %s", Matrix, Pinned)
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// TestKeepFilePatchEras: an era tag may name a patch release, for an API
// backported within a minor line (DeltaFIFOOptions.Transformer, in
// v0.24.13, v0.25.9 and v0.26.4).
func TestKeepFilePatchEras(t *testing.T) {
	const notr = "(clientgo_before_v0_24_13 && !clientgo_before_v0_24) || (clientgo_before_v0_26_4 && !clientgo_before_v0_26)"
	src := "//go:build clientgo_before_v0_36 && !clientgo_before_v0_24 && !(" + notr + ")\n\npackage upstream\n"
	for release, want := range map[string]bool{"v0.23.17": false, "v0.24.0": false, "v0.24.12": false, "v0.24.13": true, "v0.25.0": true, "v0.26.3": false, "v0.26.4": true, "v0.35.10": true, "v0.36.0": false} {
		keep, strip, _, err := keepFile([]byte(src), release)
		if err != nil || keep != want || !strip {
			t.Errorf("%s: keep %v strip %v err %v; want keep %v", release, keep, strip, err, want)
		}
	}
}

// TestControllerRuntimeEras: the adapter's era files (subjects/controllerruntime)
// are chosen per controller-runtime release, each constraint's build tags
// all of the controllerruntime_before_ kind, and every era between the
// oldest release and the pinned one keeps exactly one build, runInformer
// and queueEntries.
func TestControllerRuntimeEras(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "controllerruntime", "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatal(files, err)
	}
	for _, rel := range CRMatrix {
		defines := map[string]int{}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			keep, _, _, err := keepFileBy(src, func(tag string) (bool, bool) { return eraTagTrue(crEraPrefix, tag, rel) })
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if !keep {
				continue
			}
			for _, fn := range []string{"func build(", "func runInformer(", "func queueEntries(", "func controllerEntries(", "func addOpts("} {
				if strings.Contains(string(src), "\n"+fn) {
					defines[fn]++
				}
			}
		}
		want := map[string]int{"func queueEntries(": 1, "func controllerEntries(": 1}
		if semver.Compare(rel, "v0.15.0") >= 0 {
			want["func build("], want["func runInformer("] = 1, 1
		}
		if semver.Compare(rel, "v0.20.0") >= 0 {
			want["func addOpts("] = 1
		}
		if !maps.Equal(defines, want) {
			t.Errorf("controller-runtime@%s keeps %v, want %v", rel, defines, want)
		}
	}
}

// TestControllerRuntimePinned: CRPinned is the release the adapter
// module's go.mod requires, the newest of CRMatrix, and its Release.
func TestControllerRuntimePinned(t *testing.T) {
	mod, err := os.ReadFile(filepath.Join("..", "controllerruntime", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(mod), "\n\t"+CRModule+" "+CRPinned+"\n") {
		t.Errorf("subjects/controllerruntime/go.mod does not require %s %s", CRModule, CRPinned)
	}
	if CRMatrix[len(CRMatrix)-1] != CRPinned {
		t.Errorf("CRMatrix ends at %s, not the pinned %s", CRMatrix[len(CRMatrix)-1], CRPinned)
	}
	rel, err := os.ReadFile(filepath.Join("..", "controllerruntime", "release.go"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(rel), "\nconst Release = \""+CRPinned+"\"\n") {
		t.Errorf("subjects/controllerruntime/release.go's Release is not %s", CRPinned)
	}
}
