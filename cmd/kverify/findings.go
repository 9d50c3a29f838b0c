package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/kverify/kverify/traces/findings"
)

// findingsCmd lists the upstream-ready findings (traces/findings) with
// their status on every release of the behaviour matrix and their upstream
// reports and fixes, or prints one (or all) as an upstream issue's body
// with every upstream reference it cites.
func findingsCmd(args []string) int {
	fs := flag.NewFlagSet("findings", flag.ContinueOnError)
	report := fs.String("report", "", "print the finding with this id as an upstream issue's body (Markdown), with its upstream references and their recorded state (traces/findings/references.tsv); all: every finding (of --subject)")
	subject := fs.String("subject", "", "only the findings of this subject (client-go, controller-runtime, client-node, fluent)")
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
		if err := writeReports(os.Stdout, fds, *report, *subject); err != nil {
			return usageErr(fs, err)
		}
		return 0
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
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", f.Subject, f.ID, f.Module, f.First, orAll(f.Releases), per.String(), upstreamSummary(f))
	}
	tw.Flush()
	if len(rep.Releases) > 0 {
		var rs []string
		for _, rr := range rep.Releases {
			rs = append(rs, rr.Release)
		}
		fmt.Printf("\nper release: ● has it, ○ not, - the API is absent; releases %s (docs/matrix.md)\n", strings.Join(rs, " "))
	}
	fmt.Println("UPSTREAM: the reports and fixes each cites, with their recorded state (traces/findings/references.tsv)")
	fmt.Println("kverify findings --report ID (or all) prints one as an upstream issue with every reference; each reproducer is traces/findings/<subject>/<id>/main.go (repro.mjs for the JavaScript clients, repro.py for kubectl and the Python client)")
	return 0
}

// writeReports writes the finding id's report, or with id "all" every
// finding's (of subject, when given), separated by rules.
func writeReports(w io.Writer, fds []findings.Finding, id, subject string) error {
	n := 0
	for _, f := range fds {
		if (id != "all" && f.ID != id) || (subject != "" && f.Subject != subject) {
			continue
		}
		if n > 0 {
			fmt.Fprint(w, "\n---\n\n")
		}
		fmt.Fprint(w, f.Report())
		n++
	}
	if n == 0 {
		if id == "all" {
			return fmt.Errorf("no finding of subject %q", subject)
		}
		return fmt.Errorf("no finding %q", id)
	}
	return nil
}

// upstreamSummary is a finding's upstream reports and fixes with their
// recorded state, or "none" and how many related changes it cites.
func upstreamSummary(f findings.Finding) string {
	var parts []string
	related := 0
	for _, r := range f.References {
		switch r.Role {
		case "report", "fix":
			parts = append(parts, fmt.Sprintf("%s %s (%s, %s)", r.Short(), r.Role, r.Kind, r.State))
		default:
			related++
		}
	}
	if len(parts) == 0 {
		parts = append(parts, "none")
	}
	if related > 0 {
		parts = append(parts, fmt.Sprintf("%d related", related))
	}
	return strings.Join(parts, ", ")
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
