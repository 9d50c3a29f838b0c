// Package node binds the wire checks to informers written in JavaScript
// (and to kubernetes-fluent-client 1.x's bare watch), run as processes
// that speak kverify-client/v1 (js/: a protocol adapter per library and
// API era, pinned in js/package.json with a committed lock file). It is a
// module of its own so that the main module's go test needs neither npm
// nor real time: kverify verify --subject client-node (or fluent, or an
// earlier release: client-node@0.22.3, fluent@1.10.0, ...) runs this
// module's TestSuite, after npm ci in js/.
package node

import (
	"path/filepath"
	"runtime"
	"strings"
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

// ClientNodeHistory are the earlier releases of @kubernetes/client-node
// judged besides the pinned one, each installed under an npm alias
// (js/package.json: client-node-VERSION) and judged as the subject
// client-node@VERSION: the last 0.x, 1.0.0-rc6 (the release of
// kubernetes-client/javascript#1933, an informer's request storm after a
// restart) and the last 1.x.
var ClientNodeHistory = []string{"0.22.3", "1.0.0-rc6", "1.4.0"}

// FluentHistory are the earlier releases of kubernetes-fluent-client
// judged besides the pinned one (js/package.json: fluent-VERSION), as the
// subjects fluent@VERSION: the last 1.x, whose Watch is a bare watch from
// no version (no list, no cache: its own adapter, fluent1.mjs), and the
// last 2.x, whose Watcher (list, then watch, a uid-keyed cache) fluent.mjs
// drives as it does 3.x's.
var FluentHistory = []string{"1.10.0", "2.6.5"}

// httpsOnly are the releases whose watch makes an https agent whatever the
// URL's scheme (1.0.0-rc6 dist/config.js:138): they are served over TLS
// (wire.Subject.TLS), which the adapter's skipTLSVerify accepts.
// kubernetes-fluent-client 1.10.0 and 2.6.5 make their requests with the
// options of client-node's applyToFetchOptions (1.0.0-rc3's and rc6's),
// that same https agent.
var httpsOnly = map[string]bool{ClientNode + "@1.0.0-rc6": true, Fluent + "@1.10.0": true, Fluent + "@2.6.5": true}

// Names are every subject this module registers, the pinned clients first.
func Names() []string {
	out := []string{ClientNode, Fluent}
	for _, v := range ClientNodeHistory {
		out = append(out, ClientNode+"@"+v)
	}
	for _, v := range FluentHistory {
		out = append(out, Fluent+"@"+v)
	}
	return out
}

// Subject is the JavaScript client called name (one of Names) as a wire
// subject: its adapter run by node.
func Subject(name string) wire.Subject {
	if v, ok := strings.CutPrefix(name, ClientNode+"@"); ok {
		s := wire.Process(name, jsDir(), Schedules, "node", "client-node.mjs", "client-node-"+v)
		s.TLS = httpsOnly[name]
		return s
	}
	if v, ok := strings.CutPrefix(name, Fluent+"@"); ok {
		script := "fluent.mjs"
		if strings.HasPrefix(v, "1.") {
			script = "fluent1.mjs"
		}
		s := wire.Process(name, jsDir(), Schedules, "node", script, "fluent-"+v)
		s.TLS = httpsOnly[name]
		return s
	}
	script := map[string]string{ClientNode: "client-node.mjs", Fluent: "fluent.mjs"}[name]
	return wire.Process(name, jsDir(), Schedules, "node", script)
}

// Entries bind the wire checks to every client, with their findings
// declared.
func Entries() []suite.Entry {
	var out []suite.Entry
	for _, name := range Names() {
		s := Subject(name)
		out = append(out, suite.Entry{Component: wire.Component, Subject: name,
			Checks:      func() []checkkit.Check { return wire.Checks(s) },
			Divergences: Divergences[name],
			Replay:      func(t *testing.T, tr *traces.Trace) error { return wire.Replay(t, s, tr) }})
	}
	return out
}
