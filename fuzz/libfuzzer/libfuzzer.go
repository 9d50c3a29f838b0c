// Package libfuzzer holds kverify's state-machine fuzz targets in the form
// libFuzzer builds take, for ClusterFuzzLite and OSS-Fuzz
// (.clusterfuzzlite/build.sh; make clusterfuzzlite runs that script here,
// without Docker).
//
// Why a package of its own: go-118-fuzz-build, which turns a native Go
// fuzz target into a libFuzzer one, rewrites the file holding the target
// to use its own stand-ins for *testing.F and *testing.T, and compiles it
// without the package's other _test.go files. The checks need a real
// *testing.T (rapid.MakeFuzz takes one). So the harnesses in targets.go,
// the file the tool rewrites, only hand each input to Run, and Run runs
// the check under a *testing.T that the testing package itself makes.
//
// The targets are those of package fuzz's FuzzCheck*: the same check, on
// our implementation, with its rapid machine drawing from the input.
package libfuzzer

import (
	"flag"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/kverify/kverify/props/checkkit"
	"github.com/kverify/kverify/subjects"
	"github.com/kverify/kverify/subjects/suite"
)

// Machine names the check a FuzzCheck target runs.
type Machine struct{ Component, Check string }

var (
	setUp  sync.Once
	mu     sync.Mutex
	checks = map[string]checkkit.Check{}
)

// Run runs the check of the machine target called target once on data, on
// our implementation, under a real *testing.T, and panics if the check
// fails, so that libFuzzer keeps the input as a crash. The test output
// printed above the panic names the broken guarantee.
//
// Run is for libFuzzer binaries only: it sets the testing package up as
// a test binary's main does, which a go test binary has already done.
func Run(target string, data []byte) {
	c := check(target)
	setUp.Do(setUpTesting)
	ok := testing.RunTests(matchAll, []testing.InternalTest{{Name: target, F: func(t *testing.T) {
		checkkit.FuzzCheck(t, c, data)
	}}})
	if !ok {
		panic(fmt.Sprintf("kverify: %s: check %s failed on this input", target, c.Name))
	}
}

func check(target string) checkkit.Check {
	mu.Lock()
	defer mu.Unlock()
	if c, ok := checks[target]; ok {
		return c
	}
	m, ok := Machines[target]
	if !ok {
		panic(fmt.Sprintf("kverify: no machine target %q", target))
	}
	c, ok := suite.Lookup(subjects.All(), subjects.Ours, m.Component, m.Check)
	if !ok {
		panic(fmt.Sprintf("kverify: %s: no check %s/%s registered for ours", target, m.Component, m.Check))
	}
	checks[target] = c
	return c
}

// setUpTesting does what a test binary's main does before its tests run:
// testing.RunTests runs a test once per entry of the -test.cpu list, which
// only M.Run fills in. The command line is libFuzzer's, not Go flags, so
// it is marked parsed with nothing in it.
func setUpTesting() {
	m := testing.MainStart(deps{}, []testing.InternalTest{{Name: "TestSetUp", F: func(*testing.T) {}}}, nil, nil, nil)
	if err := flag.CommandLine.Parse(nil); err != nil {
		panic(err)
	}
	if code := m.Run(); code != 0 {
		panic(fmt.Sprintf("kverify: setting the testing package up: exit code %d", code))
	}
}

func matchAll(string, string) (bool, error) { return true, nil }

// deps is what testing.MainStart needs from a test binary's generated
// main (testing's testDeps, which go test implements in
// internal/testdeps): none of its profiling, logging or fuzzing is used.
type deps struct{}

// corpusEntry is testing's corpusEntry, an alias of this struct type.
type corpusEntry = struct {
	Parent     string
	Path       string
	Data       []byte
	Values     []any
	Generation int
	IsSeed     bool
}

var errUnsupported = fmt.Errorf("not supported in a libFuzzer binary")

func (deps) ImportPath() string { return "" }
func (deps) ModulePath() string { return "" }
func (deps) MatchString(pat, str string) (bool, error) {
	return regexp.MatchString(pat, str)
}
func (deps) SetPanicOnExit0(bool)                        {}
func (deps) StartCPUProfile(io.Writer) error             { return errUnsupported }
func (deps) StopCPUProfile()                             {}
func (deps) StartTestLog(io.Writer)                      {}
func (deps) StopTestLog() error                          { return nil }
func (deps) WriteProfileTo(string, io.Writer, int) error { return errUnsupported }
func (deps) CoordinateFuzzing(time.Duration, int64, time.Duration, int64, int, []corpusEntry, []reflect.Type, string, string) error {
	return errUnsupported
}
func (deps) RunFuzzWorker(func(corpusEntry) error) error { return errUnsupported }
func (deps) ReadCorpus(string, []reflect.Type) ([]corpusEntry, error) {
	return nil, errUnsupported
}
func (deps) CheckCorpus([]any, []reflect.Type) error { return errUnsupported }
func (deps) ResetCoverage()                          {}
func (deps) SnapshotCoverage()                       {}
func (deps) InitRuntimeCoverage() (string, func(string, string) (string, error), func() float64) {
	return "", nil, nil
}
