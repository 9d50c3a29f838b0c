package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/kverify/kverify/internal/kvenv"
	"github.com/kverify/kverify/subjects"
	"github.com/kverify/kverify/subjects/releases"
	"github.com/kverify/kverify/traces/findings"
	"golang.org/x/mod/semver"
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

// columnEnv points a matrix column's trace directory at a subdirectory
// of the run's (--traces) named after the column: one per column, because
// a shared directory kept only the last release's traces of a check when
// releases named them alike. The later KVERIFY_TRACE_DIR wins: os/exec
// keeps the last of a duplicated variable.
func (rr *releaseResult) columnEnv(c commonFlags, env []string) []string {
	dir := filepath.Join(c.traces, traceDirName.ReplaceAllString(strings.TrimSpace(rr.Release+" "+rr.Gates), "_"))
	return slices.Concat(env, kvenv.Config{TraceDir: dir}.Environ())
}

var traceDirName = regexp.MustCompile(`[^A-Za-z0-9.@=-]+`)

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
	fmt.Fprintf(os.Stderr, "kverify: %d releases in %v: %s.json, %s.md; traces under %s/<column>\n", len(rels), time.Since(start).Round(time.Second), *out, *out, c.traces)
	for _, rr := range rep.Releases {
		if rr.Problem != "" {
			return 1
		}
	}
	return 0
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
	rs, err := runSubject(root, sub, c, rr.columnEnv(c, env), comps, c.race, func(done, total int, r *result) {
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
