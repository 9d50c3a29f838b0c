package kvenv

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func getenv(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// TestMalformed: every malformed value is an error naming its variable,
// and none is taken as the default silently.
func TestMalformed(t *testing.T) {
	for name, v := range map[string]string{
		"KVERIFY_BUDGET":      "30",
		"KVERIFY_CHECKS":      "x",
		"KVERIFY_HANG_AFTER":  "0s",
		"KVERIFY_LINEAR_SEED": "-1",
		"KVERIFY_LIST":        "yes please",
		"KVERIFY_ONLY":        "queue-model",
		"KVERIFY_COMPONENTS":  "workqueue,,ring",
		"KVERIFY_SUBJECTS":    " ours",
	} {
		_, err := Parse(getenv(map[string]string{name: v}))
		if err == nil || !strings.Contains(err.Error(), name+"=") {
			t.Errorf("%s=%q: got error %v, want one naming the variable", name, v, err)
		}
	}
	_, err := Parse(getenv(map[string]string{"KVERIFY_BUDGET": "30", "KVERIFY_CHECKS": "0"}))
	if err == nil || !strings.Contains(err.Error(), "KVERIFY_BUDGET") || !strings.Contains(err.Error(), "KVERIFY_CHECKS") {
		t.Errorf("two malformed variables: got %v, want both named", err)
	}
}

// TestRoundTrip: what Environ writes, Parse reads back.
func TestRoundTrip(t *testing.T) {
	want := Config{Budget: 30 * time.Second, Checks: 200, TraceDir: "/tmp/t", Subject: "s",
		Components: []string{"workqueue", "ring"}, Subjects: []string{"ours"}, Only: []string{"ring/fifo"},
		List: true, Replay: "f.json", ReplaySubject: "upstream", Mutant: "wq-lifo",
		HangAfter: time.Minute, LinearSeed: 0, HasLinearSeed: true, RaceSeed: 7, HasRaceSeed: true,
		ActiveMutant: 3, BenchRound: 2, Deeper: 4, ShardK: 2, ShardN: 3, Cache: "/c", MutantSubject: "upstream"}
	m := map[string]string{}
	for _, kv := range want.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	if len(m) != len(Names()) {
		t.Errorf("Environ wrote %d variables, want all %d", len(m), len(Names()))
	}
	got, err := Parse(getenv(m))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Components, want.Components) || !slices.Equal(got.Only, want.Only) ||
		got.Budget != want.Budget || got.Checks != want.Checks || got.List != want.List || !got.HasLinearSeed || got.RaceSeed != 7 || !got.HasRaceSeed || got.ActiveMutant != 3 || got.BenchRound != 2 || got.Deeper != 4 || got.ShardK != 2 || got.ShardN != 3 || got.Cache != "/c" || got.MutantSubject != "upstream" || got.HangAfter != want.HangAfter || got.Mutant != want.Mutant {
		t.Errorf("round trip: got %+v, want %+v", got, want)
	}
	if e := (Config{}).Environ(); len(e) != 0 {
		t.Errorf("the zero Config wrote %v, want nothing", e)
	}
}

// TestLoadFollowsTheEnvironment: Load reads the environment at each call;
// a cached first read made a test's t.Setenv of KVERIFY_HANG_AFTER leak
// into every later test of the package.
func TestLoadFollowsTheEnvironment(t *testing.T) {
	for _, v := range []string{"200ms", "100ms"} {
		t.Setenv("KVERIFY_HANG_AFTER", v)
		c, err := Load()
		if want, _ := time.ParseDuration(v); err != nil || c.HangAfter != want {
			t.Errorf("KVERIFY_HANG_AFTER=%s: Load gave %v, %v", v, c.HangAfter, err)
		}
	}
}

// Lookup parses only the variable it is asked for: a malformed other one
// does not fail it, a malformed one does.
func TestLookup(t *testing.T) {
	t.Setenv("KVERIFY_BUDGET", "30")
	t.Setenv("KVERIFY_ACTIVE_MUTANT", "12")
	if c, err := Lookup("KVERIFY_ACTIVE_MUTANT"); err != nil || c.ActiveMutant != 12 {
		t.Fatalf("Lookup = %+v, %v; want ActiveMutant 12", c, err)
	}
	t.Setenv("KVERIFY_ACTIVE_MUTANT", "x")
	if _, err := Lookup("KVERIFY_ACTIVE_MUTANT"); err == nil || !strings.Contains(err.Error(), "KVERIFY_ACTIVE_MUTANT") {
		t.Fatalf("malformed KVERIFY_ACTIVE_MUTANT: err %v, want one naming it", err)
	}
}
