package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
)

// TestBenchstatCmd: without --benchstat, benchstat is the pinned version
// through go run; with it, the named binary, with the same arguments.
func TestBenchstatCmd(t *testing.T) {
	dir := t.TempDir()
	cmd := benchstatCmd(dir, "", "-col", "/impl", "bench.out")
	if want := []string{"go", "run", benchstatPkg, "-col", "/impl", "bench.out"}; !slices.Equal(cmd.Args, want) {
		t.Errorf("pinned: %q, want %q", cmd.Args, want)
	}
	if cmd.Dir != dir {
		t.Errorf("pinned: runs in %q, want %q", cmd.Dir, dir)
	}
	cmd = benchstatCmd(dir, "/opt/bin/benchstat", "-col", "/impl", "bench.out")
	if want := []string{"/opt/bin/benchstat", "-col", "/impl", "bench.out"}; !slices.Equal(cmd.Args, want) || cmd.Path != "/opt/bin/benchstat" {
		t.Errorf("--benchstat: %q (path %s), want %q", cmd.Args, cmd.Path, want)
	}
	if !regexp.MustCompile(`^golang\.org/x/perf/cmd/benchstat@v\S+$`).MatchString(benchstatPkg) {
		t.Errorf("benchstatPkg %q is not a pinned package@version", benchstatPkg)
	}
}

// TestBenchstatPinned holds the Makefile's BENCHSTAT (make bench-controller,
// make realapi-bench) to the version kverify bench runs.
func TestBenchstatPinned(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^BENCHSTAT\s*:=\s*(\S+)\s*$`).FindSubmatch(b)
	if m == nil {
		t.Fatal("Makefile: no BENCHSTAT := line")
	}
	if string(m[1]) != benchstatPkg {
		t.Errorf("Makefile's BENCHSTAT is %s; kverify bench runs %s", m[1], benchstatPkg)
	}
}

// TestBenchstatReadyNamesAMissingBinary: a --benchstat that does not run
// fails before any benchmark, naming the flag.
func TestBenchstatReadyNamesAMissingBinary(t *testing.T) {
	err := benchstatReady(t.TempDir(), filepath.Join(t.TempDir(), "no-benchstat"))
	if err == nil {
		t.Fatal("a missing benchstat was ready")
	}
	if !regexp.MustCompile(`--benchstat`).MatchString(err.Error()) {
		t.Errorf("error does not name --benchstat: %v", err)
	}
}
