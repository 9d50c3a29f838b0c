package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const benchSample = `cpu: Test CPU
BenchmarkQ/impl=ours-2       10  50 ns/op  0 B/op  0 allocs/op
BenchmarkQ/impl=upstream-2   10  100 ns/op  2048 B/op  1234567 allocs/op
BenchmarkQ/impl=floor-2      10  25 ns/op  0 B/op  0 allocs/op
BenchmarkS/impl=ours-2       1  9 ns/op  1.5 peak-heap-MB
BenchmarkS/impl=upstream-2   1  9 ns/op  3 peak-heap-MB
`

// The README table replaces what lies between the markers and nothing else.
func TestBenchWriteReadme(t *testing.T) {
	path := filepath.Join(t.TempDir(), "README.md")
	before, after := "# title\n\n"+benchBegin+"\n", benchEnd+"\ntail\n"
	if err := os.WriteFile(path, []byte(before+"stale table\n"+after), 0o644); err != nil {
		t.Fatal(err)
	}
	r := benchParse([]byte(benchSample))
	if err := benchWriteReadme(path, r, benchMachine([]byte(benchSample), r.runs(), "")); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	got := string(data)
	for _, want := range []string{
		before, after, "Test CPU", "1 runs of each benchmark",
		"| Q | 0.50x | 2.00x | 0 | 2048 | 0 | 1,234,567 |  |",
		"| S | 1.00x | - | - | - | - | - | peak 0.50x |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("README lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "stale table") {
		t.Errorf("the old table is still there:\n%s", got)
	}
	if err := os.WriteFile(path, []byte("no markers\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := benchWriteReadme(path, r, ""); err == nil {
		t.Error("no error for a file without the markers")
	}
}
