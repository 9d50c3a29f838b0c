package upstream

import (
	"strings"
	"testing"

	"github.com/kverify/kverify/props/checkkit"
)

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
			seen := map[string][]string{} // check -> the gates of the declarations that hold
			for _, d := range ds {
				in, err := InRange(d.Releases, release)
				if err != nil {
					t.Errorf("%s/%s: %v", comp, d.Check, err)
					continue
				}
				if !in {
					continue
				}
				for _, g := range seen[d.Check] {
					if !exclusive(g, d.Gate) {
						t.Errorf("%s/%s: two declarations hold for %s (gates %q and %q)", comp, d.Check, release, g, d.Gate)
					}
				}
				seen[d.Check] = append(seen[d.Check], d.Gate)
			}
		}
	}
}

// exclusive reports whether two gate conditions never hold together: a
// gate on in one and off in the other.
func exclusive(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	for _, x := range strings.Split(a, ",") {
		for _, y := range strings.Split(b, ",") {
			if x == "!"+y || y == "!"+x {
				return true
			}
		}
	}
	return false
}

// TestGateConditions: a condition of several gates holds when each does,
// and two conditions are exclusive when one turns a gate on that the
// other turns off.
func TestGateConditions(t *testing.T) {
	on, _ := GateOn(WatchListClient) // on by default at the pinned release
	if !on {
		t.Skip("WatchListClient is off in this process")
	}
	for cond, want := range map[string]bool{
		"":                                     true,
		WatchListClient:                        true,
		"!" + WatchListClient:                  false,
		WatchListClient + ",!NoSuchGate":       true, // a gate the release lacks is off
		WatchListClient + ",NoSuchGate":        false,
		"!InOrderInformers," + WatchListClient: false, // locked on from v0.36
	} {
		if got := GateHolds(cond); got != want {
			t.Errorf("GateHolds(%q) = %v, want %v", cond, got, want)
		}
	}
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"A", "!A", true},
		{"A,B", "!B", true},
		{"A,B", "C,!A", true},
		{"A", "B", false},
		{"A", "", false},
		{"!A,B", "!A,!C", false},
	} {
		if got := exclusive(c.a, c.b); got != c.want {
			t.Errorf("exclusive(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}
