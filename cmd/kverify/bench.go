package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// benchstatPkg is the benchstat kverify bench runs, pinned as .ci/run pins
// staticcheck: go run builds it on first use (from the Go module proxy)
// and keeps the binary in the build cache, so nothing has to be installed.
// The Makefile's BENCHSTAT is the same version (TestBenchstatPinned).
const benchstatPkg = "golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da"

// benchstatCmd is the command that runs benchstat with args in dir: bin
// (an installed benchstat, --benchstat) when given, else the pinned one
// through go run.
func benchstatCmd(dir, bin string, args ...string) *exec.Cmd {
	var cmd *exec.Cmd
	if bin != "" {
		cmd = exec.Command(bin, args...)
	} else {
		cmd = exec.Command("go", append([]string{"run", benchstatPkg}, args...)...)
	}
	cmd.Dir = dir
	return cmd
}

// benchUnits are the units whose ratio ours/upstream the summary shows, with
// the names benchstat gives them.
var benchUnits = []struct{ unit, name string }{
	{"ns/op", "sec/op"},
	{"B/op", "B/op"},
	{"allocs/op", "allocs/op"},
}

// bench runs the benchmarks of package subjects, each of which has the
// sub-benchmarks impl=ours and impl=upstream, saves go test's raw output,
// and prints benchstat's comparison of the two (benchstat -col /impl) and
// the ratio ours/upstream of the mean of each unit per benchmark.
//
// benchstat is the pinned version run through go run (benchstatPkg), or
// the one --benchstat names.
//
// Exit status: 0 success, 1 the benchmarks or benchstat failed or benchstat
// could not be built or run, 2 bad usage.
func bench(args []string) int {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	count := fs.Int("count", 6, "runs of each benchmark: rounds of go test -count 1, so that the runs of ours, upstream and the floor interleave in time")
	benchtime := fs.String("benchtime", "200ms", "time (e.g. 200ms) or iterations (e.g. 100x) per run (go test -benchtime)")
	pattern := fs.String("bench", ".", "regexp selecting the benchmarks (go test -bench)")
	out := fs.String("out", "", "file for go test's raw output (default: bench.out in a new temporary directory)")
	jsonOut := fs.String("json", "", "also write the means and the ours/upstream and ours/floor ratios of every benchmark to this file, as JSON")
	readme := fs.String("readme", "", "also rewrite the Markdown table between the "+benchBegin+" and "+benchEnd+" lines of this file (docs/performance.md)")
	from := fs.String("from", "", "read go test's raw output from this file (a saved --out) instead of running the benchmarks")
	benchstatBin := fs.String("benchstat", "", "run this benchstat (a path, or a name on PATH) instead of the pinned "+benchstatPkg+" through go run")
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintln(w, "usage: kverify bench [--count N] [--benchtime D] [--bench REGEXP] [--out FILE] [--json FILE] [--readme FILE] [--from FILE] [--benchstat PATH]")
		fmt.Fprintln(w, "\nRuns the benchmarks of ./subjects (impl=ours and impl=upstream side by side in one run)")
		fmt.Fprintln(w, "and compares them with benchstat -col /impl (go run "+benchstatPkg+",")
		fmt.Fprintln(w, "built on first use and cached; --benchstat runs an installed one instead).\n\nflags:")
		fs.PrintDefaults()
	}
	pos, code, done := parseArgs(fs, args)
	if done {
		return code
	}
	if len(pos) > 0 {
		return usageErr(fs, fmt.Errorf("unexpected arguments %q", pos))
	}
	if *count < 1 {
		return usageErr(fs, fmt.Errorf("--count must be at least 1, got %d", *count))
	}
	if err := benchCheckTime(*benchtime); err != nil {
		return usageErr(fs, err)
	}
	if _, err := regexp.Compile(*pattern); err != nil {
		return usageErr(fs, fmt.Errorf("--bench: %v", err))
	}
	if *pattern == "" {
		return usageErr(fs, fmt.Errorf("--bench must not be empty"))
	}

	root, err := moduleRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, "kverify:", err)
		return 2
	}
	// Build (or find) benchstat first: without it the run would be wasted.
	if err := benchstatReady(root, *benchstatBin); err != nil {
		fmt.Fprintf(os.Stderr, "kverify bench: %v\n", err)
		return 1
	}
	outPath := *out
	if *from != "" {
		outPath = *from
	} else if outPath == "" {
		dir, err := os.MkdirTemp("", "kverify-bench-")
		if err != nil {
			fmt.Fprintln(os.Stderr, "kverify bench:", err)
			return 1
		}
		outPath = filepath.Join(dir, "bench.out")
	}
	if outPath, err = filepath.Abs(outPath); err != nil {
		fmt.Fprintln(os.Stderr, "kverify bench:", err)
		return 1
	}

	var raw []byte
	if *from != "" {
		if raw, err = os.ReadFile(*from); err != nil {
			fmt.Fprintln(os.Stderr, "kverify bench:", err)
			return 1
		}
	} else {
		// Rounds of -count 1 rather than one -count N: go test runs a
		// benchmark's N runs back to back, so a drift of a noisy machine
		// (another tenant, the clock speed) lands on one implementation's
		// runs and shows as a ratio. Interleaved, it spreads over all.
		goArgs := []string{"test", "-run", "^$", "-bench", *pattern, "-benchmem",
			"-count", "1", "-benchtime", *benchtime, "-timeout", "1h", suitePkg}
		for round := 1; round <= *count && err == nil; round++ {
			fmt.Fprintf(os.Stderr, "kverify bench: round %d of %d: go %s (in %s)\n", round, *count, benchQuote(goArgs), root)
			var out []byte
			out, err = benchRunGoTest(root, goArgs, round-1)
			raw = append(raw, out...)
		}
		if werr := os.WriteFile(outPath, raw, 0o644); werr != nil {
			fmt.Fprintln(os.Stderr, "kverify bench:", werr)
			return 1
		}
		fmt.Fprintf(os.Stderr, "kverify bench: raw output saved to %s\n", outPath)
		if err != nil {
			fmt.Fprintf(os.Stderr, "kverify bench: go test failed: %v\n%s", err, benchTail(string(raw), 40))
			return 1
		}
	}
	results := benchParse(raw)
	if len(results.order) == 0 {
		fmt.Fprintf(os.Stderr, "kverify bench: no benchmark matched %q\n", *pattern)
		return 1
	}

	cmd := benchstatCmd(root, *benchstatBin, "-col", "/impl", outPath)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "kverify bench: %s: %v\n%s", benchQuote(cmd.Args), err, stderr.String())
		return 1
	}
	os.Stdout.Write(stdout.Bytes())
	fmt.Println()
	benchSummary(os.Stdout, results, *count, *benchtime)
	if *jsonOut != "" {
		if err := benchWriteJSON(*jsonOut, results, *count, *benchtime); err != nil {
			fmt.Fprintln(os.Stderr, "kverify bench:", err)
			return 1
		}
		fmt.Fprintf(os.Stderr, "kverify bench: ratios written to %s\n", *jsonOut)
	}
	if *readme != "" {
		n, bt := *count, *benchtime
		if *from != "" {
			n, bt = results.runs(), ""
		}
		if err := benchWriteReadme(*readme, results, benchMachine(raw, n, bt)); err != nil {
			fmt.Fprintln(os.Stderr, "kverify bench:", err)
			return 1
		}
		fmt.Fprintf(os.Stderr, "kverify bench: table written to %s\n", *readme)
	}
	return 0
}

// benchReport is what --json writes: per benchmark, the mean of every unit
// per implementation (ours, upstream, floor when the benchmark has one) and
// the ratios of ours to upstream and to the floor (< 1 favours ours).
type benchReport struct {
	GoVersion  string       `json:"go_version"`
	GOOS       string       `json:"goos"`
	GOARCH     string       `json:"goarch"`
	CPUs       int          `json:"cpus"`
	Count      int          `json:"count"`
	Benchtime  string       `json:"benchtime"`
	Benchmarks []benchEntry `json:"benchmarks"`
}

type benchEntry struct {
	Name          string                        `json:"name"`
	Means         map[string]map[string]float64 `json:"means"`
	Runs          map[string]int                `json:"runs"`
	OursOverUp    map[string]float64            `json:"ours_over_upstream,omitempty"`
	OursOverFloor map[string]float64            `json:"ours_over_floor,omitempty"`
}

// benchWriteJSON writes r to path as a benchReport.
func benchWriteJSON(path string, r *benchResults, count int, benchtime string) error {
	rep := benchReport{GoVersion: runtime.Version(), GOOS: runtime.GOOS, GOARCH: runtime.GOARCH,
		CPUs: runtime.NumCPU(), Count: count, Benchtime: benchtime}
	for _, name := range r.order {
		e := benchEntry{Name: name, Means: map[string]map[string]float64{}, Runs: map[string]int{}}
		for impl, units := range r.vals[name] {
			e.Means[impl] = map[string]float64{}
			e.Runs[impl] = len(units["ns/op"])
			for unit, xs := range units {
				if m, ok := benchMean(xs); ok {
					e.Means[impl][unit] = m
				}
			}
		}
		e.OursOverUp = benchRatios(e.Means["ours"], e.Means["upstream"])
		e.OursOverFloor = benchRatios(e.Means["ours"], e.Means["floor"])
		rep.Benchmarks = append(rep.Benchmarks, e)
	}
	data, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// benchRatios is a/b per unit both have, where b is not 0.
func benchRatios(a, b map[string]float64) map[string]float64 {
	if a == nil || b == nil {
		return nil
	}
	out := map[string]float64{}
	for unit, x := range a {
		if y, ok := b[unit]; ok && y != 0 {
			out[unit] = x / y
		}
	}
	return out
}

// benchCheckTime validates a -benchtime value: a positive duration or a
// positive count followed by x.
func benchCheckTime(s string) error {
	if n, ok := strings.CutSuffix(s, "x"); ok {
		if v, err := strconv.Atoi(n); err == nil && v > 0 {
			return nil
		}
		return fmt.Errorf("--benchtime %q: want a positive count like 100x", s)
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return fmt.Errorf("--benchtime %q: want a positive duration like 200ms or a count like 100x", s)
	}
	return nil
}

// benchstatReady runs benchstat -h, so that a benchstat that cannot be
// built (the first go run downloads it) or run fails before the
// benchmarks rather than after them; afterwards go run finds it in the
// build cache.
func benchstatReady(root, bin string) error {
	cmd := benchstatCmd(root, bin, "-h")
	if bin == "" {
		fmt.Fprintf(os.Stderr, "kverify bench: %s (built on first use, then cached)\n", benchQuote(cmd.Args[:len(cmd.Args)-1]))
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		hint := "the first go run downloads it from the Go module proxy; or name an installed benchstat with --benchstat PATH"
		if bin != "" {
			hint = "--benchstat names a benchstat binary; without it kverify bench runs go run " + benchstatPkg
		}
		tail := ""
		if len(bytes.TrimSpace(out)) > 0 {
			tail = benchTail(string(out), 20)
		}
		return fmt.Errorf("benchstat: %s: %v\n%s%s", benchQuote(cmd.Args), err, tail, hint)
	}
	return nil
}

// benchRunGoTest runs go with args in root and returns its combined output.
// Benchmark lines are echoed to stderr as they come, as progress. round
// (from 0) goes to the benchmarks as KVERIFY_BENCH_ROUND: they rotate the
// order of their implementations by it (subjects' inRoundOrder).
func benchRunGoTest(root string, args []string, round int) ([]byte, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "KVERIFY_BENCH_ROUND="+strconv.Itoa(round))
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	var raw bytes.Buffer
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		for sc.Scan() {
			raw.Write(sc.Bytes())
			raw.WriteByte('\n')
			if strings.HasPrefix(sc.Text(), "Benchmark") {
				fmt.Fprintln(os.Stderr, "  "+sc.Text())
			}
		}
		io.Copy(io.Discard, pr) // a line over the limit: keep the pipe flowing
	}()
	err := cmd.Wait()
	pw.Close()
	<-copied
	return raw.Bytes(), err
}

// benchResults holds the measurements of a go test -bench output: for each
// benchmark (its name without the impl=... element and the -GOMAXPROCS
// suffix) and implementation, the values of each unit, one per run.
type benchResults struct {
	order []string // benchmark names, in order of first appearance
	vals  map[string]map[string]map[string][]float64
}

// runs returns the most runs of any implementation of any benchmark.
func (r *benchResults) runs() int {
	n := 0
	for _, byImpl := range r.vals {
		for _, units := range byImpl {
			n = max(n, len(units["ns/op"]))
		}
	}
	return n
}

// benchProcs matches the -GOMAXPROCS suffix of a benchmark name.
var benchProcs = regexp.MustCompile(`-\d+$`)

// benchParse reads the benchmark result lines of go test's output:
// "BenchmarkName-P  N  v1 unit1  v2 unit2 ...".
func benchParse(raw []byte) *benchResults {
	r := &benchResults{vals: map[string]map[string]map[string][]float64{}}
	for _, line := range strings.Split(string(raw), "\n") {
		f := strings.Fields(line)
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") || len(f)%2 != 0 {
			continue
		}
		if _, err := strconv.ParseInt(f[1], 10, 64); err != nil {
			continue
		}
		name, impl := benchSplitImpl(strings.TrimPrefix(benchProcs.ReplaceAllString(f[0], ""), "Benchmark"))
		if impl == "" {
			continue
		}
		byImpl, ok := r.vals[name]
		if !ok {
			byImpl = map[string]map[string][]float64{}
			r.vals[name] = byImpl
			r.order = append(r.order, name)
		}
		if byImpl[impl] == nil {
			byImpl[impl] = map[string][]float64{}
		}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				continue
			}
			byImpl[impl][f[i+1]] = append(byImpl[impl][f[i+1]], v)
		}
	}
	return r
}

// benchSplitImpl removes the impl=X element from a benchmark name and
// returns the rest and X ("" if there is none).
func benchSplitImpl(name string) (rest, impl string) {
	parts := strings.Split(name, "/")
	kept := parts[:0]
	for _, p := range parts {
		if v, ok := strings.CutPrefix(p, "impl="); ok && impl == "" {
			impl = v
			continue
		}
		kept = append(kept, p)
	}
	return strings.Join(kept, "/"), impl
}

func benchMean(xs []float64) (float64, bool) {
	if len(xs) == 0 {
		return 0, false
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs)), true
}

// benchRatio formats mean(ours)/mean(upstream).
func benchRatio(ours, up []float64) string {
	o, ok1 := benchMean(ours)
	u, ok2 := benchMean(up)
	switch {
	case !ok1 || !ok2:
		return "-"
	case u == 0 && o == 0:
		return "1.00x (0 vs 0)"
	case u == 0:
		return fmt.Sprintf("+Inf (%.4g vs 0)", o)
	}
	r := o / u
	if math.IsNaN(r) {
		return "-"
	}
	return fmt.Sprintf("%.2fx", r)
}

// benchSummary prints the ratio ours/upstream of the mean of each unit.
func benchSummary(w io.Writer, r *benchResults, count int, benchtime string) {
	fmt.Fprintf(w, "ratio ours/upstream (mean of each sub-benchmark; count=%d, benchtime=%s; < 1 is better for ours):\n", count, benchtime)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "benchmark")
	for _, u := range benchUnits {
		fmt.Fprintf(tw, "\t%s", u.name)
	}
	fmt.Fprintln(tw, "\truns (ours/upstream)")
	for _, name := range r.order {
		byImpl := r.vals[name]
		ours, up := byImpl["ours"], byImpl["upstream"]
		fmt.Fprint(tw, name)
		for _, u := range benchUnits {
			fmt.Fprintf(tw, "\t%s", benchRatio(ours[u.unit], up[u.unit]))
		}
		fmt.Fprintf(tw, "\t%d/%d\n", len(ours["ns/op"]), len(up["ns/op"]))
	}
	tw.Flush()
	floors := false
	for _, name := range r.order {
		floors = floors || r.vals[name]["floor"] != nil
	}
	if !floors {
		return
	}
	fmt.Fprintf(w, "\nratio ours/floor (the least work that could do the job, impl=floor; > 1 is what ours costs above it):\n")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "benchmark")
	for _, u := range benchUnits {
		fmt.Fprintf(tw, "\t%s", u.name)
	}
	fmt.Fprintln(tw)
	for _, name := range r.order {
		byImpl := r.vals[name]
		if byImpl["floor"] == nil {
			continue
		}
		fmt.Fprint(tw, name)
		for _, u := range benchUnits {
			fmt.Fprintf(tw, "\t%s", benchRatio(byImpl["ours"][u.unit], byImpl["floor"][u.unit]))
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
}

// benchQuote renders args for display, quoting those a shell would split.
func benchQuote(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \t$^*?[]|&;<>()'\"\\") {
			q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		} else {
			q[i] = a
		}
	}
	return strings.Join(q, " ")
}

// benchTail returns the last n lines of s.
func benchTail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n") + "\n"
}
