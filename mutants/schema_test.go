package mutants

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// schemaSrc has what a dispatch must handle: a method on a generic type,
// a generic function, unnamed and blank parameters, a variadic one,
// results and none, two mutants in one function, and a declaration
// outside any body.
const schemaSrc = `package p

type Box[T any] struct{ v []T }

func (b *Box[T]) Put(v T, _ int) int {
	b.v = append(b.v, v)
	return len(b.v)
}

func Sum[N int | float64](xs ...N) N {
	var s N
	for _, x := range xs {
		s += x
	}
	return s
}

func (Box[T]) Name(string) string { return "box" }

var log []string

func Note(s string) {
	log = append(log, s)
}

func Log() []string { return log }

const Limit = 3
`

const schemaMain = `package main

import (
	"fmt"
	"m/p"
)

func main() {
	b := &p.Box[int]{}
	b.Put(1, 0)
	p.Note("x")
	fmt.Println(b.Put(2, 0), p.Sum(1, 2, 3), b.Name("y"), p.Log(), p.Limit)
}
`

func TestSchema(t *testing.T) {
	root := t.TempDir()
	write := func(name, src string) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module m\n\ngo 1.26\n")
	write("p/p.go", schemaSrc)
	write("main.go", schemaMain)
	ms := []Mutant{
		{ID: "put-twice", File: "p/p.go", Old: "	b.v = append(b.v, v)\n", New: "	b.v = append(b.v, v, v)\n"},
		{ID: "put-zero", File: "p/p.go", Old: "	return len(b.v)", New: "	return 0"},
		{ID: "sum-first", File: "p/p.go", Old: "		s += x", New: "		s = x"},
		{ID: "name", File: "p/p.go", Old: `return "box"`, New: `return "crate"`},
		{ID: "note-dropped", File: "p/p.go", Old: "	log = append(log, s)\n", New: ""},
		{ID: "limit", File: "p/p.go", Old: "const Limit = 3", New: "const Limit = 4"},
		// It quotes the function's first line, which it leaves as it is:
		// merged all the same.
		{ID: "note-twice", File: "p/p.go", Old: "func Note(s string) {\n	log = append(log, s)\n", New: "func Note(s string) {\n	log = append(log, s, s)\n"},
	}
	sch, err := NewSchema(root, filepath.Join(root, "schema"), ms, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(sch.Index) != 6 || sch.Alone["limit"] == "" {
		t.Fatalf("merged %v, alone %v: want every mutant but limit merged", sch.Index, sch.Alone)
	}
	run := func(env ...string) string {
		cmd := exec.Command("go", "run", "-overlay", sch.Overlay, ".")
		cmd.Dir = root
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go run %v: %v\n%s", env, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	want := map[string]string{
		"":             "2 6 box [x] 3",
		"put-twice":    "4 6 box [x] 3",
		"put-zero":     "0 6 box [x] 3",
		"sum-first":    "2 3 box [x] 3",
		"name":         "2 6 crate [x] 3",
		"note-dropped": "2 6 box [] 3",
		"note-twice":   "2 6 box [x x] 3",
	}
	for id, w := range want {
		var env []string
		if id != "" {
			env = append(env, sch.Env(id))
		}
		if got := run(env...); got != w {
			t.Errorf("mutant %q: %q, want %q", id, got, w)
		}
	}
	if src, _ := os.ReadFile(filepath.Join(root, "p/p.go")); string(src) != schemaSrc {
		t.Error("the schema changed the source file itself")
	}
}
