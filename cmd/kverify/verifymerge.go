package main

import (
	"fmt"
	"os"
	"text/tabwriter"
	"time"
)

// resultRank orders results for a merge: the worst of the shards' wins.
var resultRank = map[string]int{"pass": 0, "not-offered": 1, "skip": 2, "divergence": 3, "not-run": 4, "fail": 5}

// mergeVerify joins the --json reports of the shards of one exhaustive run
// (kverify verify --shard K/N) into one: a check's result is the worst any
// shard reported (a failure in one slice is a failure of the search), its
// coverage the sum of the shards' (checkkit.Coverage.Plus; states reached
// before the split or in several slices are counted once per shard), its
// time the sum. It prints every merged check with its coverage and writes
// the report (--json, --markdown). Exit 0 when every check passed, 1 when
// one failed or a shard's report lists a problem, 2 on a report it cannot
// read.
func mergeVerify(files []string, rf reportFlags, args []string) int {
	rep := newReport("verify", args, false, "")
	index := map[string]int{}
	for _, f := range files {
		r, err := readVerifyReport(f)
		if err != nil {
			fmt.Fprintln(os.Stderr, "kverify: --merge:", err)
			return 2
		}
		rep.Race = rep.Race || r.Race
		rep.Problems = append(rep.Problems, r.Problems...)
		for _, c := range r.Checks {
			k := c.Component + "\x00" + c.Subject + "\x00" + c.Check
			i, ok := index[k]
			if !ok {
				index[k] = len(rep.Checks)
				rep.Checks = append(rep.Checks, c)
				continue
			}
			m := &rep.Checks[i]
			if resultRank[c.Result] > resultRank[m.Result] {
				m.Result, m.Reason, m.Broke, m.Message, m.Trace, m.Crashed = c.Result, c.Reason, c.Broke, c.Message, c.Trace, c.Crashed
			}
			m.Seconds += c.Seconds
			if c.Coverage != nil {
				sum := c.Coverage
				if m.Coverage != nil {
					merged := m.Coverage.Plus(*c.Coverage)
					merged.Shard = fmt.Sprintf("%d shards", len(files))
					sum = &merged
				}
				m.Coverage = sum
			}
		}
	}
	rep.Passed = len(rep.Problems) == 0
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "COMPONENT\tSUBJECT\tCHECK\tRESULT\tCOVERAGE")
	for _, c := range rep.Checks {
		if c.Result == "fail" || c.Result == "not-run" {
			rep.Passed = false
		}
		cov := "-"
		if c.Coverage != nil {
			cov = c.Coverage.String()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", c.Component, c.Subject, c.Check, c.Result, cov)
	}
	tw.Flush()
	fmt.Printf("%d reports merged: %d checks\n", len(files), len(rep.Checks))
	rep.Seconds = time.Since(rep.Started).Seconds()
	if !rf.save(rep, os.Stderr) || !rep.Passed {
		return 1
	}
	return 0
}
