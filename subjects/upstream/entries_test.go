package upstream

import (
	"testing"

	"github.com/kverify/kverify/props/checkkit"
)

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
}

// TestDeclarationsParse holds every declaration's release range to the
// form InRange reads, and its class to the three classes.
func TestDeclarationsParse(t *testing.T) {
	for _, e := range Entries() {
		for _, d := range e.Divergences {
			if _, err := InRange(d.Releases, Release); err != nil {
				t.Errorf("%s/%s: %v", e.Component, d.Check, err)
			}
		}
	}
}

// TestOneDeclarationPerRelease holds the declarations of each check to
// disjoint release ranges: on any release of the matrix at most one
// holds, since a suite keys its declarations by check.
func TestOneDeclarationPerRelease(t *testing.T) {
	lists := map[string][]checkkit.Divergence{
		"workqueue": QueueDivergences, "delaying": DelayingDivergences, "ratelimit": LimiterDivergences,
		"ring": RingDivergences, "informer": InformerDivergences, "deltafifo": DeltaFIFODivergences,
		"realfifo": RealFIFODivergences, "reflector": ReflectorDivergences, "backoff": BackoffDivergences,
		"wire": WireDivergences,
	}
	for _, release := range Matrix {
		for comp, ds := range lists {
			seen := map[string]bool{}
			for _, d := range ds {
				in, err := InRange(d.Releases, release)
				if err != nil {
					t.Errorf("%s/%s: %v", comp, d.Check, err)
					continue
				}
				if in && seen[d.Check] {
					t.Errorf("%s/%s: two declarations hold for %s", comp, d.Check, release)
				}
				seen[d.Check] = seen[d.Check] || in
			}
		}
	}
}
