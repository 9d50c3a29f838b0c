package main

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/kverify/kverify/mutants"
	"github.com/kverify/kverify/subjects"
)

// buildSchema builds the schema binary of ms: every mutant whose change
// lies inside one function body, compiled into one suite that takes the
// active mutant from its environment (mutants.Schema). It returns nil when
// no mutant can be merged or the build fails (each mutant is then built
// alone), saying so on stderr.
func buildSchema(root string, ms []mutants.Mutant, race bool) (*mutants.Schema, *suite) {
	if len(ms) == 0 {
		return nil, nil
	}
	start := time.Now()
	dir, err := os.MkdirTemp("", "kverify-schema-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "kverify: schema:", err)
		return nil, nil
	}
	defer os.RemoveAll(dir) // the binary is built; the overlay's files are not needed after
	sch, err := mutants.NewSchema(root, dir, ms, nil)
	if err != nil {
		fmt.Fprintf(os.Stderr, "kverify: schema: %v; building each mutant alone\n", err)
		return nil, nil
	}
	if len(sch.Index) == 0 {
		return nil, nil
	}
	subject, err := subjects.ResolveOne("mutant:" + sch.Merged()[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, "kverify: schema:", err)
		return nil, nil
	}
	pkgDir, err := subject.SuiteDir(root, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "kverify: schema:", err)
		return nil, nil
	}
	s, err := buildSuiteIn(pkgDir, sch.Overlay, race)
	if err != nil {
		fmt.Fprintf(os.Stderr, "kverify: schema: %v\nbuilding each mutant alone\n", err)
		return nil, nil
	}
	var alone []string
	for _, m := range ms {
		if why, ok := sch.Alone[m.ID]; ok {
			alone = append(alone, m.ID+" ("+why+")")
		}
	}
	fmt.Fprintf(os.Stderr, "kverify: schema: %d of %d mutants in one build (%v); %d built alone", len(sch.Index), len(ms), time.Since(start).Round(100*time.Millisecond), len(alone))
	if len(alone) > 0 {
		fmt.Fprintf(os.Stderr, ": %s", strings.Join(alone, ", "))
	}
	fmt.Fprintln(os.Stderr)
	return sch, s
}
