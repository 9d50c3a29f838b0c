package main

import (
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/kverify/kverify/internal/kvenv"
	"github.com/kverify/kverify/mutants"
	"github.com/kverify/kverify/subjects"
	"github.com/kverify/kverify/subjects/releases"
)

// Running one mutant: its suite, its runs and reruns (the gates flipped, a
// deeper budget for a survivor), and what killed it. mutants.go has the
// command around it: the catalogue, the schemata, the kill matrix.

// mutantRun is how a mutant's suite is run: its subject's environment,
// and the checks of its component it must be killed by.
func mutantRun(subject subjects.Subject, m mutants.Mutant, c commonFlags, env []string) (suiteRun, []string, map[string]bool) {
	want := wantedChecks(subject.Target, []string{m.Component})
	wanted := map[string]bool{}
	for _, w := range want {
		wanted[w] = true
	}
	return suiteRun{env: slices.Concat(env, subject.Env(), kvenv.Config{Subjects: []string{subject.Target}}.Environ()), timeout: c.timeout(len(want))}, want, wanted
}

// runMutant builds m's suite once (or, with schemaEnv, takes the shared
// schema build and activates m in it) and runs it repeat times: the first
// run takes every check (which checks kill it); the others stop at the
// first failure, for the kill rate and the time to kill.
func runMutant(root string, m mutants.Mutant, c commonFlags, env []string, race bool, repeat int, full bool, shared *suite, schemaEnv string) killOutcome {
	subject, err := subjects.ResolveOne("mutant:" + m.ID)
	if err != nil {
		return killOutcome{err: err}
	}
	var s *suite
	own := shared == nil || schemaEnv == ""
	if own {
		if s, err = subjectSuite(root, subject, race); err != nil {
			return killOutcome{err: err}
		}
	} else {
		s = shared
		env = append(slices.Clone(env), schemaEnv)
	}
	o, want, wanted := mutantRun(subject, m, c, env)
	out := killOutcome{runs: 1}
	if full {
		if own {
			defer s.Close()
		}
	} else {
		out.suite, out.run, out.wanted = s, o, wanted
		o.failfast = true
	}
	var rs []*result
	var first *goTestRun
	if full {
		rs, first = s.runAll(o, want)
	} else {
		first = s.run(o, wanted)
		for _, name := range first.order {
			if wanted[name] {
				rs = append(rs, first.results[name])
			}
		}
	}
	for _, r := range rs {
		if r.Status == "fail" {
			name := r.Check
			if r.Crashed {
				name += crashMark
			}
			out.by = append(out.by, name)
		}
	}
	if d, ok := timeToKill(first, wanted); ok {
		out.ttks = append(out.ttks, d)
	} else if m.Target() == subjects.Upstream && c.gates == "" {
		if fo, ok := out.flipGates(s, o, wanted); ok {
			o = fo
			if out.suite != nil {
				out.run = fo
			}
		}
	}
	o.failfast = true
	for range repeat - 1 {
		run := s.run(o, wanted)
		out.runs++
		if d, ok := timeToKill(run, wanted); ok {
			out.ttks = append(out.ttks, d)
		}
	}
	return out
}

// flipGates runs a client-go mutant that the default gates let pass once
// with each gate the pinned release lets a user set turned the other way
// (subjects/releases.Flips), one at a time: the gates are a dimension of
// the search, as the release matrix's --flip-gates makes them, and a bug
// behind a gate is killed there. A kill names its check with the setting
// ("reflector/requests [WatchListClient=false]"), and the later runs of
// --repeat keep that setting.
func (out *killOutcome) flipGates(s *suite, o suiteRun, wanted map[string]bool) (suiteRun, bool) {
	for _, flip := range releases.Flips(releases.Pinned) {
		env, _ := gateEnv(flip)
		fo := o
		fo.env = slices.Concat(o.env, env)
		fo.failfast = true
		run := s.run(fo, wanted)
		d, ok := timeToKill(run, wanted)
		if !ok {
			continue
		}
		out.ttks = append(out.ttks, d)
		out.by = append(out.by, failedChecks(run, wanted, " ["+flip+"]")...)
		return fo, true
	}
	return o, false
}

// deepBudget is the exploration a survivor of the first pass gets in its
// second run.
const deepBudget = 10 * time.Second

// retrySurvivors runs every mutant that survived the first pass once more,
// one at a time and with every randomized check exploring for deepBudget:
// a race window that the first pass, two mutants at once on a loaded
// machine, did not hit. A kill there counts (and shows as a kill by a
// deeper run); a mutant that survives it too is a survivor.
func retrySurvivors(ms []mutants.Mutant, outcomes []killOutcome) {
	for i, m := range ms {
		o := &outcomes[i]
		if o.err != nil || len(o.ttks) > 0 || o.suite == nil {
			continue
		}
		ro := o.run
		ro.env = slices.Concat(ro.env, kvenv.Config{Budget: deepBudget}.Environ())
		ro.timeout += time.Duration(len(o.wanted)) * 2 * deepBudget
		run := o.suite.run(ro, o.wanted)
		o.runs++
		d, ok := timeToKill(run, o.wanted)
		if !ok {
			fmt.Fprintf(os.Stderr, "  survived  %-36s also a run with %v of exploration per check\n", m.ID, deepBudget)
			continue
		}
		o.ttks = append(o.ttks, d)
		o.by = append(o.by, failedChecks(run, o.wanted, "")...)
		fmt.Fprintf(os.Stderr, "  killed    %-36s by a run with %v of exploration per check\n", m.ID, deepBudget)
	}
}

// failedChecks names the wanted checks that failed in run, in the run's
// order, each followed by suffix (the gate setting of a flipped run).
func failedChecks(run *goTestRun, wanted map[string]bool, suffix string) []string {
	var out []string
	for _, name := range run.order {
		if r := run.results[name]; wanted[name] && r.Status == "fail" {
			out = append(out, r.Check+suffix)
		}
	}
	return out
}

// timeToKill is the time from the run's first check starting to its first
// wanted check failing.
func timeToKill(run *goTestRun, wanted map[string]bool) (time.Duration, bool) {
	var first time.Time
	for _, name := range run.order {
		r := run.results[name]
		if wanted[name] && r.Status == "fail" && (first.IsZero() || r.End.Before(first)) {
			first = r.End
		}
	}
	if first.IsZero() {
		return 0, false
	}
	return max(0, first.Sub(run.start)), true
}
