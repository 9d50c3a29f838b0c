package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/kverify/kverify/props/checkkit"
)

// suitePkg is the package whose TestSuite runs every registered entry.
const suitePkg = "./subjects"

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Time    time.Time
	Action  string
	Test    string
	Output  string
	Elapsed float64
}

// result is the outcome of one check in one run.
type result struct {
	Component, Subject, Check string
	Family                    string // when the check is not in this module's registry (a nested module's)
	Status                    string // pass, fail, divergence, not-offered, skip
	Elapsed                   time.Duration
	Output                    strings.Builder
	End                       time.Time
	Crashed                   bool // the test binary died during the check
}

// run of go test: its results by test name, the time its first test
// started, whether the build failed, and its raw non-test output.
type goTestRun struct {
	results   map[string]*result
	order     []string
	start     time.Time
	buildFail bool
	output    strings.Builder
	exitErr   error
	last      time.Time // the last event's time
}

type goTestOpts struct {
	run      string   // -run pattern
	env      []string // extra environment
	overlay  string
	failfast bool
	timeout  time.Duration
	args     []string // after -args
	pkg      string
	dir      string    // where go test runs, relative to root (a nested module's directory); default root
	verbose  io.Writer // stream check names as they finish
}

// moduleRoot finds the directory holding go.mod, from the working directory up.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if data, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && strings.Contains(string(data), "module github.com/kverify/kverify") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("kverify must run inside the github.com/kverify/kverify module")
		}
		dir = parent
	}
}

func goTest(root string, o goTestOpts) *goTestRun {
	pkg := o.pkg
	if pkg == "" {
		pkg = suitePkg
	}
	args := []string{"test", "-json", "-count=1", "-run", o.run}
	if o.overlay != "" {
		args = append(args, "-overlay", o.overlay)
	}
	if o.failfast {
		args = append(args, "-failfast")
	}
	if o.timeout > 0 {
		args = append(args, "-timeout", o.timeout.String())
	}
	args = append(args, pkg)
	if len(o.args) > 0 {
		args = append(args, "-args")
		args = append(args, o.args...)
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = filepath.Join(root, o.dir)
	cmd.Env = append(os.Environ(), o.env...)
	r := runJSON(cmd, nil, o.verbose)
	if strings.Contains(r.output.String(), "[build failed]") || (r.start.IsZero() && r.exitErr != nil) {
		r.buildFail = true
	}
	return r
}

// runJSON runs cmd, whose standard output is test2json's event stream,
// collects the results, calls onEvent (if set) after each event is
// handled, and waits for it; stderr joins the run's raw output.
func runJSON(cmd *exec.Cmd, onEvent func(*goTestRun, event), verbose io.Writer) *goTestRun {
	r := &goTestRun{results: map[string]*result{}}
	out, err := cmd.StdoutPipe()
	if err != nil {
		r.exitErr = err
		return r
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		r.exitErr = err
		return r
	}
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		var ev event
		if json.Unmarshal(sc.Bytes(), &ev) != nil {
			r.output.WriteString(sc.Text() + "\n")
			continue
		}
		r.last = ev.Time
		r.handle(ev, verbose)
		if onEvent != nil {
			onEvent(r, ev)
		}
	}
	r.exitErr = cmd.Wait()
	r.output.WriteString(stderr.String())
	return r
}

func (r *goTestRun) handle(ev event, verbose io.Writer) {
	if ev.Action == "build-fail" {
		r.buildFail = true
	}
	if ev.Test == "" {
		if ev.Action == "output" {
			r.output.WriteString(ev.Output)
		}
		return
	}
	if ev.Action == "run" && r.start.IsZero() {
		r.start = ev.Time
	}
	parts := strings.SplitN(ev.Test, "/", 4)
	if len(parts) < 4 || parts[0] != "TestSuite" {
		if ev.Action == "output" {
			r.output.WriteString(ev.Output)
		}
		return
	}
	// Check names contain slashes ("queue/model"); only the deepest name
	// that a registered check has is a result. Collect all, filter later.
	res, ok := r.results[ev.Test]
	if !ok {
		res = &result{Component: parts[1], Subject: parts[2], Check: parts[3]}
		r.results[ev.Test] = res
		r.order = append(r.order, ev.Test)
	}
	switch ev.Action {
	case "output":
		res.Output.WriteString(ev.Output)
	case "pass", "fail", "skip":
		res.Status = ev.Action
		res.Elapsed = time.Duration(ev.Elapsed * float64(time.Second))
		res.End = ev.Time
		if ev.Action == "skip" {
			switch out := res.Output.String(); {
			case strings.Contains(out, checkkit.DivergencePrefix):
				res.Status = "divergence"
			case strings.Contains(out, checkkit.NotOfferedPrefix+":"):
				res.Status = "not-offered"
			}
		}
		if verbose != nil {
			fmt.Fprintf(verbose, "  %-10s %s\n", res.Status, ev.Test)
		}
	}
}
