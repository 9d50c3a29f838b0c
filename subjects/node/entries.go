// Package node binds the wire checks to informers written in JavaScript,
// run as processes that speak kverify-client/v1 (js/: a protocol adapter
// per library, pinned in js/package.json with a committed lock file). It is
// a module of its own so that the main module's go test needs neither npm
// nor real time: kverify verify --subject client-node (or fluent) runs
// this module's TestSuite, after npm ci in js/.
package node

import (
	"path/filepath"
	"runtime"
	"testing"

	"github.com/kverify/kverify/props/checkkit"
	"github.com/kverify/kverify/props/wire"
	"github.com/kverify/kverify/subjects/suite"
	"github.com/kverify/kverify/traces"
)

// The subjects' names (kverify's --subject), as subjects.Externals lists
// them.
const (
	ClientNode = "client-node"
	Fluent     = "fluent"
)

// Schedules is how many random schedules wire/schedules plays on each
// JavaScript client per run: each takes a few seconds of real time (a
// process start, the schedule's steps with waits of at most 300ms, the
// recovery), so a CI run affords tens, not the thousand an in-process
// client gets.
const Schedules = 12

// jsDir is the adapters' directory.
func jsDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "js")
}

// Subject is the JavaScript client called name (ClientNode or Fluent) as a
// wire subject: its adapter run by node.
func Subject(name string) wire.Subject {
	script := map[string]string{ClientNode: "client-node.mjs", Fluent: "fluent.mjs"}[name]
	return wire.Process(name, jsDir(), Schedules, "node", script)
}

// Entries bind the wire checks to both clients, with their findings
// declared.
func Entries() []suite.Entry {
	var out []suite.Entry
	for _, name := range []string{ClientNode, Fluent} {
		s := Subject(name)
		out = append(out, suite.Entry{Component: wire.Component, Subject: name,
			Checks:      func() []checkkit.Check { return wire.Checks(s) },
			Divergences: Divergences[name],
			Replay:      func(t *testing.T, tr *traces.Trace) error { return wire.Replay(t, s, tr) }})
	}
	return out
}
