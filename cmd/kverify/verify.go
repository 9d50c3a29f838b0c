package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/kverify/kverify/internal/kvenv"
	"github.com/kverify/kverify/props/checkkit"
	"github.com/kverify/kverify/subjects"
)

type commonFlags struct {
	components string
	budget     time.Duration
	checks     int
	traces     string
	verbose    bool
	race       bool
	deeper     int
	family     string // verify --family: only checks of these families
	gates      string // --gates: client-go feature gates, Name=bool,...
	// shardK/shardN: verify --shard (KVERIFY_SHARD), 0: none.
	shardK, shardN int
}

func (c *commonFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.components, "component", "", "comma-separated components (default all: "+strings.Join(subjects.Components(), ",")+")")
	fs.DurationVar(&c.budget, "budget", 0, "extra exploration time per randomized check after its first round")
	fs.IntVar(&c.checks, "checks", 0, "rapid cases per round (default rapid's 100)")
	fs.StringVar(&c.traces, "traces", "", "directory for counterexample traces (default: a temporary directory)")
	fs.BoolVar(&c.verbose, "v", false, "print each check's output as it finishes, not only its result")
	fs.BoolVar(&c.race, "race", true, "build the suite with the race detector (needs cgo; off without it)")
	fs.IntVar(&c.deeper, "deeper", 0, "steps added to every exhaustive check's default depth bound (KVERIFY_DEEPER)")
	fs.StringVar(&c.family, "family", "", "comma-separated check families to run (default all: model, timing, linear, leak, retention, witness, exhaustive)")
	fs.StringVar(&c.gates, "gates", "", "client-go feature gates for the suite, Name=true|false,... (KUBE_FEATURE_Name, read by client-go from v0.30; the upstream subjects learn WatchListClient's setting)")
}

// useRace reports whether to build with -race, warning once when it was
// asked for and cannot be had.
func (c *commonFlags) useRace() bool {
	if c.race && !raceSupported() {
		fmt.Fprintln(os.Stderr, "kverify: cgo is off, so the suite runs without -race (the race probes lose most of their power)")
		c.race = false
	}
	return c.race
}

func (c *commonFlags) componentList() ([]string, error) {
	all := subjects.Components()
	if c.components == "" {
		return nil, nil
	}
	var out []string
	for _, name := range strings.Split(c.components, ",") {
		if !slices.Contains(all, name) {
			return nil, fmt.Errorf("unknown component %q (have %s)", name, strings.Join(all, ","))
		}
		out = append(out, name)
	}
	return out, nil
}

func (c *commonFlags) env(components []string) ([]string, error) {
	dir := c.traces
	if dir == "" {
		d, err := os.MkdirTemp("", "kverify-traces-")
		if err != nil {
			return nil, err
		}
		dir = d
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	c.traces = abs
	gates, err := gateEnv(c.gates)
	if err != nil {
		return nil, err
	}
	if c.deeper < 0 {
		return nil, fmt.Errorf("--deeper %d: want a non-negative number of steps", c.deeper)
	}
	return append(kvenv.Config{Components: components, Budget: c.budget, Checks: c.checks, TraceDir: abs, Deeper: c.deeper, ShardK: c.shardK, ShardN: c.shardN}.Environ(), gates...), nil
}

// gateEnv turns --gates (Name=bool,...) into client-go's feature-gate
// variables, KUBE_FEATURE_Name=bool.
func gateEnv(spec string) ([]string, error) {
	if spec == "" {
		return nil, nil
	}
	var out []string
	for _, g := range strings.Split(spec, ",") {
		name, val, ok := strings.Cut(g, "=")
		b, err := strconv.ParseBool(val)
		if !ok || name == "" || err != nil || strings.ContainsAny(name, " \t") {
			return nil, fmt.Errorf("--gates %q: want Name=true or Name=false, comma-separated", g)
		}
		out = append(out, fmt.Sprintf("KUBE_FEATURE_%s=%t", name, b))
	}
	return out, nil
}

// timeout is go test's -timeout for a suite of nChecks checks: a backstop
// only, far past any run that makes progress. A check that hangs or spins
// is named by the suite's own watchdog within seconds of evidence; go
// test's timeout is wall time, and beside 8 CPU-bound processes a
// component's checks once ran past the 10 minutes it used to be for a
// whole subject (realfifo/batch reported as failed, killed while it
// worked). So: 10 minutes, plus a minute and twice the budget per check.
func (c *commonFlags) timeout(nChecks int) time.Duration {
	return 10*time.Minute + time.Duration(nChecks)*(time.Minute+2*c.budget)
}

// checkInfo maps component/check to the check's family and guarantee, as
// a subject that is offered the check lists it (NotOffered is set only if
// no registered subject is).
func checkInfo() map[string]checkkit.Check {
	info := map[string]checkkit.Check{}
	for _, e := range subjects.All() {
		for _, c := range e.Checks() {
			if old, ok := info[e.Component+"/"+c.Name]; !ok || old.NotOffered != "" {
				info[e.Component+"/"+c.Name] = c
			}
		}
	}
	return info
}

func usageErr(fs *flag.FlagSet, err error) int {
	fmt.Fprintf(os.Stderr, "kverify %s: %v\n", fs.Name(), err)
	fs.Usage()
	return 2
}

func verify(args []string) int {
	fs := flag.NewFlagSet("verify", flag.ContinueOnError)
	var c commonFlags
	c.register(fs)
	var rf reportFlags
	rf.register(fs)
	subject := fs.String("subject", subjects.Ours, strings.Join(subjects.Forms(), ", "))
	shardFlag := fs.String("shard", "", "K/N: every exhaustive check explores only its K-th of N slices of its search (KVERIFY_SHARD); runs only the exhaustive checks unless --family says otherwise; join the shards' --json reports with --merge")
	merge := fs.String("merge", "", "comma-separated --json reports of the shards of one exhaustive run: join them (a check fails if any shard's failed; coverage adds up) instead of running anything")
	pos, code, done := parseArgs(fs, args)
	if done {
		return code
	}
	if len(pos) > 0 {
		return usageErr(fs, fmt.Errorf("unexpected arguments %q", pos))
	}
	if *merge != "" {
		return mergeVerify(strings.Split(*merge, ","), rf, args)
	}
	if *shardFlag != "" {
		k, n, err := kvenv.ParseShard(*shardFlag)
		if err != nil {
			return usageErr(fs, fmt.Errorf("--shard: %v", err))
		}
		c.shardK, c.shardN = k, n
		if c.family == "" {
			c.family = checkkit.FamilyExhaustive
		}
	}
	requested, err := c.componentList()
	if err != nil {
		return usageErr(fs, err)
	}
	subs, err := subjects.Resolve(*subject)
	if err != nil {
		return usageErr(fs, err)
	}
	comps := requested
	for _, s := range subs {
		// One component list for every subject named: --subject all is
		// ours and upstream, which have the same components.
		if comps, err = s.Select(requested); err != nil {
			return usageErr(fs, err)
		}
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
	info := checkInfo()
	race := c.useRace()
	rep := newReport("verify", args, race, c.traces)
	var all []*result
	failed := false
	for _, sub := range subs {
		s := sub.Name
		fmt.Fprintf(os.Stderr, "kverify: %s: building the suite (race: %v)\n", s, race)
		start := time.Now()
		rs, err := runSubject(root, sub, c, env, comps, race, func(done, total int, r *result) {
			cov := ""
			if c, ok := checkkit.ParseCoverage(r.Output.String()); ok {
				cov = "  " + c.String()
			}
			fmt.Fprintf(os.Stderr, "  [%d/%d] %-11s %-9s %s/%s (%v)%s\n", done, total, r.Status, s, r.Component, r.Check, r.Elapsed.Round(time.Millisecond), cov)
			if c.verbose && r.Status == "fail" {
				fmt.Fprint(os.Stderr, indent(tail(r.Output.String(), 40)))
			}
		})
		if err != nil {
			fmt.Fprintf(os.Stderr, "kverify: %s: %v\n", s, err)
			rep.Problems = append(rep.Problems, fmt.Sprintf("%s: %v", s, firstLineOf(err.Error())))
			failed = true
			continue
		}
		fmt.Fprintf(os.Stderr, "kverify: %s: %d checks in %v\n", s, len(rs), time.Since(start).Round(100*time.Millisecond))
		for _, r := range rs {
			r.Subject = s
		}
		if len(rs) == 0 {
			fmt.Fprintf(os.Stderr, "kverify: %s: no check ran\n", s)
			rep.Problems = append(rep.Problems, s+": no check ran")
			failed = true
		}
		all = append(all, rs...)
	}
	printTable(os.Stdout, all, info)
	printCoverage(os.Stdout, all)
	printDetails(os.Stdout, all)
	fmt.Printf("traces: %s\n", c.traces)
	for _, r := range all {
		rep.Checks = append(rep.Checks, checkFrom(r, info))
	}
	rep.Passed = !failed && !anyFailed(all)
	rep.Seconds = time.Since(rep.Started).Seconds()
	if !rf.save(rep, os.Stderr) || !rep.Passed {
		return 1
	}
	return 0
}

// wantedChecks are the test names of every check the suite registers for
// subject (ours or upstream) in the given components.
func wantedChecks(subject string, comps []string) []string {
	var out []string
	for _, e := range subjects.All() {
		if e.Subject != subject || !slices.Contains(comps, e.Component) {
			continue
		}
		for _, c := range e.Checks() {
			out = append(out, "TestSuite/"+e.Component+"/"+e.Subject+"/"+c.Name)
		}
	}
	return out
}

// subjectSuite builds the suite for subject: ours and upstream as they are,
// a mutant as ours with the mutant's overlay, a nested module's subject in
// its module, a client-go release in the module generated for it.
func subjectSuite(root string, subject subjects.Subject, race bool) (*suite, error) {
	dir, err := os.MkdirTemp("", "kverify-subject-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	overlay, err := subject.Overlay(root, dir)
	if err != nil {
		return nil, err
	}
	pkgDir, err := subject.SuiteDir(root, os.Stderr)
	if err != nil {
		return nil, err
	}
	return buildSuiteIn(pkgDir, overlay, race)
}

// runSubject builds and runs the suite for one subject, every check to a
// result (see suite.runAll).
func runSubject(root string, subject subjects.Subject, c commonFlags, env []string, comps []string, race bool, progress func(done, total int, r *result)) ([]*result, error) {
	s, err := subjectSuite(root, subject, race)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	runEnv := slices.Concat(env, subject.Env(), kvenv.Config{Subjects: []string{subject.Target}}.Environ())
	want := wantedChecks(subject.Target, comps)
	var families map[string]string
	if subject.Nested() {
		// A nested module's entries are not importable here: ask its suite.
		if want, families, err = s.list(runEnv); err != nil {
			return nil, err
		}
	}
	if c.family != "" {
		fams := strings.Split(c.family, ",")
		info := checkInfo()
		var kept []string
		for _, w := range want {
			p := strings.SplitN(w, "/", 4) // TestSuite/<component>/<subject>/<check>
			f, ok := families[w]
			if !ok && len(p) == 4 {
				f = info[p[1]+"/"+p[3]].Family
			}
			if slices.Contains(fams, f) {
				kept = append(kept, w)
			}
		}
		if len(kept) == 0 {
			return nil, fmt.Errorf("no check of the families %s in the components asked for", c.family)
		}
		want = kept
		runEnv = append(runEnv, kvenv.Config{Only: onlyList(want)}.Environ()...)
	}
	done := 0
	finished := func(r *result) {
		// A check re-run in a fresh process (after a hang) reports again.
		if !notRun(r) {
			done++
			progress(min(done, len(want)), len(want), r)
		}
	}
	o := suiteRun{env: runEnv, timeout: c.timeout(len(want)), finished: finished}
	rs, _ := s.runAll(o, want)
	for _, r := range rs {
		if f, ok := families["TestSuite/"+r.Component+"/"+subject.Target+"/"+r.Check]; ok {
			r.Family = f
		}
	}
	return rs, nil
}

func anyFailed(rs []*result) bool {
	for _, r := range rs {
		if r.Status == "fail" || r.Status == "not-run" {
			return true
		}
	}
	return false
}

type row struct {
	component, subject, family string
	pass, fail, div, off, skip int
	elapsed                    time.Duration
}

func printTable(w io.Writer, rs []*result, info map[string]checkkit.Check) {
	rows := map[string]*row{}
	var keys []string
	for _, r := range rs {
		fam := info[r.Component+"/"+r.Check].Family
		if r.Family != "" {
			fam = r.Family
		}
		k := r.Component + "\x00" + r.Subject + "\x00" + fam
		x, ok := rows[k]
		if !ok {
			x = &row{component: r.Component, subject: r.Subject, family: fam}
			rows[k] = x
			keys = append(keys, k)
		}
		switch r.Status {
		case "pass":
			x.pass++
		case "fail", "not-run":
			x.fail++
		case "divergence":
			x.div++
		case "not-offered":
			x.off++
		default:
			x.skip++
		}
		x.elapsed += r.Elapsed
	}
	sort.SliceStable(keys, func(i, j int) bool { return keys[i] < keys[j] })
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "COMPONENT\tSUBJECT\tFAMILY\tRESULT\tPASS\tFAIL\tDIVERGENCE\tNOT OFFERED\tSKIP\tTIME")
	for _, k := range keys {
		x := rows[k]
		res := "pass"
		switch {
		case x.fail > 0:
			res = "FAIL"
		case x.div > 0:
			res = "divergence"
		case x.pass == 0 && x.skip == 0 && x.off > 0:
			res = "not offered"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%v\n", x.component, x.subject, x.family, res, x.pass, x.fail, x.div, x.off, x.skip, x.elapsed.Round(time.Millisecond))
	}
	tw.Flush()
}

// printCoverage prints, under the table, the coverage of every check that
// reports one: the exhaustive checks' bound, states, transitions, the
// sequences they stand for, and whether the search closed.
func printCoverage(w io.Writer, rs []*result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	header := false
	for _, r := range rs {
		c, ok := checkkit.ParseCoverage(r.Output.String())
		if !ok {
			continue
		}
		if !header {
			fmt.Fprintln(tw, "\nCOMPONENT\tSUBJECT\tCHECK\tBOUND\tSTATES\tTRANSITIONS\tSEQUENCES\tCLOSED\tPER SECOND")
			header = true
		}
		closed := "yes"
		switch {
		case c.Stopped:
			closed = "stopped at a violation"
		case c.States == 0 && c.Excused > 0:
			closed = "every run meets the declared divergence"
		case !c.Exhausted:
			closed = fmt.Sprintf("no (%d at the bound)", c.Frontier)
		}
		rate := "-"
		if c.Seconds > 0 {
			rate = fmt.Sprintf("%.0f states, %.0f runs", float64(c.States)/c.Seconds, float64(c.Interleavings)/c.Seconds)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%.3g\t%s\t%s\n", r.Component, r.Subject, r.Check, c.Bound, c.States, c.Transitions, c.Sequences, closed, rate)
	}
	tw.Flush()
}

func printDetails(w io.Writer, rs []*result) {
	for _, r := range rs {
		switch r.Status {
		case "divergence":
			fmt.Fprintf(w, "\ndeclared divergence: %s %s %s\n%s", r.Component, r.Subject, r.Check, indent(divergenceText(r.Output.String())))
		case "fail", "not-run":
			fmt.Fprintf(w, "\nFAIL: %s %s %s\n%s", r.Component, r.Subject, r.Check, indent(tail(r.Output.String(), 60)))
		}
	}
}

func divergenceText(out string) string {
	if i := strings.Index(out, checkkit.DivergencePrefix); i >= 0 {
		out = out[i:]
	}
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "---") {
			continue
		}
		lines = append(lines, l)
	}
	return strings.Join(lines, "\n") + "\n"
}

func indent(s string) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		b.WriteString("    " + l + "\n")
	}
	return b.String()
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n") + "\n"
}
