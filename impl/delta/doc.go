// Package delta holds what both of our FIFOs (impl/deltafifo, impl/realfifo)
// and the informer's processing path share: deltas and their types, the
// tombstone of an object whose deletion was missed, key functions over
// apimachinery's meta.Accessor, and Process, which turns popped deltas into
// store updates and handler notifications (client-go's processDeltas,
// tools/cache/controller.go:823-1016 in v0.37.2).
//
// # Keys
//
// MetaNamespaceKey is "namespace/name" (or "name"); DeletionHandlingKey also
// keys a DeletedFinalStateUnknown by its Key. Unlike client-go's
// MetaNamespaceKeyFunc, a nil object, a typed nil (IsNil) and an object
// without a name are errors, never a panic or an empty key. The FIFOs and
// impl/store check IsNil themselves before calling a key function, so a
// caller's own key function is never handed a nil.
//
// # Processing
//
// Process applies one popped Deltas to a Store and tells a Handler, as
// client-go's processDeltas does; ProcessBatch does the same for a batch
// popped by RealFIFO.PopBatch, one delta at a time (client-go's
// processDeltasInBatch for a store without transactions). A ReplacedAll
// delta is reconciled against the store's keys: deletions first, in the
// store's key order, then adds and updates in list order. See Process for
// the rules and the two places where it differs from client-go (a SyncAll
// delta does not end the Deltas; an unknown delta type is an error).
package delta
