package checkkit

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/kverify/kverify/internal/kvenv"
)

// counterSpace is a toy space: a counter mod n, steps +1 and +2 (and a
// no-op), that breaks "Bound" when it reaches bad (bad < 0: never).
func counterSpace(n, depth, bad int) Space[int] {
	return Space[int]{Name: "increments", Steps: []int{1, 2, 0}, Depth: depth,
		Run: func(steps []int) (string, []int, error) {
			c := 0
			for i, s := range steps {
				c = (c + s) % n
				if c == bad {
					return "", nil, &Violation{Guarantee: "Bound", Detail: fmt.Sprintf("reached %d after %d steps %v", c, i+1, steps)}
				}
			}
			return fmt.Sprint(c), []int{0, 1, 2}, nil
		}}
}

func TestExploreClosesAndCounts(t *testing.T) {
	cov, err := Explore(Config{}, counterSpace(5, 10, -1))
	if err != nil {
		t.Fatal(err)
	}
	// Five states; from 0, +1 and +2 reach all in 2 steps, so the search
	// closes at depth 3 with nothing new.
	if cov.States != 5 || !cov.Exhausted || cov.Frontier != 0 {
		t.Errorf("coverage %+v, want 5 states, closed", cov)
	}
	// Every sequence of at most 10 steps over 3 always-enabled steps:
	// 1 + 3 + ... + 3^10.
	want := 0.0
	for p, i := 1.0, 0; i <= 10; i++ {
		want += p
		p *= 3
	}
	if cov.Sequences != want {
		t.Errorf("sequences %v, want %v", cov.Sequences, want)
	}
	// Each state is expanded once: 5 × 3 transitions.
	if cov.Transitions != 15 || cov.Interleavings != 16 {
		t.Errorf("transitions %d, interleavings %d: want 15, 16", cov.Transitions, cov.Interleavings)
	}
	if !strings.Contains(cov.String(), "closed") {
		t.Errorf("String %q does not say the search closed", cov)
	}
}

func TestExploreBoundHit(t *testing.T) {
	cov, err := Explore(Config{}, counterSpace(100, 3, -1))
	if err != nil {
		t.Fatal(err)
	}
	// Depth 3 reaches 0..6: 7 states, those first reached at depth 3 (5, 6)
	// left at the frontier.
	if cov.States != 7 || cov.Exhausted || cov.Frontier != 2 {
		t.Errorf("coverage %+v, want 7 states, 2 at the frontier, not closed", cov)
	}
}

func TestExploreShortestCounterexample(t *testing.T) {
	_, err := Explore(Config{}, counterSpace(100, 10, 4))
	var v *Violation
	if !errors.As(err, &v) {
		t.Fatalf("got %v, want a violation", err)
	}
	// 4 takes two steps (+2 +2), the first found breadth first in step
	// order is [2 2]: no shorter sequence reaches it.
	if !strings.Contains(v.Detail, "after 2 steps [2 2]") {
		t.Errorf("counterexample %q, want the shortest, [2 2]", v.Detail)
	}
}

func TestExploreExcusedGoesOn(t *testing.T) {
	cfg := Config{declared: &declared{d: Divergence{Check: "c", Guarantees: []string{"Bound"}}}}
	cov, err := Explore(cfg, counterSpace(5, 10, 3))
	if err != nil {
		t.Fatalf("an excused violation ended the search: %v", err)
	}
	if n, first := cfg.declared.first(); n == 0 || first == nil || cov.Excused != n {
		t.Errorf("excused %d (coverage says %d), want every run that reached 3", n, cov.Excused)
	}
	if cov.States != 4 {
		t.Errorf("states %d, want 4 (3 is never expanded)", cov.States)
	}
}

func TestExploreUnreduced(t *testing.T) {
	sp := counterSpace(5, 3, -1)
	sp.NoReduce = true
	cov, err := Explore(Config{}, sp)
	if err != nil {
		t.Fatal(err)
	}
	// Every sequence of at most 3 steps is run: 3 + 9 + 27 transitions.
	if cov.Transitions != 39 || cov.States != 5 || cov.Sequences != 40 {
		t.Errorf("coverage %+v, want 39 transitions, 5 states, 40 sequences", cov)
	}
}

func TestCoverageLineRoundTrip(t *testing.T) {
	want := Coverage{Mode: "exhaustive", Bound: "depth 3 over 2 ops", Depth: 3, States: 4, Transitions: 8, Interleavings: 9, Sequences: 15, Exhausted: true, Ops: 20, Seconds: 0.5}
	out := "some log\n    explore.go:70: " + CoveragePrefix + " " + mustJSON(want) + "\nmore\n"
	got, ok := ParseCoverage(out)
	if !ok || got != want {
		t.Errorf("ParseCoverage = %+v, %v; want %+v", got, ok, want)
	}
	if _, ok := ParseCoverage("no line here"); ok {
		t.Error("ParseCoverage found a line in output without one")
	}
}

func mustJSON(c Coverage) string {
	b, err := json.Marshal(c)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// TestExploreShardsCoverTheSearch: the shards of a search reach, between
// them, every state the whole search reaches, and each expands only its
// slice below the split.
func TestExploreShardsCoverTheSearch(t *testing.T) {
	reached := func(cfg Config) (map[string]bool, Coverage) {
		keys := map[string]bool{}
		sp := counterSpace(1_000_000, 5, -1)
		sp.Steps = []int{1, 10, 100, 0} // sums of these: a level grows with depth
		run := sp.Run
		sp.Run = func(steps []int) (string, []int, error) {
			k, e, err := run(steps)
			keys[k] = true
			return k, e, err
		}
		cov, err := Explore(cfg, sp)
		if err != nil {
			t.Fatal(err)
		}
		return keys, cov
	}
	whole, wcov := reached(Config{})
	union := map[string]bool{}
	transitions := 0
	for k := 1; k <= 3; k++ {
		keys, cov := reached(Config{env: &kvenv.Config{ShardK: k, ShardN: 3}})
		if cov.Shard != fmt.Sprintf("%d/3", k) {
			t.Errorf("shard %d's coverage says shard %q", k, cov.Shard)
		}
		if cov.Transitions >= wcov.Transitions {
			t.Errorf("shard %d ran %d transitions, the whole search %d: it did not split", k, cov.Transitions, wcov.Transitions)
		}
		transitions += cov.Transitions
		for key := range keys {
			union[key] = true
		}
	}
	if len(union) != len(whole) {
		t.Errorf("the shards reached %d states between them, the whole search %d", len(union), len(whole))
	}
	if transitions < wcov.Transitions {
		t.Errorf("the shards ran %d transitions between them, fewer than the whole search's %d", transitions, wcov.Transitions)
	}
}
