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
// KVERIFY_SUBJECTS (comma-separated) narrow the run, and so does
// KVERIFY_ONLY (comma-separated component/check), with which kverify runs
// again, in a fresh process, checks that an earlier hang or crash kept from
// running.
func TestSuite(t *testing.T) {
	comps := list("KVERIFY_COMPONENTS")
	subs := list("KVERIFY_SUBJECTS")
	only := list("KVERIFY_ONLY")
	for _, e := range All() {
		if (comps != nil && !slices.Contains(comps, e.Component)) || (subs != nil && !slices.Contains(subs, e.Subject)) {
			continue
		}
		checks, divs := e.Checks(), e.Divergences
		if only != nil {
			keep := func(name string) bool { return slices.Contains(only, e.Component+"/"+name) }
			checks = slices.DeleteFunc(checks, func(c props.Check) bool { return !keep(c.Name) })
			divs = slices.DeleteFunc(slices.Clone(divs), func(d props.Divergence) bool { return !keep(d.Check) })
			if len(checks) == 0 {
				continue
			}
		}
		t.Run(e.Component+"/"+e.Subject, func(t *testing.T) {
			props.Run(t, checks, props.WithDivergences(divs...), props.WithSubject(subjectName(e.Subject)))
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
