// Package realfifo is client-go's RealFIFO (tools/cache/the_real_fifo.go,
// v0.37.2), the queue informers use: every change is one delta, queued in
// arrival order and handed out in that order, never coalesced.
//
// # Semantics (as client-go)
//
//   - Add, Update and Delete queue one delta each; Delete is never dropped
//     (unlike DeltaFIFO's). Each marks the FIFO populated.
//   - Pop hands over the oldest delta as a one-delta delta.Deltas and
//     clears its slot; PopBatch hands over up to BatchSize deltas, stopping
//     at the end of the initial population, at a delta that is not
//     batchable (taken alone if it is the oldest), after a delta whose key
//     cannot be computed, and before a second delta of one key; a batch of
//     one goes to processSingle (the_real_fifo.go:486-583).
//   - The initial population's count goes down after the process func
//     returns (deferred, so also when it panics): Done closes only once
//     the last initial delta has been processed. isInInitialList is "not
//     synced when the pop began".
//   - Process funcs run under the FIFO's lock, unless
//     UnlockWhileProcessing is set and fewer than 2*BatchSize deltas are
//     queued (the_real_fifo.go:454-466).
//   - Atomic mode (the informer's): Replace queues one ReplacedAll delta
//     with the transformed list, Resync one SyncAll delta, Bookmark (with
//     Options.Bookmarks) one Bookmark delta; delta.Process applies them.
//   - Non-atomic mode: Replace queues tombstones for queued keys (first
//     queued first) not listed whose last delta is not a Deleted (Obj: that
//     delta's object), then for known keys neither listed nor queued (Obj:
//     the known object or nil), then Replaced for each listed object in list
//     order; Resync queues Sync with the known object for known keys with
//     nothing queued, untransformed.
//   - The first Replace of a FIFO not yet populated makes every delta then
//     queued the initial population (the_real_fifo.go:624-628).
//   - Pop and PopBatch block while the FIFO is empty; after Close the
//     remaining deltas still pop, then delta.ErrClosed. Errors of process
//     funcs are returned; nothing is requeued.
//
// # Decided differences from client-go
//
//   - Invalid options are an error from New (wrapping ErrInvalidOptions),
//     not a panic (the_real_fifo.go:813-830): Atomic with Known; without
//     Atomic, UnlockWhileProcessing, Bookmarks or no Known. A negative
//     BatchSize is one too (client-go has no such option).
//   - Replace is all or nothing: the key of every listed object is
//     computed and every object transformed before anything is queued; an
//     error returns and the FIFO is unchanged. client-go transforms in
//     non-atomic mode after queueing the tombstones, so a transform error
//     leaves them queued without the listed objects
//     (the_real_fifo.go:612-621, 727-732); in atomic mode it does not key
//     the list at all (the_real_fifo.go:295-322), so a bad object reaches
//     the consumer, whose ReplacedAll processing then fails and drops the
//     whole relist; here Replace rejects it and the reflector retries.
//   - Resync's error for a known object whose key cannot be computed is
//     that error, wrapped; client-go wraps the lookup's err, which is nil
//     there (the_real_fifo.go:780-783).
//   - A nil or typed-nil object is a delta.KeyError, checked before
//     Options.KeyFunc is called; client-go's MetaNamespaceKeyFunc panics on
//     a typed nil (keyOf, the_real_fifo.go:197-211).
//   - Whether a popped delta counts toward the initial population is
//     decided when it is popped, not when its process func returns
//     (the_real_fifo.go:413-418, 544-549). They differ only with
//     UnlockWhileProcessing, when the first Replace lands while a delta
//     queued before it (a Bookmark or SyncAll) is being processed: client-go
//     then counts that delta as one of the Replace's and syncs one delta
//     early.
//   - HasSynced and IsClosed take no lock (client-go's do,
//     the_real_fifo.go:215-219, 375-379), so a process func may call them.
//   - The queue's array is compacted as it drains and dropped when it
//     empties, so memory returns after a burst; client-go reslices
//     (the_real_fifo.go:409, 540) and keeps the array until an append
//     reallocates it. Slots are cleared on pop, as in client-go.
//   - Slow pops (depth after the pop > 10; more than 100 ms, or 100 ms per
//     delta up to 1 s for a batch) are reported to Options.SlowProcess, or
//     without one traced with k8s.io/utils/trace as in client-go, by
//     delta.TraceSlowPop: the trace is made only for a slow pop, after the
//     fact (client-go makes one for every pop under a backlog, half the cost
//     of such a pop), so the time process took is its Took field; it is not
//     logged at exactly the threshold (client-go's LogIfLong compares with
//     >=). Metrics, names, identifiers and logger options are not
//     offered; lookup errors and misses are reported with
//     utilruntime.HandleErrorWithContext.
package realfifo
