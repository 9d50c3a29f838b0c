//go:build !clientgo_before_v0_27

package upstream

import (
	"slices"

	"github.com/kverify/kverify/props/checkkit"
	pinf "github.com/kverify/kverify/props/informer"
	prefl "github.com/kverify/kverify/props/reflector"
)

// reflectorOldReleases are the reflector's declarations for older
// releases (see old_releases.go).
var reflectorOldReleases = []checkkit.Divergence{
	{Check: prefl.CheckRequests, Releases: "<v0.36.0",
		Guarantees: []string{prefl.GRequests, prefl.GPublish},
		Shape:      `^request shapes [^:]*: request \d+: got "List rv=\\"0\\" limit=500", want "Watch rv=\\"\\" match=NotOlderThan sendInitialEvents=true|^every published version reaches the store [^:]*: a BOOKMARK during a watch reached the store's Bookmark 0 times, want once`,
		Reason:     "before v0.35 the reflector lists and then watches by default (the WatchListClient gate is off), where the check expects the watch-list request; in v0.35 a BOOKMARK's version reaches LastSyncResourceVersion but not the store (ReflectorBookmarkStore, v0.36)",
		Upstream:   "k8s.io/client-go@v0.34.13/features/known_features.go:82; k8s.io/client-go@v0.36.6/tools/cache/reflector.go:93-99,1060-1070",
		Class:      checkkit.ClassDesign,
		Evidence: "documented feature gates: WatchListClient is \"Default: false, PreRelease: Beta\" up to v0.34 and on by default from 1.35 (k8s.io/client-go@v0.35.10/features/known_features.go:99-103); " +
			"the store's Bookmark is a new optional interface of v0.36 (ReflectorBookmarkStore, k8s.io/client-go@v0.36.6/tools/cache/reflector.go:93-99)"},
	{Check: prefl.CheckWithholding, Releases: "<v0.36.0",
		Guarantees: []string{prefl.GWithhold, prefl.GEarned},
		Shape:      `^a watch from "" or "0" publishes nothing before its first MODIFIED, DELETED or BOOKMARK: after the events \[[^\]]*\] the published version is "\d+", want "\d*"$|^earned resource version [^:]*: published \d+ but the store is not the server's state at \d+: `,
		Reason:     "before v0.36 a watch from \"\" or \"0\" publishes the version of each synthetic ADDED event it starts with, so a watch that breaks during them is restarted from a version the initial state was not complete at (the store then misses what changed before it: a ghost)",
		Upstream:   "k8s.io/client-go@v0.35.10/tools/cache/reflector.go:handleAnyWatch (setLastSyncResourceVersion on every event)",
		Class:      checkkit.ClassDefect,
		Evidence: "fixed upstream: https://github.com/kubernetes/kubernetes/pull/136583 (\"Ensure resource version callbacks aren't called preemptively in reflector\", merged 2026-01; first in v0.36.0), release note: " +
			"\"Reflector no longer gets confused about the resource version it should use to restart a watch while receiving synthetic ADDED events at the beginning of a watch from resourceVersion \\\"0\\\" or \\\"\\\".\""},
	{Check: prefl.CheckCancel, Releases: "<v0.28.0",
		Guarantees: []string{prefl.GTimers},
		Shape:      `^no timer left armed after Run returns [^:]*: \d+ timers or tickers made through the reflector's clock are still armed after Run returned`,
		Reason:     "v0.27's reflector has a second backoff manager for the watch's initial connection (initConnBackoffManager) whose timer, made through the reflector's clock, is left armed when Run returns",
		Upstream:   "k8s.io/client-go@v0.27.16/tools/cache/reflector.go (initConnBackoffManager)",
		Class:      checkkit.ClassDefect,
		Evidence: "a timer outliving Run is no documented behaviour; initConnBackoffManager came with https://github.com/kubernetes/kubernetes/pull/116435 (first in v0.27.0), " +
			"and https://github.com/kubernetes/kubernetes/pull/118132 (first in v0.28.0) removed it, and the timer with it"},
}

// informerOldReleases are the informer's declarations for older releases.
var informerOldReleases = slices.Concat(deliveryOldReleases(pinf.CheckDelivery),
	// listener/exhaustive meets what listener/delivery meets, in every
	// run: the same declarations.
	deliveryOldReleases(pinf.CheckExhaustive), []checkkit.Divergence{
		handlerDone(pinf.CheckLifecycle, pinf.GLifecycle, `^Lifecycle calls are safe: .*the registration's Done is still open after Stop`),
		handlerDone(pinf.CheckShutdown, pinf.GRemove, `^Remove: .*(Done channel is open|Done did not close)`),
		handlerDone(pinf.CheckRace, pinf.GAtomic, `^Atomic calls: .*the removed handler's Done is open although no call is in progress`),
		{Check: prefl.CheckAssembledStop, Releases: "<v0.33.0",
			Guarantees: []string{prefl.GRunWaitsReflector},
			Shape:      `^Run returns only once its reflector has stopped, with no request of it in flight: after Run returned, the reflector's .* is still in flight`,
			Reason:     "before v0.33 the ListerWatcher takes no context, so a LIST or WATCH in flight when the informer stops cannot be cancelled: Run returns while the reflector's request is still open",
			Upstream:   "k8s.io/client-go@v0.32.13/tools/cache/listwatch.go:33-50, reflector.go:511-565",
			Class:      checkkit.ClassDefect,
			Evidence: "no upstream report; changed, not fixed, by https://github.com/kubernetes/kubernetes/pull/129341 (\"client-go watch: context support\", merged 2025-01; first in v0.33.0), a cleanup with no release note: " +
				"\"The Lister and Watcher interfaces only supported methods without context, but were typically implemented with client-go API calls which need a context\"; " +
				"from v0.33 the request is cancelled when the informer stops, so the check passes, but Run still does not wait for the LIST goroutine (k8s.io/client-go@v0.37.2/tools/cache/reflector.go:683-743)"},
		{Check: pinf.CheckIsolation, Releases: "<v0.36.0", Gate: "!" + inOrderInformers,
			Guarantees: []string{pinf.GIsolation},
			Shape:      `^Isolation: with another handler blocked, \w+: call \d+ is (update|delete):\w+, want add:\w+`,
			Reason:     deltaFIFOOrderReason,
			Upstream:   deltaFIFOOrderUpstream,
			Class:      checkkit.ClassDesign,
			Evidence:   deltaFIFOOrderEvidence},
	}, withUnstoppedStreams(assembledConvergeOrder, "<v0.31.0 || >=v0.34.0 <v0.36.0"))

// deliveryOldReleases are the declarations of a check of the delivery
// machine (listener/delivery, listener/exhaustive) before v0.37: the open
// Done, and before v0.33 the DeltaFIFO's order as well.
func deliveryOldReleases(check string) []checkkit.Divergence {
	done := handlerDone(check, pinf.GRemove, `^Remove: .*(Done channel is open|Done did not close)`)
	done.Releases, done.Gate = ">=v0.33.0 <v0.36.0", inOrderInformers
	late := done
	late.Releases, late.Gate = ">=v0.36.0 <v0.37.0", ""
	order := handlerDone(check, pinf.GRemove, `^Remove: .*(Done channel is open|Done did not close)|`+deltaFIFOOrderShape)
	order.Releases, order.Gate, order.Guarantees = "<v0.36.0", "!"+inOrderInformers, append(order.Guarantees, pinf.GDelivery)
	order.Reason += "; and " + deltaFIFOOrderReason
	order.Evidence += "; " + deltaFIFOOrderEvidence
	return []checkkit.Divergence{done, late, order}
}

// The informer's queue before v0.33: a DeltaFIFO.
const (
	deltaFIFOOrderReason   = "before v0.33 the informer's queue is a DeltaFIFO, which keeps one entry per object: an object's later deltas are delivered together with its first, ahead of other objects' events emitted in between, so handlers see events out of the order they were emitted"
	deltaFIFOOrderUpstream = "k8s.io/client-go@v0.32.13/tools/cache/shared_informer.go:520-530 (NewDeltaFIFOWithOptions)"
	deltaFIFOOrderEvidence = "DeltaFIFO accumulates deltas per object by design (tools/cache/delta_fifo.go: \"a producer-consumer queue, where ... each accumulator is a Deltas\"); changed on purpose in v0.33 by the InOrderInformers feature gate (beta, on by default; " +
		"k8s.io/client-go@v0.33.13/features/known_features.go:56-60: \"Refactor informers to deliver watch stream events in order instead of out of order\")"
	deltaFIFOOrderShape = `^Delivery: \w+: call \d+ is \w+:\w+, want \w+:\w+ \(events in emit order:`
)

// inOrderInformers is client-go's gate that makes an informer queue its
// events in a RealFIFO, in the order they were emitted (v0.33-v0.35, on
// by default; locked on from v0.36): with it off, and on every release
// before v0.33, where it does not exist, the informer's DeltaFIFO hands
// an object's later deltas out with its first, which the DeltaFIFO-order
// declarations describe (their gate is "!InOrderInformers": a gate a
// release does not have is off).
const inOrderInformers = "InOrderInformers"

// assembledConvergeOrder is assembled/converge's DeltaFIFO-order
// declaration (the random check meets the same accumulation now and then:
// a key popped with its later deltas while the initial population drains
// carries isInInitialList for all of them); withUnstoppedStreams widens it
// where v0.31-v0.33 stream.
var assembledConvergeOrder = checkkit.Divergence{Check: prefl.CheckAssembledConverge, Releases: "<v0.36.0", Gate: "!" + inOrderInformers, Intermittent: true,
	Guarantees: []string{prefl.GHandlerCalls},
	Shape:      `^handler calls consistent with the handler's view: handler \d+: OnAdd\([^)]*, isInInitialList=true\) after the handler's initial list`,
	Reason:     deltaFIFOOrderReason + "; and a key popped while the initial population drains is flagged isInInitialList for every delta it accumulated, so an add that came after the handler's initial list can arrive flagged initial",
	Upstream:   deltaFIFOOrderUpstream,
	Class:      checkkit.ClassDesign,
	Evidence:   deltaFIFOOrderEvidence}
