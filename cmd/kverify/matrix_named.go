package main

import (
	"fmt"
	"os"
	"runtime"
	"time"

	"github.com/kverify/kverify/subjects"
	"github.com/kverify/kverify/subjects/releases"
)

// kverify matrix --subjects: a column per named subject.

// expandNamed replaces controller-runtime@matrix by a name per release of
// controller-runtime's matrix (the pinned one under its own name).
func expandNamed(names []string) []string {
	var out []string
	for _, n := range names {
		if n != releases.CRName+"@matrix" {
			out = append(out, n)
			continue
		}
		for _, r := range releases.CRMatrix {
			if r == releases.CRPinned {
				out = append(out, releases.CRName)
			} else {
				out = append(out, releases.CRName+"@"+r)
			}
		}
	}
	return out
}

// namedMatrix is kverify matrix --subjects: each named subject's checks,
// a column each, into out.json and out.md.
func namedMatrix(names []string, out string, c commonFlags) int {
	comps, err := c.componentList()
	if err != nil {
		fmt.Fprintln(os.Stderr, "kverify:", err)
		return 2
	}
	root, err := moduleRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, "kverify:", err)
		return 2
	}
	env, err := c.env(comps)
	if err != nil {
		fmt.Fprintln(os.Stderr, "kverify:", err)
		return 1
	}
	rep := &matrixReport{Generated: time.Now().UTC().Format(time.RFC3339), Go: runtime.Version(), Race: c.useRace(), Named: names}
	start := time.Now()
	for _, name := range names {
		rep.Releases = append(rep.Releases, runNamed(root, name, c, env, comps))
	}
	rep.Seconds = time.Since(start).Seconds()
	if err := writeMatrixFiles(root, out, rep, nil); err != nil {
		fmt.Fprintln(os.Stderr, "kverify:", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "kverify: %d subjects in %v: %s.json, %s.md; traces under %s/<column>\n", len(names), time.Since(start).Round(time.Second), out, out, c.traces)
	for _, rr := range rep.Releases {
		if rr.Problem != "" {
			return 1
		}
	}
	return 0
}

// runNamed runs the checks of comps (nil: the subject's own) on the subject
// called name, as one column of a --subjects matrix.
func runNamed(root, name string, c commonFlags, env, comps []string) *releaseResult {
	rr := &releaseResult{Release: name, Checks: map[string]string{}, NotOffered: map[string]string{}, Failures: map[string]string{}, Findings: map[string]reproRun{}}
	start := time.Now()
	defer func() { rr.Seconds = time.Since(start).Seconds() }()
	sub, err := subjects.ResolveOne(name)
	if err != nil {
		rr.Problem = err.Error()
		return rr
	}
	if comps == nil {
		comps = sub.Components
	}
	fmt.Fprintf(os.Stderr, "kverify: %s: building and running the suite\n", name)
	rs, err := runSubject(root, sub, c, rr.columnEnv(c, env), comps, c.useRace(), func(done, total int, r *result) {
		fmt.Fprintf(os.Stderr, "  [%d/%d] %s %s/%s\n", done, total, r.Status, r.Component, r.Check)
	})
	if err != nil {
		rr.Problem = firstLineOf(err.Error())
		return rr
	}
	rr.record(rs)
	return rr
}
