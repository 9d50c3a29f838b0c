package upstream

import (
	"github.com/kverify/kverify/props/checkkit"
	pfifo "github.com/kverify/kverify/props/fifo"
)

// The FIFOs' divergences, shared by every API era's adapters (fifo.go and
// its older twin fifo_v0_24.go).

// DeltaFIFODivergences are cache.DeltaFIFO's known differences from the
// FIFO contract.
var DeltaFIFODivergences = append([]checkkit.Divergence{
	{
		Check:      pfifo.DeltaComponent + "/" + pfifo.CheckSynced,
		Guarantees: []string{pfifo.GSynced},
		Shape:      `^HasSynced: while the process func of \[[^\]]*\] ran, the FIFO was synced=true, want false`,
		Reason:     "Pop counts an initial item as done before calling its process func, so the FIFO (and an informer's HasSynced) reports synced while the last initial object is still being processed; we count it once process returns",
		Upstream:   Version + "/tools/cache/delta_fifo.go:580-583",
		Class:      checkkit.ClassDesign,
		Evidence: Version + "/tools/cache/delta_fifo.go:344-345: \"HasSynced returns true if ... the first batch of items inserted by Replace() has been popped\" (popped, not processed); " +
			"handler-level sync (ResourceEventHandlerRegistration.HasSynced, shared_informer.go:269) is upstream's answer for processed state (https://github.com/kubernetes/kubernetes/issues/113763)",
	},
	{
		Check:      pfifo.DeltaComponent + "/" + pfifo.CheckBadInput,
		Guarantees: []string{pfifo.GBadInput},
		Shape:      `^Bad input rejected: New\([^)]*\): ((Add|Update|Delete|Replace) of no name returned no error|(Add|Update|Delete|Replace) of typed nil panicked: runtime error: invalid memory address or nil pointer dereference|Replace of (nil|int) returned "couldn\'t create key for object [^"]*" but changed the FIFO)`,
		Reason:     "Replace queues the listed objects one by one and returns at the first one without a key, leaving the earlier ones queued (a partial relist); MetaNamespaceKeyFunc also accepts an object without a name (key \"\") and panics on a typed nil; we validate the whole list first and reject both",
		Upstream:   Version + "/tools/cache/delta_fifo.go:631-639, store.go:154-181",
		Class:      checkkit.ClassDefect,
		Evidence: Version + "/tools/cache/delta_fifo.go:610 says \"Replace atomically does two things\", yet it returns at the first keyless object with the earlier ones queued; " +
			"the empty key for a nameless object and the typed-nil panic come from MetaNamespaceKeyFunc (store.go:154-163), which documents neither",
	},
	{
		Check:      pfifo.DeltaComponent + "/" + pfifo.CheckErrorPaths,
		Releases:   "<v0.24.0 || >=v0.31.0", // v0.24 to v0.30: below
		Shape:      `^Failed call: popped \[[^\]]*\], want key \w+\'s deltas \[[^\]]*\] .*\(after Replace\(`,
		Guarantees: []string{pfifo.GFailedCall},
		Reason:     "a Replace whose list holds an object the key function or the transformer rejects returns the error after queueing the objects listed before it (a partial relist, not counted as the initial population); we key and transform the whole list before queueing anything",
		Upstream:   Version + "/tools/cache/delta_fifo.go:631-640, 491-516",
		Class:      checkkit.ClassDefect,
		Evidence:   Version + "/tools/cache/delta_fifo.go:610 says \"Replace atomically does two things\"; a Replace that fails part-way leaves a partial relist queued",
	},
	{
		Check:      pfifo.DeltaComponent + "/" + pfifo.CheckRetention,
		Guarantees: []string{pfifo.GRetention},
		Shape:      `^No retention: New\([^)]*\): a popped object\'s key is still referenced by the FIFO`,
		Reason:     "Pop reslices its key queue (f.queue = f.queue[1:]), so the backing array keeps every popped key until an append reallocates it",
		Upstream:   Version + "/tools/cache/delta_fifo.go:578",
		Class:      checkkit.ClassDefect,
		Evidence:   "no doc allows a popped key to stay referenced: Pop hands the item over (" + Version + "/tools/cache/delta_fifo.go:550-562) and nothing documents the backing array keeping its key; no upstream issue found",
	},
}, syncTransform(pfifo.CheckRules, pfifo.GDeltas), syncTransform(pfifo.CheckModel, pfifo.GDeltas),
	syncTransform(pfifo.CheckDedup, pfifo.GDeltas), syncTransform(pfifo.CheckFaults, pfifo.GDeltas),
	syncTransform(pfifo.CheckReplace, pfifo.GDeltas), syncTransform(pfifo.CheckCollaborators, pfifo.GKnownFaults, pfifo.GFailedCall),
	// error-paths: the partial relist (as from v0.31) or the transform.
	func() checkkit.Divergence {
		d := syncTransform(pfifo.CheckErrorPaths, pfifo.GFailedCall)
		d.Shape += `|^Failed call: popped \[[^\]]*\], want key \w+\'s deltas \[[^\]]*\] .*\(after Replace\(`
		d.Reason += "; and, as from v0.31, a Replace that fails part-way leaves a partial relist queued"
		return d
	}())

// RealFIFODivergences are cache.RealFIFO's known differences from the
// FIFO contract.
var RealFIFODivergences = append([]checkkit.Divergence{
	{
		Check:      pfifo.RealComponent + "/" + pfifo.CheckBadInput,
		Guarantees: []string{pfifo.GBadInput},
		Shape:      `^Bad input rejected: New\([^)]*\): ((Add|Update|Delete|Replace) of no name returned no error|(Add|Update|Delete|Replace) of typed nil panicked: runtime error: invalid memory address or nil pointer dereference)|^Bad input rejected: New\(atomic[^)]*\): Replace of (nil|int|typed nil) returned no error`,
		Reason:     "in atomic mode Replace wraps the list in one ReplacedAll without computing any key, so objects without a key are accepted and fail later, in processing; MetaNamespaceKeyFunc also accepts an object without a name (key \"\"); we reject both",
		Upstream:   Version + "/tools/cache/the_real_fifo.go:295-322, store.go:154-181",
		Class:      checkkit.ClassDefect,
		Evidence: Version + "/tools/cache/store.go:73-75: Replace \"will delete the contents of the store, using instead the given list\"; an atomic RealFIFO Replace returns nil for a list holding a keyless object, " +
			"and the whole ReplacedAll then fails in processing (controller.go:972-1000, before clientState.Replace), so a relist reported as accepted is lost; no doc allows it",
	},
	{
		Check:      pfifo.RealComponent + "/" + pfifo.CheckErrorPaths,
		Shape:      `^Failed call: (Replace\([^)]*nokey[^)]*\) returned no error, want one|popped \[[^\]]*\], want .*\(after Replace\()`,
		Guarantees: []string{pfifo.GFailedCall},
		Reason:     "an atomic Replace keys none of its objects, so a relist holding one without a key is accepted (and fails later, in processing); a non-atomic Replace queues its tombstones and the objects listed before one the transformer rejects, then returns the error (a partial relist); we key and transform the whole list before queueing anything",
		Upstream:   Version + "/tools/cache/the_real_fifo.go:295-322, 604-621, 674-732",
		Class:      checkkit.ClassDefect,
		Evidence: Version + "/tools/cache/store.go:73-75: Replace \"will delete the contents of the store, using instead the given list\", and the_real_fifo.go:57-59 promises one atomic event per Replace in atomic mode; " +
			"instead an atomic relist with a keyless object is accepted and lost in processing, and a non-atomic one leaves a partial relist queued when it returns its error",
	},
	{
		Check:      pfifo.RealComponent + "/" + pfifo.CheckOptions,
		Guarantees: []string{pfifo.GOptions},
		Shape:      `^Bad options rejected: New \([^)]*\) panicked: coding error: `,
		Reason:     "NewRealFIFOWithOptions panics (\"coding error: ...\") on an invalid combination of options; ours returns an error",
		Upstream:   Version + "/tools/cache/the_real_fifo.go:813-830",
		Class:      checkkit.ClassDesign,
		Evidence: Version + "/tools/cache/the_real_fifo.go:49,60,66,78 document the option rules (\"If AtomicEvents is true, KnownObjects must be nil\", ...) and NewRealFIFOWithOptions, which has no error result, " +
			"deliberately panics on a breach with \"coding error: ...\" (:813-828)",
	},
	syncedEarly(pfifo.CheckSynced, ""),
	syncedEarly(pfifo.CheckExhaustive, "<v0.38.0-beta.0"),
}, batchKeys(pfifo.CheckAtomic, pfifo.GBatch), batchKeys(pfifo.CheckBatch, pfifo.GBatch), batchKeys(pfifo.CheckFaults, pfifo.GBatch),
	batchKeys(pfifo.CheckModel, pfifo.GBatch), batchKeys(pfifo.CheckRules, pfifo.GBatch), batchKeys(pfifo.CheckCollaborators, pfifo.GKnownFaults, pfifo.GFailedCall),
	// exhaustive from v0.38: the batch rule (a design change) and the
	// early sync (a defect).
	batchKeys(pfifo.CheckExhaustive, pfifo.GBatch).Or(syncedEarly(pfifo.CheckExhaustive, "")))

// syncedEarly declares RealFIFO's early sync when its first Replace lands
// while a delta popped before it is processed unlocked, on check, for
// releases (every release with RealFIFO's options if "").
func syncedEarly(check, releases string) checkkit.Divergence {
	return checkkit.Divergence{
		Check: pfifo.RealComponent + "/" + check, Releases: releases,
		Guarantees: []string{pfifo.GSynced, pfifo.GInitial},
		Shape:      `^(HasSynced|isInInitialList): .* \(the initial population is the one PopReplace\(\d+,\d+\)'s Replace set, made while a delta popped before it was processed\)$`,
		Reason: "with UnlockWhileProcessing, a Replace may land while a delta is processed; if it is the first (a bookmark or a resync's SyncAll was queued before the FIFO was populated), it sets the initial population to what is then queued, and the pop in progress counts itself down from it when its process func returns although it was popped before: " +
			"the FIFO reports synced one delta early, while the relist's ReplacedAll is still queued; we decide when a pop begins whether it counts",
		Upstream: Version + "/tools/cache/the_real_fifo.go:405-418, 454-466, 624-628",
		Class:    checkkit.ClassDefect,
		Evidence: Version + "/tools/cache/the_real_fifo.go:411-412: the count goes down in a defer \"so concurrent calls to hasSynced will not incorrectly return true while processing is still happening\", yet with the lock released during processing (:454-466) a concurrent first Replace makes it return true before the initial population is processed; " +
			"the informer's own use does not reach it (its reflector queues nothing before its first Replace), a direct user of RealFIFO does; no upstream issue found",
	}
}
