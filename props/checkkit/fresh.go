package checkkit

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kverify/kverify/internal/kvenv"
)

// freshProcessLimit bounds a check rerun in a fresh process when the test
// has no deadline: the child's own watchdog ends a hang in HangAfter, so
// only a child that cannot even start its checks comes near it.
const freshProcessLimit = 10 * time.Minute

// inFreshProcess runs the check whose subtest is t again in a fresh
// process of this test binary, because an earlier check (hung) hung in
// this one and its goroutines may still run. A hang would otherwise leave
// every later check of a library run unchecked (NOT RUN); the kverify
// command reruns such checks itself (KVERIFY_ONLY), so there, and where
// the binary cannot be run again, it reports false and the check is
// skipped as NOT RUN. It relays the child's verdict: pass, skip (with the
// child's reason: a declared divergence, not offered) or failure (with its
// output).
func inFreshProcess(t *testing.T, env kvenv.Config, hung string) bool {
	t.Helper()
	if len(env.Subjects) > 0 || len(env.Only) > 0 || env.List {
		return false // the kverify command reruns it, in a process of its own
	}
	bin, err := os.Executable()
	if err != nil {
		return false
	}
	limit := freshProcessLimit
	if d, ok := t.Deadline(); ok {
		limit = time.Until(d) - 10*time.Second
	}
	if limit <= 0 {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, freshArgs(t.Name())...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	runErr := cmd.Run()
	verdict, detail := subtestVerdict(out.String(), t.Name())
	note := fmt.Sprintf("ran in a fresh process (%s hung in this one)", hung)
	switch {
	case ctx.Err() != nil:
		t.Errorf("%s: it did not end within %v there either:\n%s", note, limit.Round(time.Second), tailLines(out.String(), 40))
	case verdict == "PASS" && runErr == nil:
		t.Logf("%s: pass", note)
	case verdict == "SKIP":
		t.Skipf("%s", strings.TrimSpace(detail))
	default:
		t.Errorf("%s: %s\n%s", note, strings.ToLower(orNone(verdict)), tailLines(out.String(), 60))
	}
	return true
}

// freshArgs are the child's flags: the one subtest, verbosely, once, with
// the parent's rapid flags and timeout.
func freshArgs(name string) []string {
	var parts []string
	for _, p := range strings.Split(name, "/") {
		parts = append(parts, "^"+regexp.QuoteMeta(p)+"$")
	}
	args := []string{"-test.run=" + strings.Join(parts, "/"), "-test.count=1", "-test.v=true"}
	for _, a := range os.Args[1:] {
		if strings.HasPrefix(a, "-rapid.") || strings.HasPrefix(a, "-test.timeout") || strings.HasPrefix(a, "-test.short") {
			args = append(args, a)
		}
	}
	return args
}

// subtestVerdict finds name's "--- PASS/FAIL/SKIP: name" line in go test
// -v output, and what the subtest logged: the lines under its "=== RUN"
// line (go test -v streams them there), up to the next "=== " or "--- ".
func subtestVerdict(out, name string) (verdict, detail string) {
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		trimmed := strings.TrimSpace(l)
		if trimmed == "=== RUN   "+name {
			var d []string
			for _, m := range lines[i+1:] {
				mt := strings.TrimSpace(m)
				if strings.HasPrefix(mt, "=== ") || strings.HasPrefix(mt, "--- ") {
					break
				}
				d = append(d, mt)
			}
			detail = stripFileLine(strings.Join(d, "\n"))
		}
		for _, v := range []string{"PASS", "FAIL", "SKIP"} {
			if strings.HasPrefix(trimmed, "--- "+v+": "+name+" (") {
				verdict = v
			}
		}
	}
	return verdict, detail
}

// stripFileLine drops the "file.go:NN: " that go test puts before a log.
func stripFileLine(s string) string {
	if i := strings.Index(s, ": "); i > 0 && strings.Contains(s[:i], ".go:") {
		return s[i+2:]
	}
	return s
}

func tailLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func orNone(v string) string {
	if v == "" {
		return "no verdict"
	}
	return v
}
