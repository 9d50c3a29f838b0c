//go:build !clientgo_before_v0_27

package upstream

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/kverify/kverify/props/checkkit"
	"github.com/kverify/kverify/props/modelserver"
	prefl "github.com/kverify/kverify/props/reflector"
	"github.com/kverify/kverify/subjects/suite"
	"github.com/kverify/kverify/traces"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"
)

// Reflector returns client-go's cache.Reflector as a subject, made with
// NewReflectorWithOptions for *metav1.PartialObjectMetadata with the
// bubble's clock. Watch-list is client-go's default (the WatchListClient
// gate is on in v0.37.2); a reflector told to list gets a ListerWatcher
// that reports IsWatchListSemanticsUnSupported, client-go's per-client
// opt-out (listwatch.go:149). Its constructor cannot fail.
func Reflector() prefl.Subject {
	return prefl.Subject{Capabilities: prefl.Capabilities{NoWatchList: noWatchList()}, New: func(s prefl.Setup) (prefl.Reflector, error) {
		dropErrorBackoff()
		var lw cache.ListerWatcher = s.Server
		if !s.WatchList {
			lw = modelserver.NoWatchList{Server: s.Server}
		}
		r := cache.NewReflectorWithOptions(lw, &metav1.PartialObjectMetadata{}, reflectorStore(s.Store),
			cache.ReflectorOptions{Name: "upstream", ResyncPeriod: s.ResyncPeriod, Clock: reflectorClock(s)})
		if !s.WatchList {
			optOutOfStreaming(r)
		}
		r.ShouldResync = s.ShouldResync
		r.WatchListPageSize = s.PageSize
		r.MaxInternalErrorRetryDuration = s.MaxInternalErrorRetryDuration
		return reflector{r}, nil
	}}
}

func reflectorClock(s prefl.Setup) clock.Clock {
	if s.Clock != nil {
		return s.Clock
	}
	return clock.RealClock{}
}

var dropOnce sync.Once

// dropErrorBackoff removes apimachinery's HandleError throttle, once per
// process. The throttle sleeps minPeriod minus the time since the last
// error, measured from a time.Now() taken at package init
// (k8s.io/apimachinery@v0.37.2/pkg/util/runtime/runtime.go:152-160,252-290);
// inside a synctest bubble the clock starts in 2000, so that is a sleep of
// decades and a reflector's Run never gets past its first error. The
// throttle is logging policy, not reflector behaviour: the subjects run
// without it (logError stays).
func dropErrorBackoff() {
	dropOnce.Do(func() {
		if len(utilruntime.ErrorHandlers) > 1 {
			utilruntime.ErrorHandlers = utilruntime.ErrorHandlers[:1]
		}
	})
}

type reflector struct{ r *cache.Reflector }

func (r reflector) Run(ctx context.Context)         { runReflector(ctx, r.r) }
func (r reflector) LastSyncResourceVersion() string { return r.r.LastSyncResourceVersion() }

// ReflectorDivergences are client-go's known differences from the
// reflector contract.
var ReflectorDivergences = append([]checkkit.Divergence{
	{Check: prefl.CheckStops, Releases: watchListGate, Gate: WatchListClient,
		Guarantees: []string{prefl.GStops, prefl.GRequests},
		Shape:      `^(every watch started is stopped \(exactly once in reflector/stops\): watch \d+ stopped 2 times|request shapes \([^)]*\): .*while watch \d+ is open \(not stopped\))`,
		Reason:     "the defect is the leaked open stream: when the store's Replace fails after the end bookmark, watchList returns the error without stopping the stream, and ListAndWatchWithContext sets w = nil before falling back to LIST, so the stream stays open (its goroutine and connection leak) while the reflector lists and watches again; the stream handed over by watch-list is also stopped twice (handleAnyWatch's deferred stopWatcher, then ListAndWatchWithContext's deferred w.Stop(), since watch() only clears its local copy), which is allowed: kubernetes#131266 says watch implementations must tolerate repeated Stop",
		Upstream:   Version + "/tools/cache/reflector.go:476-481,489-497,895-904,992-997",
		Class:      checkkit.ClassDefect,
		Evidence: "https://github.com/kubernetes/kubernetes/pull/131266 (merged) makes the reflector always Stop its watcher, says \"watch.Interface implementations must tolerate Stop being called multiple times\" (so the double Stop is allowed) " +
			"and states its goal as \"ensure watcher.Stop is always called at least once\", which the Replace-failure path breaks by leaving the stream open"},
	{Check: prefl.CheckCancel, Releases: watchListGate, Gate: WatchListClient,
		Guarantees: []string{prefl.GCancel},
		Shape:      `^cancellation returns at once: Run did not return after its context was cancelled: it waits for time to pass (?s:.*)reflector\.go`,
		Reason:     "a refused or 429 watch-list request backs off with <-r.clock.After(r.delayHandler()) without watching the context, so cancelling Run waits out the backoff (up to 60s with jitter)",
		Upstream:   Version + "/tools/cache/reflector.go:811-819",
		Class:      checkkit.ClassDefect,
		Evidence: Version + "/tools/cache/reflector.go:420-422: RunWithContext \"will exit when the context is canceled\", but the watch-list backoff (:811-819) waits on <-r.clock.After alone; " +
			"context-aware backoff was a stated goal of https://github.com/kubernetes/kubernetes/issues/136823 (closed; its PR #136824 left this path out)"},
	{Check: prefl.CheckBackoff, Releases: ">=v0.36.0", // kubernetes PR #136824
		Guarantees: []string{prefl.GBackoff},
		Shape:      `^backoff between failing attempts: the gap before retry \d+ is \S+, want within \[\S+, \S+\] \(gaps: `,
		Reason:     "the delay function is wait.Backoff.DelayWithReset, whose backoffManager restarts the sequence when more than 2 minutes passed since the last restart, not since the last failure; a reflector that keeps failing goes back to 800ms every two minutes (the reflector's own comment promises a reset after 2 minutes without backoff)",
		Upstream:   "k8s.io/apimachinery@v0.37.2/pkg/util/wait/backoff.go:135-153,292-304; " + Version + "/tools/cache/reflector.go:336",
		Class:      checkkit.ClassDefect,
		Evidence: Version + "/tools/cache/reflector.go:64 says \"If we don't backoff for 2min, assume API server is healthy and we reset the backoff.\", but https://github.com/kubernetes/kubernetes/pull/136824 (merged; first in v0.36.0) " +
			"replaced the BackoffManager with wait.Backoff.DelayWithReset, which resets every 2 minutes since its last reset even while every attempt fails"},
	{Check: prefl.CheckBound, Releases: watchListGate, Gate: WatchListClient,
		Guarantees: []string{prefl.GBound},
		Shape:      `^a watch-list stream without its end bookmark ends in a fallback within bounded time: after 10 minutes the reflector still waits on the stream: requests \[Watch rv="" match=NotOlderThan sendInitialEvents=true bookmarks\]$`,
		Reason:     "watchList waits for the initial-events-end bookmark for as long as the stream stays open (only a 10s warning ticker runs), so a stream that never sends it and is never closed by the server hangs the reflector; there is no fallback to LIST",
		Upstream:   Version + "/tools/cache/reflector.go:840-875,1230-1283",
		Class:      checkkit.ClassDefect,
		Evidence: "no doc allows an unbounded wait: watchList (" + Version + "/tools/cache/reflector.go:785-795) expects the stream to end with the initial-events-end bookmark and falls back to LIST only on an error (:489-497); " +
			"the hang is reported (https://github.com/kubernetes/kubernetes/issues/135895 against the fake tracker, whose fix PR #139716 is open; https://github.com/derailed/k9s/pull/4186 against real servers); https://github.com/kubernetes/kubernetes/issues/140890 (open) reports the reflector retrying streams that close without the bookmark, and its fix PR #140902 (open) bounds those retries, " +
			"but as proposed sets no deadline on a stream that stays open, the case this check holds"},
}, slices.Concat(reflectorOldReleases, []checkkit.Divergence{unstoppedStream(checkkit.Divergence{Check: prefl.CheckMachine, Intermittent: true})},
	withUnstoppedStreams(reflectorMalformed, "<v0.31.0 || >=v0.34.0"))...)

// reflectorMalformed is client-go's reflector/malformed declaration on
// every release (withUnstoppedStreams widens it where v0.31-v0.33 stream).
var reflectorMalformed = checkkit.Divergence{Check: prefl.CheckMalformed,
	Guarantees: []string{prefl.GConverge, prefl.GMalformed, prefl.GEarned, prefl.GReplace},
	Shape:      `^(convergence once faults stop: after the malformed event: published "\d+" \(server at \d+\); store vs server: (stale|missing) |malformed events are never stored: the store was given (?:\w+ of \S+ with (?:an empty version|the non-numeric version "[^"]*")(?:, |$))+$|earned resource version \([^)]*\): (published \d+ but the store is not the server\'s state at \d+: (missing|stale|ghost) |published "[^"]*[^"\d][^"]*", not a version the server issued)|exactly one Replace per completed sync: \d+ Replace calls \(at \[[^\]]*\]\) for \d+ completed syncs)`,
	Reason:     "events it cannot apply are logged and skipped while the stream goes on: a nil or wrongly typed object in the initial events is left out of the Replace and the end bookmark's version is published anyway (an object lost until the next relist); an object whose resourceVersion is empty or not a number is stored and its version published",
	Upstream:   Version + "/tools/cache/reflector.go:1009-1036,1075",
	Class:      checkkit.ClassDefect,
	Evidence: Version + "/tools/cache/reflector.go:789-790 promises watch-list data \"consistent, as if, served directly from etcd via a quorum read\", yet events it cannot apply are skipped (:1013-1036) and the end bookmark's version published, losing an object until a relist; " +
		"and a published version the server never issued wedges the informer (every later request fails); no doc allows either, no upstream issue found"}

// The closed watch-list stream left unstopped (v0.31-v0.33 with
// WatchListClient on): a declaration of its own for a check that has
// none, or widening a check's declaration (withUnstoppedStreams).
const (
	unstoppedShape  = `request shapes \([^)]*\): ((Watch|List) [^;]* while watch \d+ is open \(not stopped\)(; |$))+$|every watch started is stopped \(exactly once in reflector/stops\): watch \d+ stopped 0 times`
	unstoppedReason = "before v0.34, with WatchListClient on, a watch-list stream that closes without its initial-events-end bookmark is not stopped: watchList loops to its next request (the error path stops the stream, the no-bookmark path does not), so every later request (a new stream, the fallback list, the watch after it) is made with the old one never stopped"
	unstoppedRange  = ">=v0.31.0 <v0.34.0"
)

// unstoppedStream is d (a check, and whether it is intermittent) declaring
// the unstopped stream alone.
func unstoppedStream(d checkkit.Divergence) checkkit.Divergence {
	d.Releases, d.Gate = unstoppedRange, WatchListClient
	d.Guarantees = []string{prefl.GRequests, prefl.GStops}
	d.Shape = "^(" + unstoppedShape + ")"
	d.Reason = unstoppedReason
	d.Upstream = "k8s.io/client-go@v0.33.13/tools/cache/reflector.go:742-764"
	d.Class = checkkit.ClassDefect
	d.Evidence = "fixed by https://github.com/kubernetes/kubernetes/pull/131266 (merged; first in v0.34.0), which makes the reflector stop every watcher it started (\"ensure watcher.Stop is always called at least once\"); seen in the matrix with --flip-gates on v0.31.14-v0.33.13, not on v0.34.13"
	return d
}

// withUnstoppedStreams splits d (which holds outside, plus the v0.31-v0.33
// range) so that on v0.31-v0.33 with WatchListClient on it also covers
// the unstopped stream (splitByGate); and, when d holds under a gate
// condition of its own, declares the unstopped stream alone where that
// condition fails and the gate is on.
func withUnstoppedStreams(d checkkit.Divergence, outside string) []checkkit.Divergence {
	ds := splitByGate(d, outside, unstoppedRange, func(on *checkkit.Divergence) {
		on.Shape = "(" + d.Shape + ")|^(" + unstoppedShape + ")"
		on.Guarantees = append(slices.Clone(d.Guarantees), prefl.GRequests, prefl.GStops)
		on.Reason = d.Reason + "; and " + unstoppedReason
		on.Evidence = d.Evidence + "; the unstopped stream: " + unstoppedStream(d).Evidence
	})
	if d.Gate != "" {
		alone := unstoppedStream(checkkit.Divergence{Check: d.Check, Intermittent: true})
		alone.Gate = joinGates(negateGate(d.Gate), WatchListClient)
		ds = append(ds, alone)
	}
	return ds
}

// splitByGate declares d as it is outside the releases inside, and inside
// them as it is with WatchListClient off and widened by widen with it on,
// where it also covers a watch-list defect: intermittent (the random
// checks meet it now and then) and a defect whatever d's class.
func splitByGate(d checkkit.Divergence, outside, inside string, widen func(on *checkkit.Divergence)) []checkkit.Divergence {
	out, off, on := d, d, d
	out.Releases = outside
	off.Releases, on.Releases = inside, inside
	off.Gate, on.Gate = joinGates(d.Gate, "!"+WatchListClient), joinGates(d.Gate, WatchListClient)
	widen(&on)
	on.Intermittent = true
	on.Class = checkkit.ClassDefect
	return []checkkit.Divergence{out, off, on}
}

// joinGates joins gate conditions that must all hold.
func joinGates(a, b string) string {
	if a == "" {
		return b
	}
	return a + "," + b
}

// negateGate is the condition that holds when the single-literal cond
// does not.
func negateGate(cond string) string {
	if n, ok := strings.CutPrefix(cond, "!"); ok {
		return n
	}
	return "!" + cond
}

// reflectorEntries binds the reflector (v0.27 and later; run.go has the
// calls whose API changed in v0.33).
func reflectorEntries() []suite.Entry {
	if v034, _ := InRange(">=v0.34.0 <v0.35.0", Release); v034 && streams() {
		return absentEntries("with WatchListClient on, v0.34's reflector cannot be told to list: useWatchList is private and follows the gate alone (k8s.io/client-go@v0.34.13/tools/cache/reflector.go:148,301), and the per-client opt-out the adapter uses from v0.35 (IsWatchListSemanticsUnSupported) is not there yet; the checks' listing setups cannot be built", prefl.Component)
	}
	return []suite.Entry{entry(prefl.Component, func() []checkkit.Check { return prefl.Checks(Reflector()) }, ReflectorDivergences,
		func(t *testing.T, tr *traces.Trace) error { return prefl.Replay(t, Reflector(), tr) })}
}
