package main

import (
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/kverify/kverify/mutants"
)

// mutantsCmd prints the kill matrix: for every catalogued mutant of the
// chosen components, which checks kill it and how long the suite ran
// before the first kill. It fails if a mutant survives, if a mutant does
// not build, or if a check of those components kills no mutant (a check
// that cannot fail is a defect).
func mutantsCmd(args []string) int {
	fs := flag.NewFlagSet("mutants", flag.ContinueOnError)
	var c commonFlags
	c.register(fs)
	list := fs.Bool("list", false, "only list the catalogue")
	parallel := fs.Int("parallel", 2, "mutants built and run at once")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		return usageErr(fs, fmt.Errorf("unexpected arguments %q", fs.Args()))
	}
	comps, err := c.componentList()
	if err != nil {
		return usageErr(fs, err)
	}
	ms := mutants.For(comps...)
	if *list {
		tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "MUTANT\tCOMPONENT\tFILE\tBUG")
		for _, m := range ms {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", m.ID, m.Component, m.File, m.Bug)
		}
		tw.Flush()
		return 0
	}
	root, err := moduleRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, "kverify:", err)
		return 2
	}
	info := checkInfo()
	killers := map[string]int{} // component/check -> mutants killed
	for key := range info {
		if contains(comps, strings.SplitN(key, "/", 2)[0]) {
			killers[key] = 0
		}
	}
	// Each mutant builds its own test binary: run a few at a time.
	type outcome struct {
		run *goTestRun
		err error
	}
	outcomes := make([]outcome, len(ms))
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
			run, err := runSubject(root, "mutant:"+m.ID, c, env, len(info))
			outcomes[i] = outcome{run, err}
			fmt.Fprintf(os.Stderr, "  done %s\n", m.ID)
		})
	}
	wg.Wait()
	bad := false
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "MUTANT\tCOMPONENT\tRESULT\tTIME TO KILL\tKILLED BY\tBUG")
	for i, m := range ms {
		run, err := outcomes[i].run, outcomes[i].err
		if err != nil {
			fmt.Fprintf(tw, "%s\t%s\tBROKEN\t-\t-\t%v\n", m.ID, m.Component, firstLineOf(err.Error()))
			fmt.Fprintf(os.Stderr, "kverify: mutant %s: %v\n", m.ID, err)
			bad = true
			continue
		}
		var by []string
		var first time.Time
		for _, r := range leafResults(run, info) {
			if r.Status != "fail" {
				continue
			}
			by = append(by, r.Check)
			killers[r.Component+"/"+r.Check]++
			if first.IsZero() || r.End.Before(first) {
				first = r.End
			}
		}
		if len(by) == 0 && run.exitErr != nil {
			// The test binary died (panic, timeout, leak at exit) before a
			// check could report: killed, but by no check in particular.
			fmt.Fprintf(tw, "%s\t%s\tkilled\t%v\t(crash: %s)\t%s\n", m.ID, m.Component, "-", crashReason(run.output.String()), m.Bug)
			continue
		}
		if len(by) == 0 {
			fmt.Fprintf(tw, "%s\t%s\tSURVIVED\t-\t-\t%s\n", m.ID, m.Component, m.Bug)
			bad = true
			continue
		}
		ttk := first.Sub(run.start).Round(time.Millisecond)
		fmt.Fprintf(tw, "%s\t%s\tkilled\t%v\t%s\t%s\n", m.ID, m.Component, ttk, summarize(by, 3), m.Bug)
	}
	tw.Flush()
	var weak []string
	for k, n := range killers {
		if n == 0 {
			weak = append(weak, k)
		}
	}
	sort.Strings(weak)
	if len(weak) > 0 {
		fmt.Printf("\nchecks that killed no mutant (add a mutant or strengthen the check): %s\n", strings.Join(weak, ", "))
		bad = true
	}
	fmt.Printf("\n%d mutants, traces: %s\n", len(ms), c.traces)
	if bad {
		return 1
	}
	return 0
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
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
		if strings.HasPrefix(l, "panic:") || strings.HasPrefix(l, "goleak:") || strings.HasPrefix(l, "fatal error:") {
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
