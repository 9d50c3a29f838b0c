package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kverify/kverify/internal/kvenv"
	"github.com/kverify/kverify/props/checkkit"
	"github.com/kverify/kverify/subjects/releases"
	ksuite "github.com/kverify/kverify/subjects/suite"
)

// suiteImport is the import path of the suite's package.
const suiteImport = "github.com/kverify/kverify/subjects"

// suite is a built test binary of the subject suite: built once, run as
// often as needed (fresh processes after a hang or a crash, repeats of the
// kill matrix).
type suite struct {
	pkgDir string // the suite package's directory
	bin    string
	dir    string
}

// buildSuiteIn compiles the suite package in pkgDir (root's subjects, a
// nested module's directory, or a module generated for a release).
func buildSuiteIn(pkgDir, overlay string, race bool) (*suite, error) {
	dir, err := os.MkdirTemp("", "kverify-suite-")
	if err != nil {
		return nil, err
	}
	bin := filepath.Join(dir, "subjects.test")
	args := []string{"test", "-c", "-o", bin}
	if race {
		args = append(args, "-race")
	}
	if overlay != "" {
		// A mutant's binary runs once and is thrown away: without the
		// symbol table and DWARF (stacks and race reports still name
		// functions and lines, from the pc tables) it links about 15%
		// faster, and the kill matrix is mostly builds.
		args = append(args, "-overlay", overlay, "-ldflags=-s -w")
	}
	args = append(args, ".")
	cmd := exec.Command("go", args...)
	cmd.Dir = pkgDir // a nested module builds from its own go.mod
	if tc := releases.Toolchain(pkgDir); tc != "" {
		// A release that needs a newer Go than this one (subjects/releases).
		cmd.Env = append(os.Environ(), "GOTOOLCHAIN="+tc)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("build failed: %v\n%s", err, tail(string(out), 30))
	}
	return &suite{pkgDir: pkgDir, bin: bin, dir: dir}, nil
}

// list returns the test names of the checks the suite would run with env
// (suite.RunSuite with KVERIFY_LIST set), and their families.
func (s *suite) list(env []string) ([]string, map[string]string, error) {
	cmd := exec.Command(s.bin, "-test.run", "^TestSuite$", "-test.count=1")
	cmd.Dir = s.pkgDir
	cmd.Env = slices.Concat(os.Environ(), env, kvenv.Config{List: true}.Environ())
	out, err := cmd.Output()
	if err != nil {
		return nil, nil, fmt.Errorf("listing the checks: %v\n%s", err, tail(string(out), 20))
	}
	var names []string
	families := map[string]string{}
	for _, l := range strings.Split(string(out), "\n") {
		if n, ok := strings.CutPrefix(strings.TrimSpace(l), ksuite.ListPrefix); ok {
			name, fam, _ := strings.Cut(n, " ")
			names = append(names, name)
			families[name] = fam
		}
	}
	return names, families, nil
}

// Close removes the binary.
func (s *suite) Close() { os.RemoveAll(s.dir) }

// raceSupported reports whether this go command can build with -race (it
// needs cgo).
func raceSupported() bool {
	out, err := exec.Command("go", "env", "CGO_ENABLED").Output()
	return err == nil && strings.TrimSpace(string(out)) == "1"
}

// suiteRun configures one run of a suite binary.
type suiteRun struct {
	env      []string
	failfast bool
	timeout  time.Duration
	// finished is called as each wanted check reports its result.
	finished func(*result)
}

// run runs the binary once under test2json and collects the results of
// the wanted checks (test names TestSuite/<component>/<subject>/<check>).
// A check that was running when the binary died (a panic in a subject's
// goroutine, a fatal error) is reported as failed with the crash output.
func (s *suite) run(o suiteRun, want map[string]bool) *goTestRun {
	args := []string{"tool", "test2json", "-t", "-p", suiteImport, s.bin,
		"-test.v=test2json", "-test.run", "^TestSuite$", "-test.count=1", "-rapid.nofailfile"}
	if o.failfast {
		args = append(args, "-test.failfast")
	}
	if o.timeout > 0 {
		args = append(args, "-test.timeout", o.timeout.String())
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = s.pkgDir
	cmd.Env = append(os.Environ(), o.env...)
	ownGroup(cmd)
	r := runJSON(cmd, func(r *goTestRun, ev event) {
		if res, ok := r.results[ev.Test]; ok && want[ev.Test] && isFinal(ev.Action) && o.finished != nil {
			o.finished(res)
		}
		if o.failfast && ev.Action == "output" && strings.HasPrefix(ev.Output, "WARNING: DATA RACE") {
			// The check running now fails when it ends (testing reports a
			// race detected during the test), which for a race probe is
			// its whole time limit later: a run that stops at its first
			// kill stops here.
			if res := running(r, want); res != nil {
				res.Status, res.End = "fail", ev.Time
				res.Output.WriteString("\nkverify: stopped at the first data race report; the check fails with it\n")
				if o.finished != nil {
					o.finished(res)
				}
				killGroup(cmd)
			}
		}
	}, nil)
	if r.exitErr != nil {
		for _, name := range r.order {
			res := r.results[name]
			if want[name] && res.Status == "" {
				res.Status = "fail"
				res.Crashed = true
				res.End = r.last
				fmt.Fprintf(&res.Output, "\nthe test binary died during this check (%v): %s\n", r.exitErr, crashReason(res.Output.String()+r.output.String()))
				if o.finished != nil {
					o.finished(res)
				}
			}
		}
	}
	return r
}

// running is the wanted check that has started and not finished, if any.
func running(r *goTestRun, want map[string]bool) *result {
	for i := len(r.order) - 1; i >= 0; i-- {
		if res := r.results[r.order[i]]; want[r.order[i]] && res.Status == "" {
			return res
		}
	}
	return nil
}

func isFinal(action string) bool { return action == "pass" || action == "fail" || action == "skip" }

// notRun reports whether a result is a check the suite did not run because
// an earlier check hung in the same process.
func notRun(r *result) bool {
	return r.Status == "skip" && strings.Contains(r.Output.String(), checkkit.NotRunPrefix+":")
}

// runAll runs the binary until every wanted check has a result: checks
// skipped as NOT RUN after a hang, and checks that never started because
// the binary crashed, run again in fresh processes, for as long as each
// round settles some (a hung check settles at least itself, so a subject
// with many declared hangs, knative's drain spin, gets a round per hang;
// a binary that dies before settling anything ends the rounds). It
// returns the results in report order and the first run (for the time to
// first kill).
func (s *suite) runAll(o suiteRun, want []string) ([]*result, *goTestRun) {
	wanted := map[string]bool{}
	for _, w := range want {
		wanted[w] = true
	}
	final := map[string]*result{}
	var first *goTestRun
	pending := slices.Clone(want)
	for round := 0; len(pending) > 0; round++ {
		ro := o
		if round > 0 {
			ro.env = slices.Concat(o.env, kvenv.Config{Only: onlyList(pending)}.Environ())
		}
		run := s.run(ro, wanted)
		if first == nil {
			first = run
		}
		settled := 0
		for _, name := range run.order {
			r := run.results[name]
			if !wanted[name] || r.Status == "" || notRun(r) {
				continue
			}
			if _, done := final[name]; !done {
				final[name] = r
				settled++
			}
		}
		pending = pending[:0]
		for _, w := range want {
			if _, done := final[w]; !done {
				pending = append(pending, w)
			}
		}
		if settled == 0 {
			break
		}
	}
	var out []*result
	for _, w := range want {
		r, ok := final[w]
		if !ok {
			// Never settled (every process that ran it died, or the rounds
			// ran out): reported, never dropped.
			p := strings.SplitN(w, "/", 4)
			if len(p) < 4 {
				continue
			}
			r = &result{Component: p[1], Subject: p[2], Check: p[3], Status: "not-run"}
			r.Output.WriteString("kverify: the check got no result: the test binary died before or during it in every run\n")
		}
		out = append(out, r)
	}
	return out, first
}

// onlyList is KVERIFY_ONLY for test names: component/check, comma-separated.
func onlyList(names []string) []string {
	var parts []string
	for _, n := range names {
		p := strings.SplitN(n, "/", 4)
		if len(p) == 4 {
			parts = append(parts, p[1]+"/"+p[3])
		}
	}
	return parts
}
