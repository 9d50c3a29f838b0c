package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"golang.org/x/mod/semver"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/kverify/kverify/subjects"
	"github.com/kverify/kverify/subjects/releases"
	"github.com/kverify/kverify/traces/findings"
)

// matrixReport is docs/matrix.json: every check and every reproducer on
// every release.
type matrixReport struct {
	Generated string           `json:"generated"`
	Go        string           `json:"go"`
	Race      bool             `json:"race"`
	Seconds   float64          `json:"seconds"`
	Releases  []*releaseResult `json:"releases"`
	// Named lists the subjects of a --subjects matrix (its columns are
	// subjects, not client-go releases), as the command named them.
	Named []string `json:"named,omitempty"`
}

// axis is what the report's columns are, for its tables' corners.
func (rep *matrixReport) axis() string {
	if len(rep.Named) > 0 {
		return "subject"
	}
	return "client-go v0."
}

type releaseResult struct {
	Release string `json:"release"`
	// Gates is the feature-gate setting the release ran with beyond its
	// defaults ("WatchListClient=false"; --flip-gates), "" for its
	// defaults.
	Gates     string  `json:"gates,omitempty"`
	Toolchain string  `json:"toolchain,omitempty"` // the Go that built it, when not this one
	Seconds   float64 `json:"seconds"`
	Problem   string  `json:"problem,omitempty"` // the suite did not build or run
	// Checks maps component/check to its status: pass, divergence,
	// not-offered, fail (a new failure), not-run, skip.
	Checks map[string]string `json:"checks"`
	// NotOffered maps component/check to the reason it is not offered.
	NotOffered map[string]string `json:"not_offered,omitempty"`
	// Failures maps a failed component/check to the guarantee it broke
	// (its first "broke" line), for the changes and for declaring them.
	Failures map[string]string `json:"failures,omitempty"`
	// Findings maps a client-go finding's id to its reproducer's run.
	Findings map[string]reproRun `json:"findings"`
}

// reproRun is one reproducer on one release: present (DEFECT, exit 1),
// absent (OK, exit 0), no-api (it does not build: the release lacks the
// API it takes) or error.
type reproRun struct {
	Status string `json:"status"`
	Line   string `json:"line"`
}

func matrixCmd(args []string) int {
	fs := flag.NewFlagSet("matrix", flag.ContinueOnError)
	var c commonFlags
	c.register(fs)
	// The matrix builds nineteen releases: without -race by default, which
	// halves the builds (the race probes still run, with less power).
	c.race = false
	fs.Lookup("race").DefValue = "false"
	list := fs.String("releases", "", "comma-separated client-go releases (default: the matrix's "+strings.Join(releases.Matrix, ","))
	out := fs.String("out", filepath.Join("docs", "matrix"), "write OUT.json and OUT.md, whose summary tables the README links to (relative to the module root)")
	render := fs.Bool("render", false, "run nothing: write OUT.md again from OUT.json")
	patches := fs.Bool("patches", false, "run the first patch (vX.Y.0) beside the newest of each minor release in the list, so that a behaviour a backport changed shows as a change within the minor line")
	named := fs.String("subjects", "", "comma-separated subjects to run instead of client-go releases, one column each, with kverify verify's names (client-node,client-node@0.22.3,...: a foreign client's history; controller-runtime@matrix: every release of subjects/releases.CRMatrix); their reproducers are not run")
	flip := fs.Bool("flip-gates", false, "after each release with its default gates, run it once more for each feature gate it lets a user set (subjects/releases.Gates), with that gate the other way; the changes are listed against the release's default run")
	pos, code, done := parseArgs(fs, args)
	if done {
		return code
	}
	if len(pos) > 0 {
		return usageErr(fs, fmt.Errorf("unexpected arguments %q", pos))
	}
	if *render {
		return renderMatrix(*out)
	}
	if *named != "" {
		return namedMatrix(expandNamed(strings.Split(*named, ",")), *out, c)
	}
	rels := releases.Matrix
	if *list != "" {
		rels = strings.Split(*list, ",")
	}
	if *patches {
		rels = withFirstPatches(rels)
	}
	for _, r := range rels {
		if err := releases.Check(r); err != nil {
			return usageErr(fs, err)
		}
	}
	comps, err := c.componentList()
	if err != nil {
		return usageErr(fs, err)
	}
	if comps == nil {
		comps = subjects.Components()
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
	fds, err := findings.Load(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "kverify:", err)
		return 1
	}
	rep := &matrixReport{Generated: time.Now().UTC().Format(time.RFC3339), Go: runtime.Version(), Race: c.useRace()}
	start := time.Now()
	for _, r := range rels {
		rr := runRelease(root, r, "", c, env, comps, fds)
		rep.Releases = append(rep.Releases, rr)
		if !*flip || c.gates != "" {
			continue
		}
		for _, g := range releases.Flips(r) {
			genv, _ := gateEnv(g)
			rep.Releases = append(rep.Releases, runRelease(root, r, g, c, slices.Concat(env, genv), comps, fds))
		}
	}
	rep.Seconds = time.Since(start).Seconds()
	if err := writeMatrixFiles(root, *out, rep, fds); err != nil {
		fmt.Fprintln(os.Stderr, "kverify:", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "kverify: %d releases in %v: %s.json, %s.md\n", len(rels), time.Since(start).Round(time.Second), *out, *out)
	for _, rr := range rep.Releases {
		if rr.Problem != "" {
			return 1
		}
	}
	return 0
}

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
	fmt.Fprintf(os.Stderr, "kverify: %d subjects in %v: %s.json, %s.md\n", len(names), time.Since(start).Round(time.Second), out, out)
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
	rs, err := runSubject(root, sub, c, env, comps, c.useRace(), func(done, total int, r *result) {
		fmt.Fprintf(os.Stderr, "  [%d/%d] %s %s/%s\n", done, total, r.Status, r.Component, r.Check)
	})
	if err != nil {
		rr.Problem = firstLineOf(err.Error())
		return rr
	}
	rr.record(rs)
	return rr
}

// withFirstPatches puts before each release of a minor line its first
// patch, vX.Y.0 (a pre-release, or a release that is its line's first, is
// kept alone): the matrix then shows, between the two, what changed within
// the line, where fixes are backported.
func withFirstPatches(rels []string) []string {
	var out []string
	for _, r := range rels {
		first := semver.MajorMinor(r) + ".0"
		if semver.Prerelease(r) == "" && r != first && !slices.Contains(out, first) {
			out = append(out, first)
		}
		out = append(out, r)
	}
	return out
}

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

// runRelease runs the suite and the reproducers on one release, in the
// module generated for it.
func runRelease(root, release, gates string, c commonFlags, env, comps []string, fds []findings.Finding) *releaseResult {
	rr := &releaseResult{Release: release, Gates: gates, Checks: map[string]string{}, NotOffered: map[string]string{}, Failures: map[string]string{}, Findings: map[string]reproRun{}}
	start := time.Now()
	defer func() { rr.Seconds = time.Since(start).Seconds() }()
	sub := subjects.Subject{Name: "client-go@" + release, Target: subjects.Upstream, Release: release, Components: subjects.Components()}
	if gates != "" {
		sub.Name += " " + gates
	}
	fmt.Fprintf(os.Stderr, "kverify: %s: generating, building and running the suite\n", sub.Name)
	rs, err := runSubject(root, sub, c, env, comps, c.race, func(done, total int, r *result) {
		if r.Status == "fail" || r.Status == "not-run" {
			fmt.Fprintf(os.Stderr, "  [%d/%d] %s %s/%s\n", done, total, r.Status, r.Component, r.Check)
		}
	})
	if err != nil {
		rr.Problem = firstLineOf(err.Error())
		fmt.Fprintf(os.Stderr, "kverify: %s: %v\n", sub.Name, err)
		return rr
	}
	rr.record(rs)
	dir, err := releases.Dir(release)
	if err != nil {
		rr.Problem = err.Error()
		return rr
	}
	rr.Toolchain = releases.Toolchain(dir)
	for _, f := range fds {
		// The reproducers set the gates they need themselves: a run
		// with a gate flipped would repeat the default run's.
		if f.Subject == "client-go" && gates == "" {
			rr.Findings[f.ID] = runRepro(dir, f.ID, rr.Toolchain)
		}
	}
	fmt.Fprintf(os.Stderr, "kverify: %s: %d checks, %d reproducers in %v\n", sub.Name, len(rs), len(rr.Findings), time.Since(start).Round(time.Second))
	return rr
}

// record files each check's result in rr: its status, and the reason it
// was not offered or the guarantee it broke.
func (rr *releaseResult) record(rs []*result) {
	for _, r := range rs {
		k := r.Component + "/" + r.Check
		rr.Checks[k] = r.Status
		switch r.Status {
		case "not-offered":
			rr.NotOffered[k] = notOfferedReason(r.Output.String())
		case "fail", "not-run":
			rr.Failures[k] = brokeLine(r.Output.String())
		}
	}
}

// brokeLine is the line of a failed check's output that names the broken
// guarantee, or its last line.
func brokeLine(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for _, l := range lines {
		if _, after, ok := strings.Cut(l, "broke "); ok {
			return strings.TrimSpace(after)
		}
	}
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" && !strings.HasPrefix(l, "---") && !strings.HasPrefix(l, "FAIL") {
			return l
		}
	}
	return ""
}

// notOfferedReason is the reason a skipped check's output gives.
func notOfferedReason(out string) string {
	if _, after, ok := strings.Cut(out, "NOT OFFERED: "); ok {
		return strings.TrimSpace(firstLineOf(after))
	}
	return ""
}

// runRepro builds and runs one reproducer in a release's module.
func runRepro(dir, id, toolchain string) reproRun {
	bin := filepath.Join(dir, "bin", id)
	build := exec.Command("go", "build", "-o", bin, "./findings/"+id)
	build.Dir = dir
	if toolchain != "" {
		build.Env = append(os.Environ(), "GOTOOLCHAIN="+toolchain)
	}
	if out, err := build.CombinedOutput(); err != nil {
		return reproRun{Status: "no-api", Line: firstLineOf(compileError(string(out)))}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	line, defect, err := findings.Run(ctx, bin)
	switch {
	case err != nil:
		return reproRun{"error", err.Error()}
	case defect:
		return reproRun{"present", line}
	}
	return reproRun{"absent", line}
}

// compileError is the first compiler message of a failed build (its first
// line names the package).
func compileError(out string) string {
	for _, l := range strings.Split(out, "\n") {
		if l != "" && !strings.HasPrefix(l, "#") {
			return l
		}
	}
	return out
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
