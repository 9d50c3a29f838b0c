// Package kubectl binds the wire checks to kubectl get -w, run through a
// kverify-client/v1 adapter (adapter.py, Python's standard library only)
// as a single-shot client (wire.Subject.SingleShot): kubectl lists, watches
// once from the list's version and exits when the stream ends. It is a
// module of its own so that the main module's go test needs neither
// kubectl nor real time: kverify verify --subject kubectl runs this
// module's TestSuite. The kubectl judged is $KVERIFY_KUBECTL, else the
// first kubectl on PATH; the adapter's hello names its version.
package kubectl

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
const Name = "kubectl"

// Schedules is how many random schedules wire/schedules plays per run:
// each takes a few seconds of real time (two process starts, kubectl's
// discovery, the schedule's steps, the quiet after the shot's end).
const Schedules = 12

// dir is this package's directory, where adapter.py is.
func dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}

// Binary is the kubectl the subject runs: $KVERIFY_KUBECTL, else kubectl
// on PATH ("" if there is none).
func Binary() string {
	if k := os.Getenv("KVERIFY_KUBECTL"); k != "" {
		return k
	}
	k, _ := exec.LookPath("kubectl")
	return k
}

// Subject is kubectl get -w as a single-shot wire subject.
func Subject() wire.Subject {
	s := wire.Process(Name, dir(), Schedules, "python3", "adapter.py")
	s.SingleShot = true
	return s
}

// Entries bind the wire checks to kubectl, with its findings declared.
func Entries() []suite.Entry {
	s := Subject()
	return []suite.Entry{{Component: wire.Component, Subject: Name,
		Checks:      func() []checkkit.Check { return wire.Checks(s) },
		Divergences: Divergences,
		Replay:      func(t *testing.T, tr *traces.Trace) error { return wire.Replay(t, s, tr) }}}
}
