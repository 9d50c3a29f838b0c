package releaserange

import "testing"

func TestInRange(t *testing.T) {
	for _, c := range []struct {
		rng, release string
		want         bool
	}{
		{"", "v0.20.15", true},
		{">=v0.36.0", "v0.36.6", true},
		{">=v0.36.0", "v0.35.10", false},
		{">=v0.36.0", "v0.36.0-beta.0", false},
		{"<v0.35.0", "v0.34.13", true},
		{"<v0.35.0", "v0.35.0", false},
		{">=v0.23.0 <v0.35.0", "v0.31.14", true},
		{">=v0.23.0 <v0.35.0", "v0.22.17", false},
		{"<v0.38.0", "v0.38.0-beta.0", true},
		{"<v0.27.0 || >=v0.35.0", "v0.20.15", true},
		{"<v0.27.0 || >=v0.35.0", "v0.31.14", false},
		{"<v0.27.0 || >=v0.35.0", "v0.35.10", true},
	} {
		got, err := InRange(c.rng, c.release)
		if err != nil || got != c.want {
			t.Errorf("InRange(%q, %s) = %v, %v; want %v", c.rng, c.release, got, err, c.want)
		}
	}
	for _, bad := range []string{"v0.30.0", "=v0.30.0", ">=0.30", "<latest", "<v0.27.0 | >=v0.35.0", "<v0.27.0 ||| >=v0.35.0"} {
		if _, err := InRange(bad, "v0.30.0"); err == nil {
			t.Errorf("InRange(%q) accepted the range", bad)
		}
	}
	if _, err := InRange("", "latest"); err == nil {
		t.Error("InRange accepted the release \"latest\"")
	}
}
