package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/kverify/kverify/traces/findings"
)

// findingsCmd lists the upstream-ready findings (traces/findings) with
// their status on every release of the behaviour matrix, or prints one as
// an upstream issue's body.
func findingsCmd(args []string) int {
	fs := flag.NewFlagSet("findings", flag.ContinueOnError)
	report := fs.String("report", "", "print the finding with this id as an upstream issue's body (Markdown)")
	subject := fs.String("subject", "", "only the findings of this subject (client-go, controller-runtime)")
	pos, code, done := parseArgs(fs, args)
	if done {
		return code
	}
	if len(pos) > 0 {
		return usageErr(fs, fmt.Errorf("unexpected arguments %q", pos))
	}
	root, err := moduleRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, "kverify:", err)
		return 2
	}
	fds, err := findings.Load(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "kverify:", err)
		return 1
	}
	if *report != "" {
		for _, f := range fds {
			if f.ID == *report {
				fmt.Print(f.Report())
				return 0
			}
		}
		return usageErr(fs, fmt.Errorf("no finding %q", *report))
	}
	var rep matrixReport
	if b, err := os.ReadFile(filepath.Join(root, "docs", "matrix.json")); err == nil {
		if err := json.Unmarshal(b, &rep); err != nil {
			fmt.Fprintln(os.Stderr, "kverify: docs/matrix.json:", err)
			return 1
		}
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SUBJECT\tFINDING\tMODULE\tFIRST\tRELEASES\tPER RELEASE (matrix)\tUPSTREAM")
	for _, f := range fds {
		if *subject != "" && f.Subject != *subject {
			continue
		}
		var per strings.Builder
		for _, rr := range rep.Releases {
			if run, ok := rr.Findings[f.ID]; ok {
				per.WriteString(map[string]string{"present": "●", "absent": "○", "no-api": "-", "error": "E"}[run.Status])
			}
		}
		if per.Len() == 0 {
			per.WriteString("(pinned only)")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", f.Subject, f.ID, f.Module, f.First, orAll(f.Releases), per.String(), firstWords(f.Upstream, 60))
	}
	tw.Flush()
	if len(rep.Releases) > 0 {
		var rs []string
		for _, rr := range rep.Releases {
			rs = append(rs, rr.Release)
		}
		fmt.Printf("\nper release: ● has it, ○ not, - the API is absent; releases %s (docs/matrix.md)\n", strings.Join(rs, " "))
	}
	fmt.Println("kverify findings --report ID prints one as an upstream issue; each reproducer is traces/findings/<subject>/<id>/main.go (repro.mjs for the JavaScript clients)")
	return 0
}

func orAll(r string) string {
	if r == "" {
		return "all"
	}
	return r
}

func firstWords(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
