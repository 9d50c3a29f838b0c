package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kverify/kverify/internal/kvenv"
	"github.com/kverify/kverify/subjects"
	ksuite "github.com/kverify/kverify/subjects/suite"
	"github.com/kverify/kverify/traces"
)

// replay runs a saved trace again against a subject (by default the one it
// was recorded on) and reports whether the violation still occurs.
func replay(args []string) int {
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	subject := fs.String("subject", "", "subject to replay on (default: the trace's): "+strings.Join(subjects.Forms(), ", "))
	pos, code, done := parseArgs(fs, args)
	if done {
		return code
	}
	if len(pos) != 1 {
		return usageErr(fs, fmt.Errorf("want one trace file, got %d arguments", len(pos)))
	}
	path, err := filepath.Abs(pos[0])
	if err != nil {
		return usageErr(fs, err)
	}
	tr, err := traces.Read(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "kverify replay:", err)
		return 2
	}
	if *subject == "" {
		*subject = tr.Subject
	}
	root, err := moduleRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, "kverify:", err)
		return 2
	}
	sub, err := subjects.ResolveOne(*subject)
	if err != nil {
		return usageErr(fs, err)
	}
	o := goTestOpts{run: "^TestReplay$", env: slices.Concat(kvenv.Config{Replay: path, ReplaySubject: sub.Target}.Environ(), sub.Env())}
	switch {
	case sub.Release != "" || sub.CRRelease != "":
		// A client-go or controller-runtime release: the module
		// generated for it, whose root package holds TestReplay.
		gen, err := sub.SuiteDir(root, os.Stderr)
		if err == nil {
			o.dir, err = filepath.Rel(root, gen)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "kverify replay:", err)
			return 1
		}
		o.pkg = "."
	case sub.Nested():
		o.dir, o.pkg = sub.Dir, "."
	}
	dir, err := os.MkdirTemp("", "kverify-subject-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "kverify:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	if o.overlay, err = sub.Overlay(root, dir); err != nil {
		fmt.Fprintln(os.Stderr, "kverify:", err)
		return 1
	}
	run := goTest(root, o)
	if run.buildFail {
		fmt.Fprintf(os.Stderr, "kverify replay: build failed:\n%s", tail(run.output.String(), 30))
		return 1
	}
	fmt.Printf("replaying %s/%s (%d steps) on %s\n", tr.Component, tr.Check, len(tr.Steps), *subject)
	fmt.Print(filterReplayOutput(run.output.String()))
	if strings.Contains(run.output.String(), ksuite.CannotReplay) {
		fmt.Printf("cannot replay on %s: no replayer for %s/%s\n", *subject, tr.Component, tr.Check)
		return 2
	}
	if run.exitErr != nil {
		fmt.Printf("violation reproduced on %s\n", *subject)
		return 1
	}
	fmt.Printf("no violation on %s\n", *subject)
	return 0
}

func filterReplayOutput(s string) string {
	var b strings.Builder
	for _, l := range strings.Split(s, "\n") {
		t := strings.TrimSpace(l)
		if t == "" || t == "PASS" || t == "FAIL" || strings.HasPrefix(t, "ok ") || strings.HasPrefix(t, "FAIL\t") || strings.HasPrefix(t, "=== RUN") || strings.HasPrefix(t, "--- ") {
			continue
		}
		b.WriteString(l + "\n")
	}
	return b.String()
}
