package fifo

import "github.com/kverify/kverify/props/checkkit"

// The guarantees the FIFO checks name in violations.
const (
	// GOrder: a Pop returned another key, or another delta, than the
	// model's next.
	GOrder = "Pop order"
	// GDeltas: a popped key's deltas differ from the model's
	// (accumulation, dedup, Replace's, Resync's).
	GDeltas = "Deltas"
	// GSynced: HasSynced differs from the model's (initial population,
	// never reverting, true only once the last initial item is
	// processed).
	GSynced = "HasSynced"
	// GInitial: a pop or an add carried the wrong isInInitialList flag.
	GInitial = "isInInitialList"
	// GClosed: Close, IsClosed or a Pop after Close behaved otherwise
	// than the model.
	GClosed = "Close"
	// GErrors: a call returned an error the model does not (or none
	// where it does).
	GErrors = "Errors"
	// GBatch: PopBatch's batch boundaries or process-func choice differ
	// from the model's.
	GBatch = "PopBatch"
	// GProcess: processDeltas left the store or the notifications other
	// than the model.
	GProcess = "Processing"
	// GNoPanic is checkkit's: a call panicked.
	GNoPanic = checkkit.GNoPanic
	// GConsistent: a process func's error or panic was not propagated by
	// Pop, or left the FIFO inconsistent.
	GConsistent = "Consistent on fault"
	// GLinear: a concurrent history has no sequential order that is a run
	// of the model.
	GLinear = "Linearizable"
	// GAtomic: two racing calls gave an outcome no serial order of the
	// two gives.
	GAtomic = "Atomic calls"
	// GLiveness: of two racing calls, one is still blocked after the
	// other returned.
	GLiveness = "Liveness"
	// GSlow: the slow-pop warning fired for a pop the rule does not
	// cover, not exactly once, or with the wrong key, depth or duration.
	GSlow = "Slow-pop warning"
	// GBadInput: an invalid object or list was accepted, panicked, or was
	// rejected after changing the FIFO.
	GBadInput = "Bad input rejected"
	// GRetention: a popped object or its key is still referenced by the
	// FIFO.
	GRetention = "No retention"
	// GUnlock: Update or HasSynced could not complete while a process
	// func ran, or an update made then was lost.
	GUnlock = "Unlocked while processing"
	// GOptions: an invalid combination of options was accepted, or New
	// panicked on it.
	GOptions = "Bad options rejected"
	// GWake: Close did not wake every Pop blocked on an empty FIFO with
	// an error and no process call (or such a Pop did not block).
	GWake = "Close wakes Pop"
	// GFailedCall: a call given an object the key function or the
	// transformer rejects (a relist listing one) returned no error, or
	// left the FIFO otherwise than the model: something queued, HasSynced
	// or the initial population changed where client-go leaves them.
	GFailedCall = "Failed call"
	// GKnownFaults: a failing lookup of the known objects, a key they list
	// but do not have, or a known object without a key was handled
	// otherwise than client-go: the deletion queued, the tombstone without
	// (or with the returned) object, the key skipped, Resync's error.
	GKnownFaults = "Known-objects faults"
)

// Guarantees returns every guarantee the FIFO checks can name in a
// violation (besides checkkit's GTermination, which any check can).
func Guarantees() []string {
	return []string{GOrder, GDeltas, GSynced, GInitial, GClosed, GErrors, GBatch, GProcess, GNoPanic, GConsistent,
		GLinear, GAtomic, GLiveness, GSlow, GBadInput, GRetention, GUnlock, GOptions, GWake, GFailedCall, GKnownFaults}
}
