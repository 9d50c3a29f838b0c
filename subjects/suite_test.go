package subjects

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/kverify/kverify/props"
	"github.com/kverify/kverify/traces"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestSuite runs every check of every registered entry as
// TestSuite/<component>/<subject>/<check>. KVERIFY_COMPONENTS and
// KVERIFY_SUBJECTS (comma-separated) narrow the run.
func TestSuite(t *testing.T) {
	comps := list("KVERIFY_COMPONENTS")
	subs := list("KVERIFY_SUBJECTS")
	for _, e := range All() {
		if (comps != nil && !slices.Contains(comps, e.Component)) || (subs != nil && !slices.Contains(subs, e.Subject)) {
			continue
		}
		t.Run(e.Component+"/"+e.Subject, func(t *testing.T) {
			props.Run(t, e.Checks(), props.WithDivergences(e.Divergences...), props.WithSubject(subjectName(e.Subject)))
		})
	}
}

func subjectName(s string) string {
	if m := os.Getenv("KVERIFY_MUTANT"); m != "" && s == Ours {
		return "mutant:" + m
	}
	return s
}

func list(env string) []string {
	v := os.Getenv(env)
	if v == "" {
		return nil
	}
	return strings.Split(v, ",")
}

// TestReplay replays the trace named by KVERIFY_REPLAY on the subject named
// by KVERIFY_REPLAY_SUBJECT (default: the trace's own subject). It is what
// `kverify replay` runs.
func TestReplay(t *testing.T) {
	path := os.Getenv("KVERIFY_REPLAY")
	if path == "" {
		t.Skip("KVERIFY_REPLAY not set")
	}
	tr, err := traces.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	subject := os.Getenv("KVERIFY_REPLAY_SUBJECT")
	if subject == "" {
		subject = tr.Subject
	}
	for _, e := range All() {
		if e.Component != tr.Component || e.Subject != subject {
			continue
		}
		if e.Replay == nil {
			t.Fatalf("component %s cannot replay traces", e.Component)
		}
		if err := e.Replay(t, tr); err != nil {
			t.Fatalf("%s on %s: %v", tr.Check, subjectName(subject), err)
		}
		t.Logf("%s on %s: no violation", tr.Check, subjectName(subject))
		return
	}
	t.Fatalf("no subject %q for component %q", subject, tr.Component)
}
