package controller

import spec "github.com/kverify/kverify/spec/controller"

// Component is the registry's name for the controller's checks.
const Component = "controller"

// The guarantees the controller checks name in violations.
const (
	// GOneAtATime: two reconciles of one key overlapped.
	GOneAtATime = "one at a time: no two reconciles of a key overlap"
	// GWorkers: more reconciles ran at once than there are
	// workers.
	GWorkers = "at most Workers reconciles run at once"
	// GCaughtUp: a reconcile read a cache older than a
	// notification of its key made before it started.
	GCaughtUp = "a reconcile reads a cache at or after every notification of its key before it started"
	// GMonotonic: between two reconciles of a key the cache went
	// back in time.
	GMonotonic = "monotonic reads: between two reconciles of a key the cache never goes back (relists included)"
	// GBusyLoop: a key was reconciled again with no notification,
	// failure or requeue since its last reconcile.
	GBusyLoop = "no busy loop: a key is reconciled again only after a notification, a failure or a requested requeue"
	// GRetryDelay: a failed key was retried faster (or, when the
	// controller is idle, at another time) than the limiter's delay.
	GRetryDelay = "a failed key is retried at the rate limiter's delay, its failures forgotten on success"
	// GRequeue: a requested requeue came early, late or never.
	GRequeue = "a requested requeue reconciles the key again after its delay"
	// GEventual: once nothing changed, a key's last reconcile did
	// not succeed reading the server's state of it.
	GEventual = "eventual reconcile: once faults and writes stop, every key's last reconcile succeeded reading the server's state (absent for a deleted key)"
	// GWakeup: a change that landed while its key was being
	// reconciled did not cause another reconcile.
	GWakeup = "no lost wake-up: a change during its key's reconcile reconciles the key again"
	// GIsolation: a slow or panicking reconcile stopped others.
	GIsolation = "isolation: a slow or panicking reconcile does not stop the other keys' reconciles, and a panicking key is retried"
	// GSyncFirst: a reconcile ran before the informer's first list
	// was processed.
	GSyncFirst = "no reconcile before the informer's first list is in its cache and reached the handler"
	// GStop: a reconcile started after cancel, or Run returned
	// before the reconciles in flight returned, or not once they had.
	GStop = "stop: no reconcile starts after cancel; Run returns once the reconciles in flight returned, and not before"
	// GNothingAfter: something of the controller ran after Run
	// returned, or a second Run did not return at once.
	GNothingAfter = "nothing of the controller runs after Run returned; a second Run returns at once"
	// GBadInput: the constructor accepted, or panicked on, a setup
	// it cannot run.
	GBadInput = "bad input rejected"
	// GConstruction: the constructor failed on a valid setup.
	GConstruction = "construction"
	// GModelServer: the check's own server refused one of its
	// writes: the check, not the subject, is at fault.
	GModelServer = "the model server accepts the check's writes"
)

// Guarantees lists every guarantee above.
func Guarantees() []string {
	return []string{GOneAtATime, GWorkers, GCaughtUp, GMonotonic, GBusyLoop,
		GRetryDelay, GRequeue, GEventual, GWakeup, GIsolation,
		GSyncFirst, GStop, GNothingAfter, GBadInput, GConstruction,
		GModelServer}
}

// byPromise names the guarantee each of the ledger's promises is.
var byPromise = map[string]string{
	spec.PromiseOneAtATime: GOneAtATime,
	spec.PromiseCaughtUp:   GCaughtUp,
	spec.PromiseMonotonic:  GMonotonic,
	spec.PromiseBusyLoop:   GBusyLoop,
	spec.PromiseRetryDelay: GRetryDelay,
	spec.PromiseRequeue:    GRequeue,
	spec.PromiseEventual:   GEventual,
	spec.PromiseStopped:    GNothingAfter,
	stopPromise:            GStop,
	workersPromise:         GWorkers,
	syncPromise:            GSyncFirst,
}

// GuaranteeOf is the guarantee a promise of spec/controller's ledger is,
// as the checks name it in violations ("" for another name).
func GuaranteeOf(promise string) string { return byPromise[promise] }
