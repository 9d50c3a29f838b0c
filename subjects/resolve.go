package subjects

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kverify/kverify/internal/kvenv"
	"github.com/kverify/kverify/mutants"
	"github.com/kverify/kverify/subjects/releases"
	"github.com/kverify/kverify/subjects/upstream"
)

// UpstreamVersion is the client-go release the upstream subject is built
// from (go.mod pins it).
const UpstreamVersion = upstream.Release

// Subject is a --subject resolved: what to build, where, and what the suite
// binary runs. Every form a user may write (ours, upstream, all,
// client-go@VERSION, mutant:ID, a nested module's name) resolves to one or
// more of these through Resolve, so that the kverify command keeps no
// switch of its own.
type Subject struct {
	// Name is the subject as reported: ours, upstream, mutant:ID, or a
	// nested module's name.
	Name string
	// Target is the registry subject the suite binary runs
	// (KVERIFY_SUBJECTS): Name, or for a mutant the subject it is built
	// into (Mutant.Target: ours, or upstream for a mutant of client-go's
	// adapter).
	Target string
	// Dir is the module directory, relative to this module's root, whose
	// suite package (its TestSuite and TestReplay) runs the subject; empty
	// for this module's subjects package.
	Dir string
	// Components are the components the subject has checks for.
	Components []string
	// Mutant is the catalogue mutant built into its subject with an
	// overlay, or nil.
	Mutant *mutants.Mutant
	// Release, for client-go at a release other than the pinned one, is
	// that release: its suite runs in the module subjects/releases
	// generates for it (Prepare), whose directory replaces Dir.
	Release string
	// CRRelease, for controller-runtime at a release other than the
	// pinned one, is that release: its suite runs in the module
	// subjects/releases generates for it (PrepareControllerRuntime).
	CRRelease string
}

// Nested reports whether the subject lives in a module of its own, whose
// checks are not importable here: the command asks its suite binary for
// them (RunSuite with KVERIFY_LIST).
func (s Subject) Nested() bool { return s.Dir != "" || s.Release != "" || s.CRRelease != "" }

// SuiteDir returns the directory of the subject's suite package: root's
// subjects package, a nested module's directory, or the module generated
// for a release (which Prepare writes now, logging to log).
func (s Subject) SuiteDir(root string, log io.Writer) (string, error) {
	switch {
	case s.Release != "":
		return releases.Prepare(root, s.Release, upstreamCheckNames(), log)
	case s.CRRelease != "":
		return releases.PrepareControllerRuntime(root, s.CRRelease, upstreamCheckNames(), log)
	case s.Dir != "":
		return filepath.Join(root, s.Dir), nil
	}
	return filepath.Join(root, "subjects"), nil
}

// Env is what the subject adds to the suite binary's environment.
func (s Subject) Env() []string {
	switch {
	case s.Mutant != nil:
		return kvenv.Config{Mutant: s.Mutant.ID, MutantSubject: s.Target}.Environ()
	case s.Release != "":
		// A release's suite names its subject by the target, as every
		// release does: the label says which release, so that its
		// traces do not overwrite one another's and kverify replay
		// finds the release again.
		return kvenv.Config{Subject: "client-go@" + s.Release}.Environ()
	case s.CRRelease != "":
		return kvenv.Config{Subject: releases.CRName + "@" + s.CRRelease}.Environ()
	}
	return nil
}

// Overlay writes the subject's build overlay into dir and returns its path
// (go's -overlay), or "" for a subject built as it is.
func (s Subject) Overlay(root, dir string) (string, error) {
	if s.Mutant == nil {
		return "", nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	return s.Mutant.Overlay(root, dir)
}

// Select returns the components to run on the subject: requested (every
// registry component when none was asked for) narrowed to the subject's,
// or an error naming a requested component the subject has no checks for.
// A mutant must be run with the component whose checks must kill it.
func (s Subject) Select(requested []string) ([]string, error) {
	if len(requested) == 0 {
		requested = s.Components
	}
	for _, c := range requested {
		if !slices.Contains(s.Components, c) {
			return nil, fmt.Errorf("subject %s has no checks for component %s (it has %s)", s.Name, c, strings.Join(s.Components, ","))
		}
	}
	if s.Mutant != nil && !slices.Contains(requested, s.Mutant.Component) {
		return nil, fmt.Errorf("mutant %s belongs to component %s", s.Mutant.ID, s.Mutant.Component)
	}
	return requested, nil
}

// form is one way of naming subjects on the command line.
type form struct {
	syntax  string // as the usage shows it
	resolve func(name string) ([]Subject, bool, error)
}

// forms are the --subject forms, in the order the usage lists them. A new
// kind of subject (a client-go release, a process speaking a client
// protocol) is a new row.
func forms() []form {
	exact := func(want string, ss ...Subject) func(string) ([]Subject, bool, error) {
		return func(name string) ([]Subject, bool, error) { return ss, name == want, nil }
	}
	all := Components()
	ours := Subject{Name: Ours, Target: Ours, Components: all}
	up := Subject{Name: Upstream, Target: Upstream, Components: all}
	fs := []form{
		{Ours, exact(Ours, ours)},
		{Upstream, exact(Upstream, up)},
		// Mutants belong to kverify mutants: every mutant must fail, so a
		// gate that ran them under all could only exit 1.
		{"all (ours and upstream)", exact("all", ours, up)},
		{"client-go@VERSION (any release from " + releases.Oldest + "; " + UpstreamVersion + " is upstream)", func(name string) ([]Subject, bool, error) {
			v, ok := strings.CutPrefix(name, "client-go@")
			if !ok {
				return nil, false, nil
			}
			if v == UpstreamVersion {
				return []Subject{up}, true, nil
			}
			if err := releases.Check(v); err != nil {
				return nil, true, err
			}
			return []Subject{{Name: name, Target: Upstream, Release: v, Components: all}}, true, nil
		}},
		{"mutant:ID (see kverify mutants --list)", func(name string) ([]Subject, bool, error) {
			id, ok := strings.CutPrefix(name, "mutant:")
			if !ok {
				return nil, false, nil
			}
			m, found := mutants.ByID(id)
			if !found {
				return nil, true, fmt.Errorf("unknown mutant %q (see kverify mutants --list)", id)
			}
			return []Subject{{Name: name, Target: m.Target(), Components: all, Mutant: &m}}, true, nil
		}},
	}
	for _, e := range Externals() {
		fs = append(fs, form{e.Name + " (nested module " + e.Dir + ")",
			exact(e.Name, Subject{Name: e.Name, Target: e.Name, Dir: e.Dir, Components: e.Components})})
	}
	var cr External
	for _, e := range Externals() {
		if e.Name == releases.CRName {
			cr = e
		}
	}
	return append(fs, form{releases.CRName + "@VERSION (any release from " + releases.CROldest + ")", func(name string) ([]Subject, bool, error) {
		v, ok := strings.CutPrefix(name, releases.CRName+"@")
		if !ok {
			return nil, false, nil
		}
		if err := releases.CheckControllerRuntime(v); err != nil {
			return nil, true, err
		}
		if v == releases.CRPinned {
			return []Subject{{Name: cr.Name, Target: cr.Name, Dir: cr.Dir, Components: cr.Components}}, true, nil
		}
		return []Subject{{Name: name, Target: cr.Name, CRRelease: v, Components: cr.Components}}, true, nil
	}})
}

// Forms lists the --subject forms, for usage messages.
func Forms() []string {
	var out []string
	for _, f := range forms() {
		out = append(out, f.syntax)
	}
	return out
}

// Resolve turns a --subject value into the subjects it names, or an error
// that lists the valid forms.
func Resolve(name string) ([]Subject, error) {
	for _, f := range forms() {
		ss, ok, err := f.resolve(name)
		if err != nil {
			return nil, err
		}
		if ok {
			return ss, nil
		}
	}
	return nil, fmt.Errorf("unknown subject %q: want %s", name, strings.Join(Forms(), ", "))
}

// ResolveOne is Resolve for a place that takes exactly one subject.
func ResolveOne(name string) (Subject, error) {
	ss, err := Resolve(name)
	if err != nil {
		return Subject{}, err
	}
	if len(ss) != 1 {
		return Subject{}, fmt.Errorf("%s names %d subjects; name one", name, len(ss))
	}
	return ss[0], nil
}

// upstreamCheckNames lists every component's checks on client-go at the
// pinned release, as "name family" (releases.Prepare).
func upstreamCheckNames() map[string][]string {
	out := map[string][]string{}
	for _, c := range Registry() {
		for _, ch := range c.Upstream.Checks() {
			out[c.Name] = append(out[c.Name], ch.Name+" "+ch.Family)
		}
	}
	return out
}
