// Package python binds the wire checks to the Kubernetes Python client
// (the kubernetes package; Debian's python3-kubernetes, 22.6.0 on
// bookworm), run through a kverify-client/v1 adapter (adapter.py) that
// watches as the client's documentation tells its users to: list, watch
// from the list's version with kubernetes.watch.Watch().stream, list
// again on a 410. It is a module of its own so that the main module's go
// test needs neither Python's kubernetes package nor real time: kverify
// verify --subject python runs this module's TestSuite.
package python

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/kverify/kverify/props/checkkit"
	"github.com/kverify/kverify/props/wire"
	"github.com/kverify/kverify/subjects/suite"
	"github.com/kverify/kverify/traces"
)

// Name is the subject's name (kverify's --subject), as subjects.Externals
// lists it.
const Name = "python"

// Schedules is how many random schedules wire/schedules plays per run:
// each takes a few seconds of real time (a process start, which imports
// the kubernetes package, the schedule's steps, the recovery).
const Schedules = 12

// dir is this package's directory, where adapter.py is.
func dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}

// Interpreter is the python3 that runs the adapter: $KVERIFY_PYTHON, else
// /usr/bin/python3 (Debian's, which python3-kubernetes installs for), else
// python3 on PATH.
func Interpreter() string {
	if p := os.Getenv("KVERIFY_PYTHON"); p != "" {
		return p
	}
	if _, err := os.Stat("/usr/bin/python3"); err == nil {
		return "/usr/bin/python3"
	}
	p, _ := exec.LookPath("python3")
	return p
}

// Subject is the Python client as a wire subject.
func Subject() wire.Subject {
	return wire.Process(Name, dir(), Schedules, Interpreter(), "adapter.py")
}

// Entries bind the wire checks to the Python client, with its findings
// declared.
func Entries() []suite.Entry {
	s := Subject()
	return []suite.Entry{{Component: wire.Component, Subject: Name,
		Checks:      func() []checkkit.Check { return wire.Checks(s) },
		Divergences: Divergences,
		Replay:      func(t *testing.T, tr *traces.Trace) error { return wire.Replay(t, s, tr) }}}
}
