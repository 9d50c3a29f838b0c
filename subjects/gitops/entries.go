// Package gitops binds the wire checks to argoproj/gitops-engine's cluster
// cache (github.com/argoproj/gitops-engine/pkg/cache, the live-state cache
// under Argo CD's application controller), run as a process that speaks
// kverify-client/v1: client/ is the adapter, a Go program in a module of
// its own, because gitops-engine v0.7.3 pins k8s.io/* to v0.23.1 by
// replace directives, and kverify's client-go v0.37.2 cannot share a
// build with it. This module, in turn, keeps the main module's go test
// free of real time and of gitops-engine's dependencies: kverify verify
// --subject gitops runs its TestSuite, which builds the adapter first
// (go build in client/).
package gitops

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/kverify/kverify/props/checkkit"
	"github.com/kverify/kverify/props/wire"
	"github.com/kverify/kverify/subjects/suite"
	"github.com/kverify/kverify/traces"
)

// Name is the subject's name (kverify's --subject), as subjects.Externals
// lists it.
const Name = "gitops"

// Version is the pinned release the declarations' file:line refer to
// (client/go.mod), as the adapter's hello names it.
const Version = "github.com/argoproj/gitops-engine@v0.7.3"

// Schedules is how many random schedules wire/schedules plays per run: each
// takes a few seconds of real time (a process start, the cache's first
// sync, the schedule's steps with waits of at most 300ms, the recovery),
// so a run affords tens, as for the JavaScript clients.
const Schedules = 12

// clientDir is the adapter's module.
func clientDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "client")
}

// build builds the adapter once per process into a temporary directory
// (removed by Cleanup) and returns the binary's path.
var build = sync.OnceValues(func() (string, error) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("building the gitops-engine adapter: %w", err)
	}
	dir, err := os.MkdirTemp("", "kverify-gitops-")
	if err != nil {
		return "", err
	}
	binDir = dir
	bin := filepath.Join(dir, "gitops-client")
	cmd := exec.Command(goTool, "build", "-o", bin, ".")
	cmd.Dir = clientDir()
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build in %s: %v\n%s", cmd.Dir, err, out)
	}
	return bin, nil
})

// binDir is where build put the binary.
var binDir string

// Build builds the adapter (go build in client/) and returns the binary's
// path; later calls return the same.
func Build() (string, error) { return build() }

// Cleanup removes the built adapter.
func Cleanup() {
	if binDir != "" {
		_ = os.RemoveAll(binDir)
	}
}

// Subject is gitops-engine's cluster cache as a wire subject: the adapter
// (Build) run as a process, in client/.
func Subject() wire.Subject {
	return wire.Subject{Name: Name, Realtime: true, Schedules: Schedules,
		Start: func(url string, rt http.RoundTripper) (wire.Client, error) {
			bin, err := Build()
			if err != nil {
				return nil, errors.Join(errors.New("the adapter does not build"), err)
			}
			return wire.Process(Name, clientDir(), Schedules, bin).Start(url, rt)
		}}
}

// Entries bind the wire checks to the cluster cache, with its findings
// declared.
func Entries() []suite.Entry {
	s := Subject()
	return []suite.Entry{{Component: wire.Component, Subject: Name,
		Checks:      func() []checkkit.Check { return wire.Checks(s) },
		Divergences: Divergences,
		Replay:      func(t *testing.T, tr *traces.Trace) error { return wire.Replay(t, s, tr) }}}
}
