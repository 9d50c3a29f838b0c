package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCompare: kverify compare on hand-written reports prints one line per
// differing check, ignores times, and exits 0, 1 or 2 as documented.
func TestCompare(t *testing.T) {
	dir := t.TempDir()
	// write saves a verify report with these check lines (component,
	// subject, check, result and seconds, separated by spaces) and returns
	// its path.
	write := func(name string, passed bool, seconds string, checks ...string) string {
		var cs []string
		for _, c := range checks {
			f := strings.Fields(c)
			cs = append(cs, `{"component": "`+f[0]+`", "subject": "`+f[1]+`", "check": "`+f[2]+
				`", "family": "model", "guarantee": "g", "result": "`+f[3]+`", "seconds": `+f[4]+`}`)
		}
		p := "false"
		if passed {
			p = "true"
		}
		body := `{"format": "kverify-report/v1", "command": "verify", "args": [], "started": "2026-01-01T00:00:00Z",
  "seconds": ` + seconds + `, "go": "go1.26", "race": true, "trace_dir": "/tmp/t", "passed": ` + p + `,
  "problems": [], "checks": [` + strings.Join(cs, ",\n") + `], "mutants": [], "weak_checks": []}`
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	raw := func(name, body string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}

	quiet := write("quiet.json", true, "10",
		"workqueue ours queue/drain pass 0.1",
		"workqueue ours queue/metrics not-offered 0",
		"ring ours ring/fifo pass 0.2")
	// The same verdicts, every time tripled: no difference.
	slow := write("slow.json", true, "30",
		"workqueue ours queue/drain pass 0.3",
		"workqueue ours queue/metrics not-offered 0",
		"ring ours ring/fifo pass 0.6")
	// Reordered: checks match by key, not by position.
	reordered := write("reordered.json", true, "12",
		"ring ours ring/fifo pass 0.2",
		"workqueue ours queue/metrics not-offered 0",
		"workqueue ours queue/drain pass 0.1")
	failed := write("failed.json", false, "40",
		"workqueue ours queue/drain fail 4.5",
		"workqueue ours queue/metrics not-offered 0",
		"ring ours ring/fifo pass 0.2")
	// ring/fifo on upstream instead of ours, and one check missing.
	other := write("other.json", true, "11",
		"workqueue ours queue/drain pass 0.1",
		"ring upstream ring/fifo pass 0.2")
	twice := write("twice.json", true, "1",
		"ring ours ring/fifo pass 0.2",
		"ring ours ring/fifo pass 0.3")
	mutants := raw("mutants.json", `{"format": "kverify-report/v1", "command": "mutants", "checks": []}`)
	v0 := raw("v0.json", `{"format": "kverify-report/v0", "command": "verify", "checks": []}`)
	notJSON := raw("garbage.json", "PASS\n")

	for _, tc := range []struct {
		name string
		args []string
		code int
		// want are fragments of standard output, each on a line of its
		// own, in this order; lines says how many lines it has.
		want  []string
		lines int
		// stderr is a fragment of standard error.
		stderr string
	}{
		{name: "same", args: []string{quiet, quiet}, code: 0, lines: 3,
			want: []string{"wall time: 10.0 s in " + quiet + ", 10.0 s in " + quiet + " (1.00x)", "3 checks compared, 0 differ"}},
		{name: "slower, same verdicts", args: []string{quiet, slow}, code: 0, lines: 3,
			want: []string{"(3.00x)", "time in checks: 0.3 s in " + quiet + ", 0.9 s in " + slow + " (3.00x)", "3 checks compared, 0 differ"}},
		{name: "reordered", args: []string{quiet, reordered}, code: 0, lines: 3,
			want: []string{"3 checks compared, 0 differ"}},
		{name: "a failure under load", args: []string{quiet, failed}, code: 1, lines: 5,
			want: []string{"ours workqueue/queue/drain: pass in " + quiet + ", fail in " + failed + " (0.10 s → 4.50 s)",
				"verdict: passed in " + quiet + ", failed in " + failed, "(4.00x)", "3 checks compared, 1 differ"}},
		{name: "a check missing on each side", args: []string{quiet, other}, code: 1, lines: 6,
			want: []string{"ours workqueue/queue/metrics: not-offered in " + quiet + ", absent from " + other,
				"ours ring/ring/fifo: pass in " + quiet + ", absent from " + other,
				"upstream ring/ring/fifo: absent from " + quiet + ", pass in " + other,
				"4 checks compared, 3 differ"}},
		{name: "flags after the files", args: []string{quiet, "--", slow}, code: 0, lines: 3,
			want: []string{"3 checks compared, 0 differ"}},
		{name: "help", args: []string{"-h"}, code: 0, stderr: "usage: kverify compare"},
		{name: "one file", args: []string{quiet}, code: 2, stderr: "want two report files, got 1"},
		{name: "three files", args: []string{quiet, slow, other}, code: 2, stderr: "want two report files, got 3"},
		{name: "missing file", args: []string{quiet, filepath.Join(dir, "nope.json")}, code: 2, stderr: "nope.json"},
		{name: "not JSON", args: []string{notJSON, quiet}, code: 2, stderr: "garbage.json"},
		{name: "another format", args: []string{quiet, v0}, code: 2, stderr: `format "kverify-report/v0"`},
		{name: "a mutants report", args: []string{mutants, quiet}, code: 2, stderr: "a report of kverify mutants"},
		{name: "a check twice", args: []string{twice, quiet}, code: 2, stderr: "check ours ring/ring/fifo appears twice"},
		{name: "unknown flag", args: []string{"--bogus", quiet, slow}, code: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := compareMain(tc.args, &stdout, &stderr)
			out := stdout.String()
			if code != tc.code {
				t.Errorf("exit status %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, out, stderr.String())
			}
			lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			if out == "" {
				lines = nil
			}
			if len(lines) != tc.lines {
				t.Errorf("%d lines of output, want %d:\n%s", len(lines), tc.lines, out)
			}
			i := 0
			for _, w := range tc.want {
				for i < len(lines) && !strings.Contains(lines[i], w) {
					i++
				}
				if i == len(lines) {
					t.Errorf("no line containing %q (in this order) in:\n%s", w, out)
					break
				}
			}
			if !strings.Contains(stderr.String(), tc.stderr) {
				t.Errorf("stderr lacks %q:\n%s", tc.stderr, stderr.String())
			}
		})
	}
}
