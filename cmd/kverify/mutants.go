package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/kverify/kverify/mutants"
	"github.com/kverify/kverify/props/checkkit"
	"github.com/kverify/kverify/subjects"
)

// mutantsCmd prints the kill matrix: for every catalogued mutant of the
// chosen components, which checks kill it, how often (with --repeat) and
// how long the suite ran before the first kill. Each run stops at its
// first kill; then every check that has killed nothing yet is run alone on
// its component's mutants until it kills one (--full runs every check on
// every mutant instead). It fails if a mutant survives a run, misses the
// time bars, or does not build, or if a check of those components kills no
// mutant (a check that cannot fail is a defect).
func mutantsCmd(args []string) int {
	fs := flag.NewFlagSet("mutants", flag.ContinueOnError)
	var c commonFlags
	c.register(fs)
	list := fs.Bool("list", false, "only list the catalogue")
	parallel := fs.Int("parallel", 2, "mutants built and run at once")
	repeat := fs.Int("repeat", 1, "runs per mutant, each stopping at its first kill: kill rate, median and worst time to kill")
	medianBar := fs.Duration("median-bar", 2*time.Second, "fail if the median time to kill, over every kill of the matrix, exceeds this")
	worstBar := fs.Duration("worst-bar", 30*time.Second, "fail if any kill takes longer than this")
	barScale := fs.Float64("bar-scale", 1, "multiply both bars by this: the inverse of the CPU share the run gets, e.g. 5 beside 8 CPU-bound processes on 2 cores (make mutants-loaded); a kill's time stretches with load, whether it kills is not allowed to")
	only := fs.String("mutant", "", "comma-separated mutant IDs (default: every mutant of the components)")
	var rf reportFlags
	rf.register(fs)
	cover := fs.Bool("cover", false, "run a covering sample: for every check, the two mutants it killed fastest in the committed kill matrix ("+mutants.MatrixFile+"), plus every mutant the matrix does not list yet (CI's mode; the whole catalogue takes most of CI's time)")
	saveMatrix := fs.String("save-matrix", "", "after the run, write its kill rows to this kill matrix file, keeping the file's rows of catalogued mutants the run left out (--component); make mutants writes "+mutants.MatrixFile)
	full := fs.Bool("full", false, "run every check on every mutant (the whole matrix) instead of stopping at the first kill and then looking, for each check that killed nothing yet, for a mutant it kills")
	shardFlag := fs.String("shard", "", "K/N: run only shard K of N, a deterministic slice of the selected mutants (every N-th, from the K-th, in catalogue order); its checks are judged when the shards' --json reports are joined with --merge")
	merge := fs.String("merge", "", "comma-separated --json reports of the shards of one catalogue: join them into one kill matrix (--save-matrix), look for killers of the checks none of them killed, and apply the bars, instead of running the catalogue")
	schema := fs.Bool("schema", true, "build every mutant whose change lies inside one function body into one binary that picks the active mutant at run time (mutant schemata); the others are built alone. --schema=false builds each mutant alone")
	pos, code, done := parseArgs(fs, args)
	if done {
		return code
	}
	if len(pos) > 0 {
		return usageErr(fs, fmt.Errorf("unexpected arguments %q", pos))
	}
	if *repeat < 1 {
		return usageErr(fs, fmt.Errorf("--repeat must be at least 1"))
	}
	if !(*barScale >= 1) { // also NaN
		return usageErr(fs, fmt.Errorf("--bar-scale must be at least 1, got %v", *barScale))
	}
	*medianBar = time.Duration(float64(*medianBar) * *barScale)
	*worstBar = time.Duration(float64(*worstBar) * *barScale)
	sh, err := parseShard(*shardFlag)
	if err != nil {
		return usageErr(fs, err)
	}
	comps, err := c.componentList()
	if err != nil {
		return usageErr(fs, err)
	}
	if *merge != "" {
		if *shardFlag != "" || *only != "" || *cover {
			return usageErr(fs, fmt.Errorf("--merge joins whole shards: not with --shard, --mutant or --cover"))
		}
		return mergeShards(strings.Split(*merge, ","), c, rf, *saveMatrix, *medianBar, *worstBar, *schema, *parallel, args)
	}
	ms := mutants.For(comps...)
	if *only != "" {
		var sel []mutants.Mutant
		for _, id := range strings.Split(*only, ",") {
			m, ok := mutants.ByID(id)
			if !ok {
				return usageErr(fs, fmt.Errorf("unknown mutant %q", id))
			}
			sel = append(sel, m)
		}
		ms = sel
	}
	if (*cover || *saveMatrix != "") && *only != "" {
		return usageErr(fs, fmt.Errorf("--cover and --save-matrix work on the catalogue, not on --mutant"))
	}
	if *cover && *saveMatrix != "" {
		return usageErr(fs, fmt.Errorf("--save-matrix needs a run of the whole catalogue, not --cover"))
	}
	// The committed kill matrix, read once: --cover samples from it, and
	// findKillers tries first the mutant it names for a check.
	var root string
	var matrix mutants.Matrix
	if *cover {
		var err error
		if root, err = moduleRoot(); err != nil {
			fmt.Fprintln(os.Stderr, "kverify:", err)
			return 2
		}
		if matrix, err = readMatrix(root); err != nil {
			fmt.Fprintf(os.Stderr, "kverify: --cover needs the kill matrix: %v (make mutants writes it)\n", err)
			return 2
		}
		sample, note := coverSample(matrix, ms)
		fmt.Fprintln(os.Stderr, "kverify:", note)
		ms = sample
	}
	if sh.n > 1 {
		ms = sh.of(ms)
		fmt.Fprintf(os.Stderr, "kverify: shard %d/%d: %d mutants\n", sh.k, sh.n, len(ms))
	}
	if *list {
		tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "MUTANT\tCOMPONENT\tFILE\tBUG")
		for _, m := range ms {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", m.ID, m.Component, m.File, m.Bug)
		}
		tw.Flush()
		return 0
	}
	if root == "" {
		var err error
		if root, err = moduleRoot(); err != nil {
			fmt.Fprintln(os.Stderr, "kverify:", err)
			return 2
		}
		matrix, _ = readMatrix(root) // optional here: without it, killers are looked for in catalogue order
	}
	info := checkInfo()
	race := c.useRace()
	start := time.Now()
	rep := newReport("mutants", args, race, c.traces)
	prefer := mutants.Killers(matrix, ms)
	var sch *mutants.Schema
	var shared *suite
	if *schema {
		sch, shared = buildSchema(root, ms, race)
	}
	outcomes := make([]killOutcome, len(ms))
	sem := make(chan struct{}, max(1, *parallel))
	var wg sync.WaitGroup
	for i, m := range ms {
		env, err := c.env([]string{m.Component})
		if err != nil {
			fmt.Fprintln(os.Stderr, "kverify:", err)
			return 1
		}
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			var schemaEnv string
			if sch != nil {
				schemaEnv = sch.Env(m.ID)
			}
			o := runMutant(root, m, c, env, race, *repeat, *full, shared, schemaEnv)
			outcomes[i] = o
			fmt.Fprintf(os.Stderr, "  %-9s %-36s %s\n", o.result(*repeat), m.ID, o.summary())
		})
	}
	wg.Wait()
	if !*full {
		retrySurvivors(ms, outcomes)
	}

	killComps := comps
	if len(killComps) == 0 {
		// No --component: the checks of every component must kill.
		killComps = subjects.Components()
	}
	rc := matrixRun{ms: ms, outcomes: outcomes, comps: killComps, info: info, prefer: prefer, repeat: *repeat, parallel: *parallel,
		full: *full, selected: *only != "", sharded: sh.n > 1, medianBar: *medianBar, worstBar: *worstBar,
		saveMatrix: *saveMatrix, rep: rep, rf: rf, start: start, race: race, traces: c.traces}.finish()
	if shared != nil {
		shared.Close()
	}
	return rc
}

// matrixRun is a kill matrix's outcomes, from a run or from merged
// shards, with what finish needs to judge and report them.
type matrixRun struct {
	ms       []mutants.Mutant
	outcomes []killOutcome
	comps    []string
	info     map[string]checkkit.Check
	prefer   map[string]string
	repeat   int
	// full: every check ran on every mutant; selected: --mutant chose
	// the mutants; sharded: this is one shard of the catalogue, whose
	// checks are judged only when the shards are merged.
	full, selected, sharded bool
	medianBar, worstBar     time.Duration
	parallel                int
	saveMatrix              string
	rep                     *report
	rf                      reportFlags
	start                   time.Time
	race                    bool
	traces                  string
}

// finish looks for killers of the checks that killed nothing yet, prints
// the kill matrix, applies the bars, saves the matrix and the reports, and
// returns the exit status.
func (r matrixRun) finish() int {
	ms, outcomes, rep := r.ms, r.outcomes, r.rep
	killers := killCounts(r.info, r.comps, ms, outcomes)
	if !r.full && !r.selected && !r.sharded {
		findKillers(ms, outcomes, killers, r.prefer, r.parallel)
	}
	for i := range outcomes {
		if outcomes[i].suite != nil {
			outcomes[i].suite.Close()
		}
		if l := outcomes[i].lazy; l != nil && l.s != nil {
			l.s.Close()
		}
	}
	bad := false
	var allTTK []time.Duration
	var weakKills []string
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "MUTANT\tCOMPONENT\tRESULT\tKILLS\tMEDIAN TTK\tWORST TTK\tKILLED BY\tBUG")
	for i, m := range ms {
		o := outcomes[i]
		mr := mutantReport{ID: m.ID, Component: m.Component, File: m.File, Bug: m.Bug, Result: strings.ToLower(o.result(r.repeat)),
			Kills: len(o.ttks), Runs: o.runs, KilledBy: append([]string{}, o.by...)}
		if o.err != nil {
			mr.Error = o.err.Error()
			rep.Mutants = append(rep.Mutants, mr)
			fmt.Fprintf(tw, "%s\t%s\tBROKEN\t-\t-\t-\t-\t%v\n", m.ID, m.Component, firstLineOf(o.err.Error()))
			fmt.Fprintf(os.Stderr, "kverify: mutant %s: %v\n", m.ID, o.err)
			rep.Problems = append(rep.Problems, fmt.Sprintf("mutant %s is broken: %s", m.ID, firstLineOf(o.err.Error())))
			bad = true
			continue
		}
		if len(o.ttks) > 0 {
			mr.MedianTTK, mr.WorstTTK = median(o.ttks).Seconds(), slices.Max(o.ttks).Seconds()
		}
		for _, t := range o.ttks {
			mr.TTKs = append(mr.TTKs, t.Seconds())
		}
		rep.Mutants = append(rep.Mutants, mr)
		allTTK = append(allTTK, o.ttks...)
		res := o.result(r.repeat)
		switch {
		case res == "FLAKY":
			// A weak kill: some runs survived; the checks that killed it
			// the other times are too weak or too lucky.
			msg := fmt.Sprintf("weak kill: mutant %s survived %d of %d runs; killed the other times by %s", m.ID, o.runs-len(o.ttks), o.runs, strings.Join(o.by, ","))
			weakKills = append(weakKills, msg)
			rep.Problems = append(rep.Problems, msg)
			bad = true
		case res != "killed":
			rep.Problems = append(rep.Problems, fmt.Sprintf("mutant %s %s", m.ID, strings.ToLower(res)))
			bad = true
		}
		med, worst := "-", "-"
		if len(o.ttks) > 0 {
			med, worst = fmtTTK(median(o.ttks)), fmtTTK(slices.Max(o.ttks))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d/%d\t%s\t%s\t%s\t%s\n", m.ID, m.Component, res, len(o.ttks), r.repeat, med, worst, summarize(o.by, 3), m.Bug)
	}
	tw.Flush()
	if len(weakKills) > 0 {
		fmt.Printf("\nweak kills (a check that kills only sometimes is missing something):\n  %s\n", strings.Join(weakKills, "\n  "))
	}
	var weak []string
	for k, n := range killers {
		if n == 0 {
			weak = append(weak, k)
		}
	}
	sort.Strings(weak)
	if len(weak) > 0 && !r.selected && !r.sharded {
		fmt.Printf("\nchecks that killed no mutant (add a mutant or strengthen the check): %s\n", strings.Join(weak, ", "))
		rep.Weak = weak
		rep.Problems = append(rep.Problems, "checks that killed no mutant: "+strings.Join(weak, ", "))
		bad = true
	}
	var slow []string
	for i, m := range ms {
		if o := outcomes[i]; len(o.ttks) > 0 && slices.Max(o.ttks) > r.worstBar {
			slow = append(slow, m.ID)
		}
	}
	if len(slow) > 0 {
		fmt.Printf("\nmutants killed later than %v at least once: %s\n", r.worstBar, strings.Join(slow, ", "))
		rep.Problems = append(rep.Problems, fmt.Sprintf("mutants killed later than %v at least once: %s", r.worstBar, strings.Join(slow, ", ")))
		bad = true
	}
	if len(allTTK) > 0 && median(allTTK) > r.medianBar {
		fmt.Printf("\nthe median time to kill, %s, is over %v\n", fmtTTK(median(allTTK)), r.medianBar)
		rep.Problems = append(rep.Problems, fmt.Sprintf("the median time to kill, %s, is over %v", fmtTTK(median(allTTK)), r.medianBar))
		bad = true
	}
	if len(allTTK) > 0 {
		fmt.Printf("\n%d mutants × %d run(s) in %v (race: %v); time to kill over all kills: median %s, 90th percentile %s, worst %s\n",
			len(ms), r.repeat, time.Since(r.start).Round(time.Second), r.race, fmtTTK(median(allTTK)), fmtTTK(percentile(allTTK, 0.9)), fmtTTK(slices.Max(allTTK)))
	}
	fmt.Printf("traces: %s\n", r.traces)
	if r.saveMatrix != "" {
		if err := writeMatrix(r.saveMatrix, ms, outcomes); err != nil {
			fmt.Fprintln(os.Stderr, "kverify:", err)
			bad = true
		}
	}
	if len(allTTK) > 0 {
		rep.TimeToKill = &ttkReport{Median: median(allTTK).Seconds(), P90: percentile(allTTK, 0.9).Seconds(), Worst: slices.Max(allTTK).Seconds()}
	}
	rep.Passed = !bad
	rep.Seconds = time.Since(r.start).Seconds()
	rep.TraceDir = r.traces
	if !r.rf.save(rep, os.Stderr) || bad {
		return 1
	}
	return 0
}

// readMatrix reads the committed kill matrix.
func readMatrix(root string) (mutants.Matrix, error) {
	f, err := os.Open(filepath.Join(root, mutants.MatrixFile))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m, err := mutants.ReadMatrix(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", mutants.MatrixFile, err)
	}
	return m, nil
}

// coverSample is the mutants --cover runs: Cover's sample of ms from the
// matrix m, and every mutant of ms m does not list (a new mutant is run
// until make mutants records it).
func coverSample(m mutants.Matrix, ms []mutants.Mutant) ([]mutants.Mutant, string) {
	listed := map[string]bool{}
	for _, r := range m {
		listed[r.ID] = true
	}
	pick := map[string]bool{}
	for _, mu := range mutants.Cover(m, ms) {
		pick[mu.ID] = true
	}
	var out []mutants.Mutant
	var unlisted []string
	for _, mu := range ms {
		if !listed[mu.ID] {
			unlisted = append(unlisted, mu.ID)
			pick[mu.ID] = true
		}
		if pick[mu.ID] {
			out = append(out, mu)
		}
	}
	note := fmt.Sprintf("--cover: %d of %d mutants, the %d each check killed fastest in %s", len(out), len(ms), mutants.CoverDepth, mutants.MatrixFile)
	if len(unlisted) > 0 {
		note += fmt.Sprintf(", and %d it does not list yet (%s; make mutants records them)", len(unlisted), strings.Join(unlisted, ", "))
	}
	return out, note
}

// writeMatrix saves a run's kill rows in the kill matrix file. A run of
// part of the catalogue (--component) replaces the rows of the mutants it
// ran and keeps the file's rows of the others that are still catalogued,
// so that kverify mutants --component foo --save-matrix adds foo's rows
// without dropping everyone else's; rows follow the catalogue's order.
func writeMatrix(path string, ms []mutants.Mutant, outcomes []killOutcome) error {
	rows := map[string]mutants.Row{}
	if f, err := os.Open(path); err == nil {
		old, rerr := mutants.ReadMatrix(f)
		f.Close()
		if rerr != nil {
			return fmt.Errorf("%s: %w (the run's rows are not saved)", path, rerr)
		}
		for _, r := range old {
			rows[r.ID] = r
		}
	} else if !os.IsNotExist(err) {
		return err
	}
	for i, mu := range ms {
		o := outcomes[i]
		r := mutants.Row{ID: mu.ID, KilledBy: o.by}
		if len(o.ttks) > 0 {
			r.Worst = slices.Max(o.ttks)
		}
		rows[mu.ID] = r
	}
	var m mutants.Matrix
	for _, mu := range mutants.Catalogue {
		if r, ok := rows[mu.ID]; ok {
			m = append(m, r)
		}
	}
	var b strings.Builder
	if err := mutants.WriteMatrix(&b, m); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// crashMark marks a check that killed a mutant by crashing the test binary
// (a panic in one of the subject's goroutines) rather than by a violation.
const crashMark = "*"

// killOutcome is what the runs of one mutant found.
type killOutcome struct {
	by   []string        // checks seen to kill it
	ttks []time.Duration // time to first kill, one per run that killed it
	runs int
	err  error

	// Without --full: the built suite, kept for findKillers, and how to
	// run it.
	suite  *suite
	run    suiteRun
	wanted map[string]bool
	// lazy builds suite when a search for killers first needs it.
	lazy *lazySuite
}

func (o killOutcome) result(repeat int) string {
	switch {
	case o.err != nil:
		return "BROKEN"
	case len(o.ttks) == 0:
		return "SURVIVED"
	case len(o.ttks) < repeat:
		return "FLAKY"
	}
	return "killed"
}

func (o killOutcome) summary() string {
	if o.err != nil {
		return firstLineOf(o.err.Error())
	}
	if len(o.ttks) == 0 {
		return fmt.Sprintf("0/%d", o.runs)
	}
	return fmt.Sprintf("%d/%d  median %s  worst %s  by %s", len(o.ttks), o.runs, fmtTTK(median(o.ttks)), fmtTTK(slices.Max(o.ttks)), summarize(o.by, 2))
}

func median(ds []time.Duration) time.Duration { return percentile(ds, 0.5) }

func percentile(ds []time.Duration, p float64) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[int(p*float64(len(s)-1)+0.5)]
}

func fmtTTK(d time.Duration) string {
	if d < time.Second {
		return d.Round(time.Millisecond).String()
	}
	return d.Round(10 * time.Millisecond).String()
}

func firstLineOf(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func crashReason(out string) string {
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "panic:") || strings.HasPrefix(l, "goleak:") || strings.HasPrefix(l, "fatal error:") || strings.HasPrefix(l, "WARNING: DATA RACE") {
			return l
		}
	}
	return "test binary failed"
}

// summarize lists the first n checks and counts the rest.
func summarize(checks []string, n int) string {
	if len(checks) <= n {
		return strings.Join(checks, ",")
	}
	return fmt.Sprintf("%s (+%d)", strings.Join(checks[:n], ","), len(checks)-n)
}
