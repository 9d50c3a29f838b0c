package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kverify/kverify/subjects"
	"github.com/kverify/kverify/traces/findings"
)

// The matrix's Markdown and JSON.

// renderMatrix writes the Markdown again from a matrix's JSON, so that a
// change of presentation needs no run.
func renderMatrix(out string) int {
	root, err := moduleRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, "kverify:", err)
		return 2
	}
	path := out + ".json"
	if !filepath.IsAbs(path) {
		path = filepath.Join(root, path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "kverify:", err)
		return 1
	}
	var rep matrixReport
	if err := json.Unmarshal(b, &rep); err != nil {
		fmt.Fprintf(os.Stderr, "kverify: %s: %v\n", path, err)
		return 1
	}
	fds, err := findings.Load(root)
	if err == nil {
		err = writeMatrixFiles(root, out, &rep, fds)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "kverify:", err)
		return 1
	}
	return 0
}

// cell is a status's glyph in the Markdown tables.
func cell(status string) string {
	switch status {
	case "pass":
		return "✓"
	case "divergence":
		return "D"
	case "not-offered":
		return "–"
	case "fail", "not-run":
		return "**F**"
	case "":
		return " "
	}
	return "s"
}

// writeMatrixFiles writes OUT.json and OUT.md. The summary tables live in
// OUT.md only: the README links to them with a one-line summary (its
// front page stays short), so nothing else is rewritten.
func writeMatrixFiles(root, out string, rep *matrixReport, fds []findings.Finding) error {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	if !filepath.IsAbs(out) {
		out = filepath.Join(root, out)
	}
	if err := os.WriteFile(out+".json", append(b, '\n'), 0o644); err != nil {
		return err
	}
	var md strings.Builder
	writeMatrixMarkdown(&md, rep, fds)
	return os.WriteFile(out+".md", []byte(md.String()), 0o644)
}

// checkKeys are the checks of the report, in registry order of their
// components and then as the first release listed them.
func checkKeys(rep *matrixReport) []string {
	var keys []string
	for _, c := range subjects.Components() {
		for _, rr := range rep.Releases {
			for k := range rr.Checks {
				if strings.HasPrefix(k, c+"/") && !slices.Contains(keys, k) {
					keys = append(keys, k)
				}
			}
		}
	}
	// Within a component: sorted, so that the table is stable.
	slices.SortStableFunc(keys, func(a, b string) int {
		ca, _, _ := strings.Cut(a, "/")
		cb, _, _ := strings.Cut(b, "/")
		ia, ib := slices.Index(subjects.Components(), ca), slices.Index(subjects.Components(), cb)
		if ia != ib {
			return ia - ib
		}
		return strings.Compare(a, b)
	})
	return keys
}

func short(r string) string { return strings.TrimPrefix(r, "v0.") }

// label is a column's name: the release, and the gate it ran with the
// other way (its name's capitals: "37.2 WLC=false").
func (rr *releaseResult) label() string {
	if rr.Gates == "" {
		return short(rr.Release)
	}
	name, val, _ := strings.Cut(rr.Gates, "=")
	var caps []rune
	for _, r := range name {
		if r >= 'A' && r <= 'Z' {
			caps = append(caps, r)
		}
	}
	return short(rr.Release) + " " + string(caps) + "=" + val
}

func header(w io.Writer, first string, rep *matrixReport) {
	fmt.Fprintf(w, "| %s |", first)
	for _, rr := range rep.Releases {
		fmt.Fprintf(w, " %s |", rr.label())
	}
	fmt.Fprint(w, "\n|---|")
	for range rep.Releases {
		fmt.Fprint(w, "---|")
	}
	fmt.Fprintln(w)
}

// writeSummary is the summary of docs/matrix.md: each component on each release, as
// counts of new failures (F), declared divergences (D) and passes (✓),
// or – when the release cannot take part; then each finding.
func writeSummary(w io.Writer, rep *matrixReport, fds []findings.Finding, linkPrefix string) {
	header(w, "component \\ "+rep.axis(), rep)
	for _, c := range subjects.Components() {
		if !slices.ContainsFunc(checkKeys(rep), func(k string) bool { return strings.HasPrefix(k, c+"/") }) {
			continue // not asked for (--component)
		}
		fmt.Fprintf(w, "| %s |", c)
		for _, rr := range rep.Releases {
			n := map[string]int{}
			for k, s := range rr.Checks {
				if strings.HasPrefix(k, c+"/") {
					n[s]++
				}
			}
			var parts []string
			if f := n["fail"] + n["not-run"]; f > 0 {
				parts = append(parts, fmt.Sprintf("**%dF**", f))
			}
			if n["divergence"] > 0 {
				parts = append(parts, fmt.Sprintf("%dD", n["divergence"]))
			}
			if n["pass"] > 0 {
				parts = append(parts, fmt.Sprintf("%d✓", n["pass"]))
			}
			if len(parts) == 0 && n["not-offered"] > 0 {
				parts = append(parts, "–")
			}
			if rr.Problem != "" {
				parts = []string{"build failed"}
			}
			fmt.Fprintf(w, " %s |", strings.Join(parts, " "))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "\n")
	if len(rep.Named) == 0 {
		writeFindingRows(w, rep, fds, "finding \\ client-go v0.", linkPrefix)
	}
}

// writeCheckRows is the table of every check on every column.
func writeCheckRows(w io.Writer, rep *matrixReport) {
	header(w, "check \\ "+rep.axis(), rep)
	for _, k := range checkKeys(rep) {
		fmt.Fprintf(w, "| %s |", k)
		for _, rr := range rep.Releases {
			fmt.Fprintf(w, " %s |", cell(rr.Checks[k]))
		}
		fmt.Fprintln(w)
	}
}

// writeFindingRows links each finding's directory, from the file the
// table is in (linkPrefix: "../" from docs/).
func writeFindingRows(w io.Writer, rep *matrixReport, fds []findings.Finding, first, linkPrefix string) {
	header(w, first, rep)
	for _, f := range fds {
		if f.Subject != "client-go" {
			continue
		}
		fmt.Fprintf(w, "| [%s](%s%s) |", f.ID, linkPrefix, filepath.ToSlash(f.Dir))
		for _, rr := range rep.Releases {
			g := map[string]string{"present": "●", "absent": "○", "no-api": "–", "error": "**E**"}[rr.Findings[f.ID].Status]
			fmt.Fprintf(w, " %s |", g)
		}
		fmt.Fprintln(w)
	}
}

func writeMatrixMarkdown(w io.Writer, rep *matrixReport, fds []findings.Finding) {
	if len(rep.Named) > 0 {
		fmt.Fprintf(w, "# The behaviour matrix: %s\n\n", strings.Join(rep.Named, ", "))
		fmt.Fprintf(w, "Generated by `kverify matrix --subjects %s` on %s with %s, race detector %v, in %s. ", strings.Join(rep.Named, ","), rep.Generated, rep.Go, rep.Race, (time.Duration(rep.Seconds) * time.Second).String())
		fmt.Fprintf(w, "Each column is a subject as `kverify verify --subject` names it; each check's declared divergences are in the subject's module (divergences.go), its findings under traces/findings. ")
		fmt.Fprintf(w, "✓ pass · D declared divergence · **F** new failure · – not offered (the reason is below).\n\n")
		fmt.Fprintf(w, "## Summary\n\n")
		writeSummary(w, rep, fds, "../")
		fmt.Fprintf(w, "\n## Every check\n\n")
		writeCheckRows(w, rep)
		fmt.Fprintf(w, "\n## New failures and not offered\n\n")
		for _, rr := range rep.Releases {
			if rr.Problem != "" {
				fmt.Fprintf(w, "- %s: did not run: %s\n", rr.Release, rr.Problem)
			}
			for _, k := range slices.Sorted(maps.Keys(rr.Failures)) {
				fmt.Fprintf(w, "- %s %s: **F** %s\n", rr.Release, k, rr.Failures[k])
			}
			for _, k := range slices.Sorted(maps.Keys(rr.NotOffered)) {
				fmt.Fprintf(w, "- %s %s: not offered: %s\n", rr.Release, k, rr.NotOffered[k])
			}
		}
		return
	}
	fmt.Fprintf(w, "# The behaviour matrix: client-go's checks and findings, release by release\n\n")
	fmt.Fprintf(w, "Generated by `make matrix` (`kverify matrix`) on %s with %s, race detector %v, in %s. ", rep.Generated, rep.Go, rep.Race, (time.Duration(rep.Seconds) * time.Second).String())
	fmt.Fprintf(w, "Each release is the newest patch of its minor release (with --patches, its first patch beside it); each is built in a module generated for it (subjects/releases). ")
	fmt.Fprintf(w, "A column such as `37.2 WLC=false` is that release run with one feature gate the other way than its default (--flip-gates; the gate named by its capitals, subjects/releases.Gates), compared in the changes with the release's default run; the reproducers set their own gates and run only in the default column. ")
	fmt.Fprintf(w, "✓ pass · D declared divergence · **F** new failure · – not offered (the release lacks the API the adapter takes; the reason is below) · ● the reproducer shows the defect · ○ it does not · – it does not build there.\n\n")
	fmt.Fprintf(w, "## Summary\n\n")
	writeSummary(w, rep, fds, "../")
	fmt.Fprintf(w, "\n## Changes between neighbouring releases\n\n")
	writeChanges(w, rep, fds)
	fmt.Fprintf(w, "\n## Every check\n\n")
	writeCheckRows(w, rep)
	fmt.Fprintf(w, "\n## Not offered\n\n")
	seen := map[string][]string{}
	var reasons []string
	for _, rr := range rep.Releases {
		for k, why := range rr.NotOffered {
			comp, _, _ := strings.Cut(k, "/")
			key := comp + ": " + why
			if !slices.Contains(reasons, key) {
				reasons = append(reasons, key)
			}
			if !slices.Contains(seen[key], short(rr.Release)) {
				seen[key] = append(seen[key], short(rr.Release))
			}
		}
	}
	slices.Sort(reasons)
	for _, r := range reasons {
		fmt.Fprintf(w, "- %s (v0.%s)\n", r, strings.Join(seen[r], ", v0."))
	}
	fmt.Fprintf(w, "\n## Build problems\n\n")
	listed := false
	for _, rr := range rep.Releases {
		if rr.Problem != "" {
			listed = true
			fmt.Fprintf(w, "- %s: %s\n", rr.Release, rr.Problem)
		}
		if rr.Toolchain != "" {
			listed = true
			fmt.Fprintf(w, "- %s: built with %s (its modules require it)\n", rr.Release, rr.Toolchain)
		}
	}
	if !listed {
		fmt.Fprintln(w, "None.")
	}
}

// writeChanges lists every check and finding whose status differs
// between two neighbouring releases (both offered), naming the release
// that changed it. A check that starts to diverge is marked, not called a
// regression: a new API can bring a declared defect with it (drain in
// v0.23), or an intermittent declaration meets its behaviour on one run
// and not the next; docs/releases.md says which changes are regressions. A
// reproducer that starts to show its defect is one: its API sequence is
// the same on both releases.
func writeChanges(w io.Writer, rep *matrixReport, fds []findings.Finding) {
	n := 0
	var base *releaseResult // the last default run
	for i := 1; i < len(rep.Releases); i++ {
		prev, cur := rep.Releases[i-1], rep.Releases[i]
		if prev.Gates == "" {
			base = prev
		}
		if cur.Gates != "" && base != nil && base.Release == cur.Release {
			prev = base // a gate's run against its release's defaults
		} else if cur.Gates == "" && base != nil {
			prev = base // the next release against the last one's defaults
		}
		var lines []string
		for _, k := range checkKeys(rep) {
			a, b := prev.Checks[k], cur.Checks[k]
			if a == b || a == "" || b == "" || a == "not-offered" || b == "not-offered" {
				continue
			}
			tag := ""
			switch {
			case a == "pass" && b == "fail":
				tag = " — **new failure**"
			case a == "pass" && b == "divergence":
				tag = " — starts to diverge"
			}
			why := ""
			if m := cur.Failures[k]; m != "" {
				why = ": " + firstWords(m, 160)
			}
			lines = append(lines, fmt.Sprintf("- `%s`: %s → %s%s%s", k, a, b, tag, why))
		}
		for _, f := range fds {
			a, b := prev.Findings[f.ID].Status, cur.Findings[f.ID].Status
			if a == b || a == "" || b == "" {
				continue
			}
			tag := ""
			switch {
			case a == "absent" && b == "present":
				tag = " — **regression**"
			case a == "present" && b == "absent":
				tag = " — fixed"
			}
			lines = append(lines, fmt.Sprintf("- finding `%s`: %s → %s%s", f.ID, a, b, tag))
		}
		if len(lines) > 0 {
			n++
			if cur.Gates != "" {
				fmt.Fprintf(w, "**%s with %s** (from its defaults):\n\n%s\n\n", cur.Release, cur.Gates, strings.Join(lines, "\n"))
			} else {
				fmt.Fprintf(w, "**%s** (from %s):\n\n%s\n\n", cur.Release, prev.Release, strings.Join(lines, "\n"))
			}
		}
	}
	if n == 0 {
		fmt.Fprintln(w, "None.")
	}
}
