// Package suite runs a subject's checks as a test binary's TestSuite and
// TestReplay: the one piece every subject's module shares, this module's
// subjects package and the nested modules alike, including the modules
// kverify generates for client-go releases (subjects/releases). It
// imports only kverify's props, traces and environment, never a subject,
// so that a module pinning another client-go release can use it.
package suite

import (
	"cmp"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kverify/kverify/internal/kvenv"
	"github.com/kverify/kverify/props/checkkit"
	"github.com/kverify/kverify/traces"
)

// RunSuite runs every check of entries as
// TestSuite/<component>/<subject>/<check> when called from TestSuite.
// KVERIFY_COMPONENTS and KVERIFY_SUBJECTS (comma-separated) narrow the run,
// and so does KVERIFY_ONLY (comma-separated component/check), with which
// kverify runs again, in a fresh process, checks that an earlier hang or
// crash kept from running. A module of its own (a subject whose
// dependencies the main module should not gain) calls it from its TestSuite
// with its entries, and kverify drives it like this package's.
func RunSuite(t *testing.T, entries []Entry) {
	t.Helper()
	env := loadEnv(t)
	comps, subs, only, listing := env.Components, env.Subjects, env.Only, env.List
	if err := knownNames(entries, comps, subs); err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if (comps != nil && !slices.Contains(comps, e.Component)) || (subs != nil && !slices.Contains(subs, e.Subject)) {
			continue
		}
		checks, divs := e.Checks(), e.Divergences
		if only != nil {
			keep := func(name string) bool { return slices.Contains(only, e.Component+"/"+name) }
			checks = slices.DeleteFunc(checks, func(c checkkit.Check) bool { return !keep(c.Name) })
			divs = slices.DeleteFunc(slices.Clone(divs), func(d checkkit.Divergence) bool { return !keep(d.Check) })
			if len(checks) == 0 {
				continue
			}
		}
		if listing {
			for _, c := range checks {
				fmt.Printf("%s%s/%s/%s/%s %s\n", ListPrefix, t.Name(), e.Component, e.Subject, c.Name, c.Family)
			}
			continue
		}
		t.Run(e.Component+"/"+e.Subject, func(t *testing.T) {
			checkkit.Run(t, checks, checkkit.WithDivergences(divs...), checkkit.WithSubject(subjectName(env, e.Subject)), checkkit.WithComponent(e.Component))
		})
	}
}

// ListPrefix starts each line RunSuite prints instead of running when
// KVERIFY_LIST is set: the test name of a check it would run and its
// family. kverify lists a nested module's checks so.
const ListPrefix = "kverify-check: "

// CannotReplay starts the failure of a replay that could not run the
// trace at all (no replayer for its check), which kverify replay reports
// apart from a reproduced violation.
const CannotReplay = "KVERIFY CANNOT REPLAY"

// RunReplay replays the trace named by KVERIFY_REPLAY on the entry for the
// subject named by KVERIFY_REPLAY_SUBJECT (default: the trace's own
// subject) and fails t if the violation occurs again. A trace with steps
// is replayed step by step by its check's Replay (an exhaustive check's
// steps), else by the entry's; a probe trace (no steps)
// runs its check again, with no divergence declared. It is what `kverify
// replay` runs.
func RunReplay(t *testing.T, entries []Entry) {
	t.Helper()
	env := loadEnv(t)
	path := env.Replay
	if path == "" {
		t.Skip("KVERIFY_REPLAY not set")
	}
	tr, err := traces.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	subject := env.ReplaySubject
	if subject == "" {
		subject = tr.Subject
	}
	for _, e := range entries {
		if e.Component != tr.Component || e.Subject != subject {
			continue
		}
		if len(tr.Steps) == 0 {
			c, ok := Lookup([]Entry{e}, e.Subject, e.Component, tr.Check)
			if !ok {
				t.Fatalf("component %s has no check %q", e.Component, tr.Check)
			}
			t.Logf("%s is a probe trace, on %s: %s (recorded: %s)", tr.Check, subjectName(env, subject), checkkit.ProbeReplayPlan(tr), firstLine(tr.Message))
			checkkit.Run(t, []checkkit.Check{c}, checkkit.WithSubject(subjectName(env, subject)), checkkit.WithProbeReplay(tr))
			return
		}
		// The check's own replayer (an exhaustive check's steps), else the
		// component's.
		replay := e.Replay
		if c, ok := Lookup([]Entry{e}, e.Subject, e.Component, tr.Check); ok && c.Replay != nil {
			replay = c.Replay
		}
		if replay == nil {
			t.Fatalf("%s: component %s cannot replay traces of %s", CannotReplay, e.Component, tr.Check)
		}
		if err := replay(t, tr); err != nil {
			t.Fatalf("%s on %s: %v", tr.Check, subjectName(env, subject), err)
		}
		t.Logf("%s on %s: no violation", tr.Check, subjectName(env, subject))
		return
	}
	t.Fatalf("no subject %q for component %q", subject, tr.Component)
}

// ours is the subject a mutant is built into unless it says otherwise
// (subjects.Ours).
const ours = "ours"

// subjectName is how traces and messages name subject s: as the mutant
// when the binary was built with one into s, as the release the command
// named when s is a release's generated module.
func subjectName(env kvenv.Config, s string) string {
	// The mutant's own subject: ours, or client-go's adapter for a mutant
	// of subjects/upstream, whose traces were labelled "upstream" and
	// replayed there without the mutant.
	if env.Mutant != "" && s == cmp.Or(env.MutantSubject, ours) {
		return "mutant:" + env.Mutant
	}
	// A release of client-go or controller-runtime, run in the module
	// generated for it, is s by the name of the target it adapts; the
	// command labels it (KVERIFY_SUBJECT: client-go@v0.30.14) when the
	// run is narrowed to s alone, or replays on s.
	if env.Subject != "" && (slices.Equal(env.Subjects, []string{s}) || env.ReplaySubject == s) {
		return env.Subject
	}
	return s
}

// loadEnv is the KVERIFY_* environment, or the end of t naming the
// malformed variable.
func loadEnv(t *testing.T) kvenv.Config {
	t.Helper()
	env, err := kvenv.Load()
	if err != nil {
		t.Fatalf("kverify's environment: %v", err)
	}
	return env
}

// knownNames reports a component or subject named in KVERIFY_COMPONENTS
// or KVERIFY_SUBJECTS that no entry has: a run narrowed to nothing would
// pass having checked nothing.
func knownNames(entries []Entry, comps, subs []string) error {
	for _, c := range comps {
		if !slices.ContainsFunc(entries, func(e Entry) bool { return e.Component == c }) {
			return fmt.Errorf("KVERIFY_COMPONENTS names %q, which no entry here has", c)
		}
	}
	for _, s := range subs {
		if !slices.ContainsFunc(entries, func(e Entry) bool { return e.Subject == s }) {
			return fmt.Errorf("KVERIFY_SUBJECTS names %q, which no entry here has", s)
		}
	}
	return nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// CheckFindings pins a nested module's committed findings to its
// declarations: every trace under dir (traces/findings/<subject>) reads,
// was recorded on one of subjectNames and names a check with a declared
// divergence of that subject (divergences: by subject, then component),
// and every declared divergence has a trace (or, intermittent, shares its
// reason with one that has), so that kverify replay FILE reproduces each.
func CheckFindings(t *testing.T, dir string, divergences map[string]map[string][]checkkit.Divergence) {
	t.Helper()
	checkFindings(t, dir, divergences, false)
}

// CheckMatrixFindings is CheckFindings for the traces a matrix run keeps
// of a release (kverify matrix --traces): an intermittent declaration
// needs no trace, since one run meets what it meets; every trace must
// still name a declared divergence, and every other declaration have one.
func CheckMatrixFindings(t *testing.T, dir string, divergences map[string]map[string][]checkkit.Divergence) {
	t.Helper()
	checkFindings(t, dir, divergences, true)
}

func checkFindings(t *testing.T, dir string, divergences map[string]map[string][]checkkit.Divergence, oneRun bool) {
	t.Helper()
	traced := map[string]bool{}
	for subject, comps := range divergences {
		files, err := filepath.Glob(filepath.Join(dir, subject, "*.json"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if linearHistory.MatchString(filepath.Base(f)) {
				continue // a porcupine history saved beside its check's trace
			}
			tr, err := traces.Read(f)
			if err != nil {
				t.Fatal(err)
			}
			if tr.Subject != subject {
				t.Errorf("%s: recorded on %q, not %q", f, tr.Subject, subject)
			}
			if !slices.ContainsFunc(comps[tr.Component], func(d checkkit.Divergence) bool { return d.Check == tr.Check }) {
				t.Errorf("%s: check %s/%s has no declared divergence", f, tr.Component, tr.Check)
			}
			traced[subject+"/"+tr.Component+"/"+tr.Check] = true
		}
		for comp, ds := range comps {
			for _, d := range ds {
				// An intermittent declaration (a random check that meets the
				// behaviour now and then) may rest on the trace of a fixed
				// check that declares the same finding (the same reason).
				sibling := d.Intermittent && slices.ContainsFunc(ds, func(o checkkit.Divergence) bool {
					return o.Check != d.Check && o.Reason == d.Reason && traced[subject+"/"+comp+"/"+o.Check]
				})
				if !traced[subject+"/"+comp+"/"+d.Check] && !sibling && !(oneRun && d.Intermittent) {
					t.Errorf("declared divergence %s/%s of %s has no trace under %s", comp, d.Check, subject, filepath.Join(dir, subject))
				}
			}
		}
	}
}

// linearHistory names the porcupine history (and visualisation) a failed
// linearizability check saves beside its trace, by its seed: evidence to
// look at, not a trace (git ignores them under traces/findings).
var linearHistory = regexp.MustCompile(`-seed\d+\.json$`)

// Entry is one component's checks bound to one subject.
type Entry struct {
	Component   string
	Subject     string
	Checks      func() []checkkit.Check
	Divergences []checkkit.Divergence
	// Replay runs a saved trace of one of the component's checks; nil
	// when the component has no replayable checks.
	Replay func(t *testing.T, tr *traces.Trace) error
}

// Lookup returns the check called name of component on subject, from
// entries (All, or a nested module's own).
func Lookup(entries []Entry, subject, component, name string) (checkkit.Check, bool) {
	for _, e := range entries {
		if e.Component != component || e.Subject != subject {
			continue
		}
		cs := e.Checks()
		if i := slices.IndexFunc(cs, func(c checkkit.Check) bool { return c.Name == name }); i >= 0 {
			return cs[i], true
		}
	}
	return checkkit.Check{}, false
}

// AbsentEntries are the entries of components a subject's release cannot
// take part in: every check of each component listed (names: the
// component's checks at the pinned release, "name family"), each not
// offered with reason; none runs, and no declaration can go stale. A
// generated release module fills names (subjects/releases).
func AbsentEntries(subject, reason string, names map[string][]string, components ...string) []Entry {
	var es []Entry
	for _, c := range components {
		ns := names[c]
		es = append(es, Entry{Component: c, Subject: subject, Checks: func() []checkkit.Check {
			var cs []checkkit.Check
			for _, n := range ns {
				name, family, _ := strings.Cut(n, " ")
				cs = append(cs, checkkit.Check{Name: name, Family: family, NotOffered: reason})
			}
			return cs
		}})
	}
	return es
}
