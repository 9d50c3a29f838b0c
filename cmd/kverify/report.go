package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"runtime"
	"strings"
	"time"

	"github.com/kverify/kverify/props/checkkit"
)

// ReportVersion names the report format; report.schema.json (next to
// this file) documents it, and a change that breaks a reader bumps it.
const ReportVersion = "kverify-report/v1"

// report is what --json writes: every check's result, or every mutant's,
// with what a CI page or a script needs to act on it.
type report struct {
	Format     string         `json:"format"`
	Command    string         `json:"command"`
	Args       []string       `json:"args"`
	Started    time.Time      `json:"started"`
	Seconds    float64        `json:"seconds"`
	Go         string         `json:"go"`
	Race       bool           `json:"race"`
	TraceDir   string         `json:"trace_dir"`
	Passed     bool           `json:"passed"`
	Problems   []string       `json:"problems"`
	Checks     []checkReport  `json:"checks"`
	Mutants    []mutantReport `json:"mutants"`
	Weak       []string       `json:"weak_checks"`
	TimeToKill *ttkReport     `json:"time_to_kill,omitempty"`
}

// checkReport is one check's result for one subject.
type checkReport struct {
	Component string `json:"component"`
	Subject   string `json:"subject"`
	Check     string `json:"check"`
	Family    string `json:"family"`
	Guarantee string `json:"guarantee"`
	// Result is pass, fail, divergence (a declared one, observed),
	// not-offered (the subject cannot take part), skip, or not-run (a
	// check that never got a result, after a crash).
	Result  string  `json:"result"`
	Seconds float64 `json:"seconds"`
	// Reason is the declared divergence's reason, or why the check is not
	// offered.
	Reason string `json:"reason,omitempty"`
	// Broke is the guarantee a failure names ("broke X: ...").
	Broke string `json:"broke,omitempty"`
	// Message is the end of the check's output when it failed or
	// diverged.
	Message string `json:"message,omitempty"`
	// Trace is the saved counterexample, if any.
	Trace string `json:"trace,omitempty"`
	// Crashed says the test binary died during the check.
	Crashed bool `json:"crashed,omitempty"`
	// Coverage is what the check explored, when it reports it (the
	// exhaustive checks: states, transitions, the bound).
	Coverage *checkkit.Coverage `json:"coverage,omitempty"`
}

// mutantReport is one mutant's row of the kill matrix.
type mutantReport struct {
	ID        string  `json:"id"`
	Component string  `json:"component"`
	File      string  `json:"file"`
	Bug       string  `json:"bug"`
	Result    string  `json:"result"` // killed, survived, flaky, broken
	Kills     int     `json:"kills"`
	Runs      int     `json:"runs"`
	MedianTTK float64 `json:"median_ttk_seconds,omitempty"`
	WorstTTK  float64 `json:"worst_ttk_seconds,omitempty"`
	// TTKs are every run's time to kill, so that shards' reports merge
	// into the same medians as one run.
	TTKs     []float64 `json:"ttks_seconds,omitempty"`
	KilledBy []string  `json:"killed_by"`
	Error    string    `json:"error,omitempty"`
}

// ttkReport summarises the times to kill over every kill of a matrix.
type ttkReport struct {
	Median float64 `json:"median_seconds"`
	P90    float64 `json:"p90_seconds"`
	Worst  float64 `json:"worst_seconds"`
}

func newReport(command string, args []string, race bool, traces string) *report {
	return &report{Format: ReportVersion, Command: command, Args: append([]string{}, args...),
		Started: time.Now().UTC(), Go: runtime.Version(), Race: race, TraceDir: traces,
		Problems: []string{}, Checks: []checkReport{}, Mutants: []mutantReport{}, Weak: []string{}}
}

var (
	brokeRe  = regexp.MustCompile(`broke ([^:\n]+):`)
	traceRe  = regexp.MustCompile(`(?m)(?:saved|trace): (\S+\.json)`)
	reasonRe = regexp.MustCompile(`(?m)reason: (.*)$`)
)

// checkFrom turns a suite result into its report.
func checkFrom(r *result, info map[string]checkkit.Check) checkReport {
	c := info[r.Component+"/"+r.Check]
	fam := c.Family
	if r.Family != "" {
		fam = r.Family
	}
	out := r.Output.String()
	cr := checkReport{Component: r.Component, Subject: r.Subject, Check: r.Check, Family: fam,
		Guarantee: c.Guarantee, Result: r.Status, Seconds: r.Elapsed.Seconds(), Crashed: r.Crashed}
	if cr.Result == "" {
		cr.Result = "not-run"
	}
	if cov, ok := checkkit.ParseCoverage(out); ok {
		cr.Coverage = &cov
	}
	switch cr.Result {
	case "divergence":
		if m := reasonRe.FindStringSubmatch(out); m != nil {
			cr.Reason = strings.TrimSpace(m[1])
		}
		cr.Message = strings.TrimSpace(divergenceText(out))
	case "not-offered":
		if _, after, ok := strings.Cut(out, checkkit.NotOfferedPrefix+": "); ok {
			cr.Reason = strings.TrimSpace(firstLineOf(after))
		}
	case "fail":
		cr.Message = strings.TrimSpace(tail(out, 60))
	}
	if cr.Result == "fail" || cr.Result == "divergence" {
		if m := brokeRe.FindStringSubmatch(out); m != nil {
			cr.Broke = m[1]
		}
		if m := traceRe.FindStringSubmatch(out); m != nil {
			cr.Trace = m[1]
		}
	}
	return cr
}

// write saves the report as JSON (path "-" is standard output).
func (r *report) write(path string) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return writeOut(path, append(data, '\n'))
}

// writeMarkdown saves a summary for a CI page: the verdict, one row per
// component and subject, then every failure and declared divergence.
func (r *report) writeMarkdown(path string) error {
	var b strings.Builder
	verdict := "passed"
	if !r.Passed {
		verdict = "FAILED"
	}
	fmt.Fprintf(&b, "## kverify %s: %s\n\n", r.Command, verdict)
	fmt.Fprintf(&b, "%s, race detector %v, %.0f s. Traces: `%s`.\n\n", r.Go, r.Race, r.Seconds, r.TraceDir)
	for _, p := range r.Problems {
		fmt.Fprintf(&b, "- **%s**\n", mdEscape(p))
	}
	if len(r.Problems) > 0 {
		b.WriteString("\n")
	}
	if len(r.Checks) > 0 {
		type key struct{ comp, subj string }
		var keys []key
		rows := map[key]map[string]int{}
		for _, c := range r.Checks {
			k := key{c.Component, c.Subject}
			if rows[k] == nil {
				rows[k] = map[string]int{}
				keys = append(keys, k)
			}
			rows[k][c.Result]++
		}
		b.WriteString("| component | subject | pass | fail | divergence | not offered | other |\n|---|---|---:|---:|---:|---:|---:|\n")
		for _, k := range keys {
			n := rows[k]
			other := 0
			for res, c := range n {
				switch res {
				case "pass", "fail", "divergence", "not-offered":
				default:
					other += c
				}
			}
			fmt.Fprintf(&b, "| %s | %s | %d | %d | %d | %d | %d |\n", k.comp, k.subj, n["pass"], n["fail"], n["divergence"], n["not-offered"], other)
		}
		for _, c := range r.Checks {
			switch c.Result {
			case "fail", "not-run":
				fmt.Fprintf(&b, "\n### FAIL %s/%s (%s)\n\n", c.Component, c.Check, c.Subject)
				if c.Broke != "" {
					fmt.Fprintf(&b, "Broke **%s**: %s\n\n", mdEscape(c.Broke), mdEscape(c.Guarantee))
				}
				if c.Trace != "" {
					fmt.Fprintf(&b, "Counterexample: `%s` (replay: `kverify replay %s`)\n\n", c.Trace, c.Trace)
				}
				fmt.Fprintf(&b, "```\n%s\n```\n", tail(c.Message, 30))
			case "divergence":
				fmt.Fprintf(&b, "\n### declared divergence %s/%s (%s)\n\n%s\n", c.Component, c.Check, c.Subject, mdEscape(c.Reason))
			}
		}
	}
	if len(r.Mutants) > 0 {
		counts := map[string]int{}
		for _, m := range r.Mutants {
			counts[m.Result]++
		}
		fmt.Fprintf(&b, "%d mutants: %d killed, %d survived, %d flaky, %d broken.", len(r.Mutants), counts["killed"], counts["survived"], counts["flaky"], counts["broken"])
		if r.TimeToKill != nil {
			fmt.Fprintf(&b, " Time to kill: median %.2f s, 90th percentile %.2f s, worst %.2f s.", r.TimeToKill.Median, r.TimeToKill.P90, r.TimeToKill.Worst)
		}
		b.WriteString("\n\n| mutant | component | result | killed by | worst time to kill |\n|---|---|---|---|---:|\n")
		for _, m := range r.Mutants {
			res := m.Result
			if res != "killed" {
				res = "**" + res + "**"
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %.2f s |\n", m.ID, m.Component, res, strings.Join(m.KilledBy, ", "), m.WorstTTK)
		}
		if len(r.Weak) > 0 {
			fmt.Fprintf(&b, "\nChecks that killed no mutant: %s\n", strings.Join(r.Weak, ", "))
		}
	}
	return writeOut(path, []byte(b.String()))
}

func mdEscape(s string) string { return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s) }

func writeOut(path string, data []byte) error {
	if path == "-" {
		_, err := os.Stdout.Write(data)
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// reportFlags are the report outputs every gate command takes.
type reportFlags struct {
	json, markdown string
}

func (f *reportFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.json, "json", "", "write a machine-readable report to this file (format "+ReportVersion+", schema: cmd/kverify/report.schema.json; - for stdout)")
	fs.StringVar(&f.markdown, "markdown", "", "write a Markdown summary (for a CI page) to this file")
}

// save writes the asked-for reports; a failure to write one is a problem
// the exit status reports.
func (f reportFlags) save(r *report, w io.Writer) bool {
	ok := true
	if f.json != "" {
		if err := r.write(f.json); err != nil {
			fmt.Fprintf(w, "kverify: writing the JSON report: %v\n", err)
			ok = false
		}
	}
	if f.markdown != "" {
		if err := r.writeMarkdown(f.markdown); err != nil {
			fmt.Fprintf(w, "kverify: writing the Markdown summary: %v\n", err)
			ok = false
		}
	}
	return ok
}
