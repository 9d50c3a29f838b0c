package informer

import (
	"strings"
	"testing"
)

func TestExpectationConforms(t *testing.T) {
	e := expectation{init: []string{"a", "b"}, seq: []string{"add:c", "update:a", "delete:b"}}
	for _, tc := range []struct {
		got   []string
		exact bool
		want  string // substring of the complaint; "" means conforming
	}{
		{[]string{"init:b", "init:a", "add:c", "update:a", "delete:b"}, true, ""},
		{[]string{"init:a", "init:b", "add:c"}, false, ""},
		{[]string{"init:a"}, false, ""},
		{nil, false, ""},
		{[]string{"init:a", "init:b", "add:c"}, true, "received 3 of 5"},
		{[]string{"init:a", "init:a"}, false, "each once"},
		{[]string{"add:c"}, false, "initial list"},
		{[]string{"init:a", "init:b", "update:a"}, false, "want add:c"},
		{[]string{"init:a", "init:b", "add:c", "update:a", "delete:b", "add:x"}, false, "invented or repeated"},
	} {
		got := e.conforms(tc.got, tc.exact)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("conforms(%v, %v) = %q, want %q", tc.got, tc.exact, got, tc.want)
		}
	}
}

func TestScriptIsValid(t *testing.T) {
	s := newScript("k", 500)
	present := map[string]bool{}
	for i, kind := range s.kinds {
		k := s.keys[i]
		if (kind == Add) == present[k] {
			t.Fatalf("event %d: %s on a key that is present=%v", i, eventOf(kind, k), present[k])
		}
		present[k] = kind != Delete
	}
}
