// Command apply writes one catalogue mutant into a copy of the module, in
// place, for builds that take no -overlay through their own scripts
// (.clusterfuzzlite/local.sh builds a mutant's libFuzzer binaries so).
//
//	go run ./mutants/cmd/apply -root DIR ID
//
// -root is required and must not be the module apply runs from: it
// rewrites a source file, and the working tree's must stay whole.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kverify/kverify/mutants"
)

func main() {
	root := flag.String("root", "", "the copy of the module to mutate (required)")
	flag.Parse()
	if err := run(*root, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "apply:", err)
		os.Exit(2)
	}
}

func run(root string, args []string) error {
	if root == "" || len(args) != 1 {
		return fmt.Errorf("usage: apply -root DIR MUTANT-ID")
	}
	here, err := os.Getwd()
	if err != nil {
		return err
	}
	if same(here, root) {
		return fmt.Errorf("-root %s is the module apply runs from: mutate a copy", root)
	}
	m, ok := mutants.ByID(args[0])
	if !ok {
		return fmt.Errorf("no mutant %q (kverify mutants --list lists them)", args[0])
	}
	out, err := m.Apply(root)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(root, m.File), out, 0o644); err != nil {
		return err
	}
	fmt.Printf("%s: %s (%s)\n", m.ID, m.File, m.Bug)
	return nil
}

func same(a, b string) bool {
	ai, err1 := os.Stat(a)
	bi, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(ai, bi)
}
