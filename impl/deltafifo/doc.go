// Package deltafifo is client-go's DeltaFIFO (tools/cache/delta_fifo.go,
// v0.37.2): a producer-consumer queue of keys, each with every change
// (delta) seen for it since it was last popped. A reflector produces (Add,
// Update, Delete, Replace, Resync); one consumer pops.
//
// # Semantics (as client-go)
//
//   - Per-key accumulation, first-touch order: a key is queued when it gets
//     its first delta and keeps its place when it gets more; Pop takes the
//     oldest-queued key with all its deltas, oldest first, as a
//     delta.Deltas, and forgets the key.
//   - Only deletions coalesce: a Deleted appended after a Deleted leaves
//     one, the newer if the older is a DeletedFinalStateUnknown, else the
//     older (isDeletionDup, delta_fifo.go:469-478). Every other sequence is
//     kept as it came.
//   - Delete is dropped when the deletion was presumably already reported:
//     without Options.Known, when nothing is queued for the key; with
//     Known, when Known does not have it (lookup succeeded) and nothing is
//     queued.
//   - Replace queues Sync (Replaced with Options.EmitReplaced) for each
//     listed object, in list order, then tombstones for queued keys not
//     listed (Obj: newest queued object, unwrapped if a tombstone), then for
//     known keys neither listed nor queued (Obj: the known object, nil if
//     the lookup fails).
//   - Resync queues Sync with the known object for each known key that has
//     nothing queued; nothing without Known.
//   - Options.Transform runs exactly once on every object given to Add,
//     Update, Delete (if not dropped) and Replace; never on Sync objects
//     from Known nor on tombstones. Keys are computed before transforming.
//   - Initial population: the first Replace before any Add, Update or
//     Delete makes its distinct listed keys plus its tombstones the initial
//     population; Add, Update or Delete first make the FIFO synced at once
//     (Add and Update even when they fail on a bad object; Delete only
//     once its key is computed). The pops of the initial population get
//     isInInitialList true, later ones false.
//   - Pop blocks while the FIFO is empty; after Close the remaining keys
//     still pop, then Pop returns delta.ErrClosed. Close does not reject
//     producers. A process error is returned with the deltas; nothing is
//     requeued (there is no ErrRequeue in v0.37.2).
//   - The process func runs with the FIFO locked, so it can update the
//     consumer's store (Known) consistently with the queue. It may call
//     HasSynced, Done and IsClosed (lock-free here; client-go's HasSynced
//     and IsClosed lock, delta_fifo.go:346-350, 544-548, and deadlock
//     there), no other method.
//
// # Decided differences from client-go
//
//   - Synced after processing. HasSynced and Done turn true only when the
//     process func of the last initial item has returned; client-go counts
//     the item down before calling process (delta_fifo.go:580-583), so Done
//     closes while the last initial item is still being processed.
//     isInInitialList is still "not synced when the pop began", so every
//     initial item, the last included, gets true.
//   - Replace is all or nothing: every key is computed and every listed
//     object transformed before anything is queued; a key or transform
//     error returns and the FIFO is unchanged. client-go queues the list
//     one object at a time and returns on the first error, leaving the
//     objects before it queued and no tombstones (delta_fifo.go:631-640).
//   - Tombstones for queued keys come in queue order; client-go ranges over
//     its map, in random order (delta_fifo.go:644).
//   - A nil or typed-nil object (a nil *T in an interface) is a
//     delta.KeyError, checked before Options.KeyFunc is called. client-go's
//     MetaNamespaceKeyFunc panics on a typed nil through meta.Accessor
//     (KeyOf, delta_fifo.go:326-337). KeyOf of an empty Deltas returns
//     delta.ErrZeroLengthDeltas itself, not wrapped in a KeyError.
//   - A process func that panics: the key is already removed, the initial
//     population is counted down (deferred) and the lock released (deferred)
//     before the panic reaches Pop's caller, so the FIFO stays consistent
//     and usable. client-go is consistent too, because it counts down before
//     process (delta_fifo.go:580-590); we keep that with the later count.
//   - No retention: a popped key's slot in the key queue is cleared and the
//     queue's array is compacted as it drains, and the map of queued keys
//     is made anew when it empties after holding more than 1024 keys, so
//     neither a popped Deltas, its objects nor its key stay reachable from
//     the FIFO. client-go reslices its key queue (f.queue[1:],
//     delta_fifo.go:578), which keeps popped keys in the backing array
//     until an append reallocates it. A Deleted coalesced away has its slot
//     cleared as well.
//   - Slow-process warning: when a pop leaves more than SlowDepth (10) keys
//     queued and process takes more than SlowTook (100 ms), Pop calls
//     Options.SlowProcess(key, depth, took) after releasing the lock. If it
//     is nil, Pop logs a k8s.io/utils/trace trace as client-go does
//     (delta_fifo.go:591-602), with delta.TraceSlowPop: the trace is made
//     only for a slow pop, after the fact (client-go makes one for every pop
//     under a backlog, half the cost of such a pop), so the time process
//     took is its Took field; it is logged after the lock is released, not
//     when process panics, and not at exactly 100 ms (client-go's LogIfLong
//     compares with >=).
//   - Dropped: the "Inconceivable" branch for a queued key without deltas
//     (delta_fifo.go:584-589), impossible here; the Info logs for a known
//     key whose lookup finds nothing (delta_fifo.go:683, 727); lookup errors
//     are reported with utilruntime.HandleErrorWithContext. Name,
//     HasSyncedChecker, Transformer and the logger options are not offered.
//
// # Extras
//
// List, ListKeys, Get and GetByKey read the queue without changing it
// (client-go removed them): they return copies, in queue order.
package deltafifo
