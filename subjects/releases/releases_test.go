package releases

import (
	"testing"
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
