package upstream

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/kverify/kverify/internal/releaserange"
	"github.com/kverify/kverify/props/checkkit"
	"github.com/kverify/kverify/subjects/suite"
	"github.com/kverify/kverify/traces"
)

// Subject is the name client-go's entries carry (subjects.Upstream).
const Subject = "upstream"

// Entries binds every component's checks to client-go at Release, with the
// divergences declared for it (those whose Releases range holds Release).
// The kverify registry takes its upstream side from here, and so does the
// module kverify generates for another release, whose copy of this package
// has the adapters of that release's API era: each group of components
// comes from the adapter file of its era (or, where the release lacks the
// API, from absent.go's not-offered entries).
func Entries() []suite.Entry {
	return slices.Concat(workqueueEntries(), ringEntries(), informerEntries(), fifoEntries(), reflectorEntries(), backoffEntries(), retrywatcherEntries(), wireEntries(), controllerEntries())
}

// entry binds one component, with the declarations that hold for Release.
func entry(component string, checks func() []checkkit.Check, ds []checkkit.Divergence, replay func(*testing.T, *traces.Trace) error) suite.Entry {
	return suite.Entry{Component: component, Subject: Subject, Checks: checks, Divergences: ForRelease(ds, Release), Replay: replay}
}

// ForRelease returns the declarations of ds that hold for release (see
// InRange) under the feature gates as they are in this process (see
// GateHolds). One whose range does not parse is kept, so that it is seen:
// TestDeclarationsParse names it.
func ForRelease(ds []checkkit.Divergence, release string) []checkkit.Divergence {
	var out []checkkit.Divergence
	for _, d := range ds {
		if ok, err := InRange(d.Releases, release); (err != nil || ok) && GateHolds(d.Gate) {
			out = append(out, d)
		}
	}
	return out
}

// GateHolds reports whether a declaration's gate condition (Divergence.Gate:
// "Name" on, "!Name" off, several joined by "," all of which must hold,
// "" always) holds in this process. A gate the
// release does not have is off: the behaviour it would switch on is not
// there.
func GateHolds(cond string) bool {
	if cond == "" {
		return true
	}
	for _, lit := range strings.Split(cond, ",") {
		name, off := strings.CutPrefix(strings.TrimSpace(lit), "!")
		if on, _ := GateOn(name); on == off {
			return false
		}
	}
	return true
}

// watchListGate are the releases whose reflector reads the WatchListClient
// gate (v0.31.14 reflector.go:256-258; v0.30 declares the gate but reads
// ENABLE_CLIENT_GO_WATCH_LIST_ALPHA). The declarations about watch-list
// streams hold there while the gate is on: turned on by hand before
// v0.35 (kverify --gates WatchListClient=true, matrix --flip-gates), the
// same defects show as from v0.35, where it is on by default.
const watchListGate = ">=v0.31.0"

// WatchListClient is client-go's gate that makes a reflector stream its
// initial list over a watch (on by default from v0.35): the subjects turn
// off their watch-list capability when it is off, and the declarations
// about streams hold only when it is on.
const WatchListClient = "WatchListClient"

// streams reports whether client-go's reflector streams in this process:
// from v0.31, when the WatchListClient gate is on (reflector.go:256-258 in
// v0.31.14); before, v0.27-v0.30 stream only when
// ENABLE_CLIENT_GO_WATCH_LIST_ALPHA is set (reflector.go:243-249 in
// v0.30.14, whose WatchListClient gate nothing reads), and older releases
// never.
func streams() bool {
	if gated, _ := InRange(watchListGate, Release); !gated {
		alpha, _ := InRange(">=v0.27.0", Release)
		return alpha && os.Getenv("ENABLE_CLIENT_GO_WATCH_LIST_ALPHA") != ""
	}
	on, _ := GateOn(WatchListClient)
	return on
}

// noWatchList is whether the subjects declare no watch-list: whenever
// client-go's reflector does not stream in this process, that is, the
// WatchListClient gate is off (its default before v0.35, and every
// release before v0.30, which reads no gates: v0.27-v0.29 stream only
// under ENABLE_CLIENT_GO_WATCH_LIST_ALPHA, which the adapters do not
// set). The subjects learn it from the gate, not from the release
// number: the checks then ask for no stream where there is none.
func noWatchList() bool {
	return !streams()
}

// alwaysStreams is whether an informer streams its syncs even when the
// adapter builds it to list: v0.31-v0.34 with WatchListClient on, whose
// informers read the gate and have no per-client opt-out (it arrives in
// v0.35: IsWatchListSemanticsUnSupported, listwatch.go:149).
func alwaysStreams() bool {
	in, _ := InRange(">=v0.31.0 <v0.35.0", Release)
	return in && streams()
}

// InRange reports whether release is in rng (releaserange.InRange: one
// or more intervals joined by "||", each space-separated bounds
// ">=vA.B.C" and "<vX.Y.Z", compared as semantic versions). The range
// form lives in internal/releaserange so that traces/findings reads it
// without building this package.
func InRange(rng, release string) (bool, error) {
	return releaserange.InRange(rng, release)
}
