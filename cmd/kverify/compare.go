package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

// compareCmd reads two reports of kverify verify (format
// kverify-report/v1), typically the same gate run on a quiet machine and
// under load (kverify load), and prints every check whose result differs
// between them, and every check only one of them has. A verdict must not
// depend on how busy the machine was, so any difference is a defect of
// the check (or of the subject) that this command makes visible.
//
// Times are not compared: they are expected to differ. The total time of
// each report and their ratio are printed for information, to show how
// much the second run was slowed down.
//
// Exit status: 0 no check differs, 1 one does (or the overall verdict
// does), 2 bad usage or a report that cannot be read.
func compareCmd(args []string) int {
	return compareMain(args, os.Stdout, os.Stderr)
}

// compareMain is compareCmd with its outputs as parameters, for the tests.
func compareMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintln(w, "usage: kverify compare QUIET.json OTHER.json")
		fmt.Fprintln(w, "\nMatches the checks of two kverify verify --json reports by component, subject and check,")
		fmt.Fprintln(w, "and prints each one whose result differs or that only one report has, then a summary.")
		fmt.Fprintln(w, "Times are not compared; their totals and ratio are printed for information.")
		fmt.Fprintln(w, "Exit status: 0 no difference, 1 a difference, 2 bad usage or an unreadable report.")
	}
	pos, code, done := parseArgs(fs, args)
	if done {
		return code
	}
	if len(pos) != 2 {
		fmt.Fprintf(stderr, "kverify compare: want two report files, got %d arguments\n", len(pos))
		fs.Usage()
		return 2
	}
	var reps [2]*report
	for i, path := range pos {
		r, err := readVerifyReport(path)
		if err != nil {
			fmt.Fprintln(stderr, "kverify compare:", err)
			return 2
		}
		reps[i] = r
	}
	if printComparison(stdout, pos[0], reps[0], pos[1], reps[1]) {
		return 1
	}
	return 0
}

// readVerifyReport reads a report of kverify verify and refuses what
// compare cannot match check by check: another format, a mutants report
// (its checks array is empty, so every comparison would be vacuous), a
// check listed twice.
func readVerifyReport(path string) (*report, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r report
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	if r.Format != ReportVersion {
		return nil, fmt.Errorf("%s: format %q, want %q (kverify verify --json FILE)", path, r.Format, ReportVersion)
	}
	if r.Command != "verify" {
		return nil, fmt.Errorf("%s: a report of kverify %s; compare reads reports of kverify verify", path, r.Command)
	}
	seen := map[checkKey]bool{}
	var errs []error
	for _, c := range r.Checks {
		k := keyOf(c)
		if seen[k] {
			errs = append(errs, fmt.Errorf("%s: check %s appears twice", path, k))
		}
		seen[k] = true
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return &r, nil
}

// checkKey identifies a check across reports: the same check of the same
// component on the same subject.
type checkKey struct{ component, subject, check string }

func keyOf(c checkReport) checkKey { return checkKey{c.Component, c.Subject, c.Check} }

// String is the key as verify's progress lines print a check:
// "ours workqueue/queue/model".
func (k checkKey) String() string { return k.subject + " " + k.component + "/" + k.check }

// printComparison prints one line per check that differs between a and b
// (named nameA and nameB), the verdicts if they differ, the times, and the
// summary; it reports whether anything differs.
func printComparison(w io.Writer, nameA string, a *report, nameB string, b *report) bool {
	inB := map[checkKey]checkReport{}
	for _, c := range b.Checks {
		inB[keyOf(c)] = c
	}
	inA := map[checkKey]bool{}
	compared, differ := 0, 0
	// In a's order, then b's extra checks in b's order: the order of the
	// suite, so that the lines read like verify's own output.
	for _, ca := range a.Checks {
		k := keyOf(ca)
		inA[k] = true
		compared++
		cb, ok := inB[k]
		switch {
		case !ok:
			differ++
			fmt.Fprintf(w, "%s: %s in %s, absent from %s\n", k, ca.Result, nameA, nameB)
		case ca.Result != cb.Result:
			differ++
			fmt.Fprintf(w, "%s: %s in %s, %s in %s (%s)%s\n", k, ca.Result, nameA, cb.Result, nameB,
				secondsChange(ca.Seconds, cb.Seconds), why(ca, cb))
		}
	}
	for _, cb := range b.Checks {
		if k := keyOf(cb); !inA[k] {
			compared++
			differ++
			fmt.Fprintf(w, "%s: absent from %s, %s in %s\n", k, nameA, cb.Result, nameB)
		}
	}
	verdictDiffers := a.Passed != b.Passed
	if verdictDiffers {
		// Usually a failed check, already listed; but a suite that did not
		// build or ran no check fails the run with no check to show.
		fmt.Fprintf(w, "verdict: %s in %s, %s in %s%s\n", passedWord(a.Passed), nameA, passedWord(b.Passed), nameB,
			problemsOf(a, b))
	}
	fmt.Fprintf(w, "wall time: %.1f s in %s, %.1f s in %s (%s)\n", a.Seconds, nameA, b.Seconds, nameB, ratio(b.Seconds, a.Seconds))
	sa, sb := sumSeconds(a), sumSeconds(b)
	fmt.Fprintf(w, "time in checks: %.1f s in %s, %.1f s in %s (%s)\n", sa, nameA, sb, nameB, ratio(sb, sa))
	fmt.Fprintf(w, "%d checks compared, %d differ\n", compared, differ)
	return differ > 0 || verdictDiffers
}

// why names what the failing or diverging side of a difference broke, so
// that the line says which guarantee load (or luck) affected.
func why(a, b checkReport) string {
	var parts []string
	for _, c := range []checkReport{a, b} {
		if c.Broke != "" {
			parts = append(parts, "broke "+c.Broke)
		}
		if c.Crashed {
			parts = append(parts, "the test binary crashed")
		}
		if c.Trace != "" {
			parts = append(parts, "trace "+c.Trace)
		}
		if c.Reason != "" {
			parts = append(parts, c.Result+": "+c.Reason)
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return ": " + strings.Join(parts, "; ")
}

// problemsOf lists the problems of whichever run failed.
func problemsOf(a, b *report) string {
	r := a
	if a.Passed {
		r = b
	}
	if len(r.Problems) == 0 {
		return ""
	}
	return ": " + strings.Join(r.Problems, "; ")
}

func passedWord(passed bool) string {
	if passed {
		return "passed"
	}
	return "failed"
}

func sumSeconds(r *report) float64 {
	var s float64
	for _, c := range r.Checks {
		s += c.Seconds
	}
	return s
}

// ratio formats b/a, the slowdown of the second run.
func ratio(b, a float64) string {
	if a <= 0 {
		return "ratio n/a"
	}
	return fmt.Sprintf("%.2fx", b/a)
}

func secondsChange(a, b float64) string {
	return fmt.Sprintf("%.2f s → %.2f s", a, b)
}
