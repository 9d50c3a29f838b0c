// Command gremlins turns go-gremlins' JSON report on impl/ into
// mutants/gremlins.md: the score, and every gremlin the suite did not
// kill, with its source line and the explanation mutants/gremlins.tsv
// gives for it. It exits 1 when a survivor has no explanation, so that
// make gremlins fails until each one is killed by a new check or
// explained.
//
//	go run ./mutants/cmd/gremlins -report gremlins.json -explained mutants/gremlins.tsv -out mutants/gremlins.md
//
// An explanation is keyed by file, mutation type and the mutated line's
// text (trimmed), not by line number, so that it survives edits elsewhere
// in the file.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// report is the part of go-gremlins' --output JSON this command reads.
type report struct {
	Module        string  `json:"go_module"`
	Efficacy      float64 `json:"test_efficacy"`
	Coverage      float64 `json:"mutations_coverage"`
	ElapsedSecond float64 `json:"elapsed_time"`
	Files         []struct {
		Name      string `json:"file_name"`
		Mutations []struct {
			Line   int    `json:"line"`
			Column int    `json:"column"`
			Type   string `json:"type"`
			Status string `json:"status"`
		} `json:"mutations"`
	} `json:"files"`
}

// survivor is a gremlin the suite did not kill.
type survivor struct {
	file, typ, status, text string
	line, col               int
}

func (s survivor) key() string { return s.file + "\t" + s.typ + "\t" + s.text }

func main() {
	in := flag.String("report", "", "go-gremlins' JSON report (--output)")
	explained := flag.String("explained", "mutants/gremlins.tsv", "explanations: file, type, line text, why (tab-separated)")
	out := flag.String("out", "mutants/gremlins.md", "the Markdown table to write")
	src := flag.String("src", "impl", "the directory the report's file names are relative to")
	flag.Parse()
	if err := run(*in, *explained, *out, *src); err != nil {
		fmt.Fprintln(os.Stderr, "gremlins:", err)
		os.Exit(1)
	}
}

func run(in, explainedPath, out, src string) error {
	if in == "" {
		return fmt.Errorf("-report is required")
	}
	data, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	var r report
	if err := json.Unmarshal(data, &r); err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	why, err := readExplained(explainedPath)
	if err != nil {
		return err
	}
	var survivors []survivor
	for _, f := range r.Files {
		lines, err := readLines(filepath.Join(src, f.Name))
		if err != nil {
			return err
		}
		for _, m := range f.Mutations {
			if m.Status == "KILLED" || m.Status == "NOT VIABLE" {
				continue
			}
			text := ""
			if m.Line >= 1 && m.Line <= len(lines) {
				text = strings.TrimSpace(lines[m.Line-1])
			}
			survivors = append(survivors, survivor{file: f.Name, typ: m.Type, status: m.Status, text: text, line: m.Line, col: m.Column})
		}
	}
	sort.Slice(survivors, func(i, j int) bool {
		a, b := survivors[i], survivors[j]
		if a.file != b.file {
			return a.file < b.file
		}
		if a.line != b.line {
			return a.line < b.line
		}
		return a.col < b.col
	})
	w, err := os.Create(out)
	if err != nil {
		return err
	}
	defer w.Close()
	var missing []survivor
	write(w, r, survivors, why, &missing)
	if len(missing) > 0 {
		var b strings.Builder
		for _, s := range missing {
			fmt.Fprintf(&b, "\n%s:%d:%d %s %s\t(add to %s: %q)", s.file, s.line, s.col, s.status, s.typ, explainedPath, s.key()+"\t<why>")
		}
		return fmt.Errorf("%d surviving gremlins are neither killed nor explained:%s", len(missing), b.String())
	}
	return nil
}

func write(w io.Writer, r report, survivors []survivor, why map[string]string, missing *[]survivor) {
	fmt.Fprintf(w, "# go-gremlins on impl/\n\n")
	fmt.Fprintf(w, "Written by `make gremlins` (go-gremlins v0.6.0, each package's gremlins judged by the conformance checks of the components built on it: `impl/*/gremlins_test.go`); do not edit. Explanations live in `mutants/gremlins.tsv`.\n\n")
	// Counted from the mutations: go-gremlins' mutants_total leaves out
	// the ones it did not run.
	count := map[string]int{}
	all := 0
	for _, f := range r.Files {
		for _, m := range f.Mutations {
			count[m.Status]++
			all++
		}
	}
	fmt.Fprintf(w, "| gremlins | killed | lived | not covered (not run) | timed out | not viable | test efficacy | mutator coverage |\n|---|---|---|---|---|---|---|---|\n")
	fmt.Fprintf(w, "| %d | %d | %d | %d | %d | %d | %.2f %% | %.2f %% |\n\n", all, count["KILLED"], count["LIVED"], count["NOT COVERED"], count["TIMED OUT"], count["NOT VIABLE"], r.Efficacy, r.Coverage)
	fmt.Fprintf(w, "Test efficacy is killed / (killed + lived); mutator coverage is (killed + lived) / (killed + lived + not covered). The run took %.0f s.\n\n", r.ElapsedSecond)
	fmt.Fprintf(w, "## Every gremlin not killed\n\n| where | status | mutation | line | why it is not killed |\n|---|---|---|---|---|\n")
	for _, s := range survivors {
		reason, ok := why[s.key()]
		if !ok {
			*missing = append(*missing, s)
			reason = "**not explained**"
		}
		fmt.Fprintf(w, "| `%s:%d:%d` | %s | %s | `%s` | %s |\n", s.file, s.line, s.col, s.status, s.typ, strings.ReplaceAll(s.text, "|", `\|`), reason)
	}
}

func readExplained(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	why := map[string]string{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		parts := strings.Split(line, "\t")
		if len(parts) != 4 || parts[3] == "" {
			return nil, fmt.Errorf("%s:%d: want file, type, line text and why, tab-separated", path, n)
		}
		why[strings.Join(parts[:3], "\t")] = parts[3]
	}
	return why, sc.Err()
}

func readLines(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return strings.Split(string(data), "\n"), nil
}
