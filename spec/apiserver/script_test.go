package apiserver

import (
	"strings"
	"testing"
)

// Every step of the notation parses and renders back to itself.
func TestScriptRoundTrip(t *testing.T) {
	for _, op := range []string{
		"Create(ns/a)", "Update(a)", "Delete(ns/b)", "Compact", "WatchListGate(false)",
		"List(rv=)", "List(rv=0 limit=2)", "List(rv=3 match=Exact limit=5 continue)",
		"Watch(rv= match=NotOlderThan sie=true bookmarks)", "Watch(rv=0 sie=false)",
	} {
		s, err := ParseStep(op)
		if err != nil {
			t.Errorf("%s: %v", op, err)
			continue
		}
		if got := s.String(); got != op {
			t.Errorf("%s renders as %s", op, got)
		}
	}
}

// Malformed steps are refused with an error naming the step.
func TestScriptRejects(t *testing.T) {
	for _, op := range []string{
		"Create(", "Create(ns/)", "Frob(a)", "Compact(1)", "List(limit=x)", "List(sie=maybe)",
		"Watch(rv=0 fast)", "WatchListGate(perhaps)",
	} {
		if _, err := ParseStep(op); err == nil || !strings.Contains(err.Error(), op) {
			t.Errorf("%s: error %v, want one naming the step", op, err)
		}
	}
	if _, err := ParseScript([]string{"Create(ns/a)", "WatchListGate(false)"}); err == nil {
		t.Error("a gate after the first step was accepted")
	}
}

// Run answers as the model does, normalised: a small script with every
// kind of step.
func TestScriptRun(t *testing.T) {
	steps, err := ParseScript([]string{
		"Create(ns/b)", "Create(ns/a)", "Update(ns/b)",
		"List(rv= limit=1)", "List(rv= limit=1 continue)", "Delete(ns/a)",
		"Watch(rv= match=NotOlderThan sie=true bookmarks)", "Compact", "Watch(rv=2)", "Update(ns/zz)",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"rv=2", "rv=3", "rv=4",
		"rv=4 items=[ns/a@3] continue",
		"rv=4 items=[ns/b@4] last",
		"rv=5",
		"ADDED ns/b@4, BOOKMARK 5 end",
		"compacted at 5",
		"ERROR 410 Expired",
		"error apiserver: conflict",
	}
	got := Run(Config{}, steps)
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("step %d %s: %q, want %q", i, steps[i], got[i], want[i])
		}
	}
}
