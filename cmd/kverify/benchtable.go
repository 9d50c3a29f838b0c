package main

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"
)

// The lines between which kverify bench --readme writes its table.
const (
	benchBegin = "<!-- kverify bench: begin -->"
	benchEnd   = "<!-- kverify bench: end -->"
)

// benchMemUnits are the custom memory metrics the table shows as ratios,
// with short names.
var benchMemUnits = []struct{ unit, name string }{
	{"peak-heap-MB", "peak"},
	{"backlog-MB", "backlog"},
	{"retained-heap-MB", "retained"},
	{"held-MB", "held"},
	{"peak-MB", "peak"},
}

// benchMachine describes where and how the results were measured: the CPU
// (go test's "cpu:" line, else the architecture), the cores, the Go
// version, the date and the run's settings (benchtime "": results read
// with --from, whose benchtime is unknown).
func benchMachine(raw []byte, count int, benchtime string) string {
	cpu := ""
	for line := range strings.Lines(string(raw)) {
		if v, ok := strings.CutPrefix(line, "cpu: "); ok {
			cpu = strings.TrimSpace(v)
			break
		}
	}
	if cpu == "" {
		cpu = runtime.GOARCH
	}
	how := fmt.Sprintf("`kverify bench --count %d --benchtime %s`", count, benchtime)
	if benchtime == "" {
		how = fmt.Sprintf("%d runs of each benchmark", count)
	}
	return fmt.Sprintf("%s, %d cores, %s %s/%s, %s; %s",
		cpu, runtime.NumCPU(), runtime.Version(), runtime.GOOS, runtime.GOARCH,
		time.Now().UTC().Format("2006-01-02"), how)
}

// benchTable renders r as a Markdown table: per benchmark, time as ours
// over upstream and over the floor, B/op and allocs/op of ours and
// upstream, and the memory metrics as ratios ours/upstream.
func benchTable(r *benchResults, machine string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Measured on %s. Ratios are means, ours over the other (< 1 favours ours); the floor is the least work that could do the job (`impl=floor`), so ours/floor is what ours costs above it.\n\n", machine)
	b.WriteString("| benchmark | time ours/upstream | time ours/floor | B/op ours | B/op upstream | allocs/op ours | allocs/op upstream | memory ours/upstream |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	for _, name := range r.order {
		byImpl := r.vals[name]
		ours, up, floor := byImpl["ours"], byImpl["upstream"], byImpl["floor"]
		var mem []string
		for _, u := range benchMemUnits {
			if ours[u.unit] != nil && up[u.unit] != nil {
				mem = append(mem, u.name+" "+benchRatio(ours[u.unit], up[u.unit]))
			}
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", name,
			benchRatio(ours["ns/op"], up["ns/op"]), benchRatio(ours["ns/op"], floor["ns/op"]),
			benchBytes(ours["B/op"]), benchBytes(up["B/op"]), benchCount(ours["allocs/op"]), benchCount(up["allocs/op"]),
			strings.Join(mem, ", "))
	}
	return b.String()
}

// benchCount formats the mean of xs as a whole number, or "-".
func benchCount(xs []float64) string {
	m, ok := benchMean(xs)
	if !ok {
		return "-"
	}
	digits := fmt.Sprintf("%.0f", m)
	var b strings.Builder
	for i, c := range digits {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// benchBytes formats the mean of xs as a size in bytes, or "-".
func benchBytes(xs []float64) string {
	m, ok := benchMean(xs)
	switch {
	case !ok:
		return "-"
	case m >= 1<<20:
		return fmt.Sprintf("%.1f MiB", m/(1<<20))
	case m >= 10<<10:
		return fmt.Sprintf("%.0f KiB", m/(1<<10))
	case m >= 100:
		return fmt.Sprintf("%.0f", m)
	}
	return fmt.Sprintf("%.0f", m)
}

// benchWriteReadme replaces the lines between benchBegin and benchEnd in
// the file at path with the table of r.
func benchWriteReadme(path string, r *benchResults, machine string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	i := bytes.Index(data, []byte(benchBegin+"\n"))
	j := bytes.Index(data, []byte(benchEnd))
	if i < 0 || j < i {
		return fmt.Errorf("%s: no %q line followed by a %q line to write the table between", path, benchBegin, benchEnd)
	}
	var out bytes.Buffer
	out.Write(data[:i+len(benchBegin)+1])
	out.WriteString(benchTable(r, machine))
	out.Write(data[j:])
	return os.WriteFile(path, out.Bytes(), 0o644)
}
