package controller

import spec "github.com/kverify/kverify/spec/controller"

// Component is the registry's name for the controller's checks.
const Component = "controller"

// The guarantees the controller checks name in violations.
const (
	// GuaranteeOneAtATime: two reconciles of one key overlapped.
	GuaranteeOneAtATime = "one at a time: no two reconciles of a key overlap"
	// GuaranteeWorkers: more reconciles ran at once than there are
	// workers.
	GuaranteeWorkers = "at most Workers reconciles run at once"
	// GuaranteeCaughtUp: a reconcile read a cache older than a
	// notification of its key made before it started.
	GuaranteeCaughtUp = "a reconcile reads a cache at or after every notification of its key before it started"
	// GuaranteeMonotonic: between two reconciles of a key the cache went
	// back in time.
	GuaranteeMonotonic = "monotonic reads: between two reconciles of a key the cache never goes back (relists included)"
	// GuaranteeBusyLoop: a key was reconciled again with no notification,
	// failure or requeue since its last reconcile.
	GuaranteeBusyLoop = "no busy loop: a key is reconciled again only after a notification, a failure or a requested requeue"
	// GuaranteeRetryDelay: a failed key was retried faster (or, when the
	// controller is idle, at another time) than the limiter's delay.
	GuaranteeRetryDelay = "a failed key is retried at the rate limiter's delay, its failures forgotten on success"
	// GuaranteeRequeue: a requested requeue came early, late or never.
	GuaranteeRequeue = "a requested requeue reconciles the key again after its delay"
	// GuaranteeEventual: once nothing changed, a key's last reconcile did
	// not succeed reading the server's state of it.
	GuaranteeEventual = "eventual reconcile: once faults and writes stop, every key's last reconcile succeeded reading the server's state (absent for a deleted key)"
	// GuaranteeWakeup: a change that landed while its key was being
	// reconciled did not cause another reconcile.
	GuaranteeWakeup = "no lost wake-up: a change during its key's reconcile reconciles the key again"
	// GuaranteeIsolation: a slow or panicking reconcile stopped others.
	GuaranteeIsolation = "isolation: a slow or panicking reconcile does not stop the other keys' reconciles, and a panicking key is retried"
	// GuaranteeSyncFirst: a reconcile ran before the informer's first list
	// was processed.
	GuaranteeSyncFirst = "no reconcile before the informer's first list is in its cache and reached the handler"
	// GuaranteeStop: a reconcile started after cancel, or Run returned
	// before the reconciles in flight returned, or not once they had.
	GuaranteeStop = "stop: no reconcile starts after cancel; Run returns once the reconciles in flight returned, and not before"
	// GuaranteeNothingAfter: something of the controller ran after Run
	// returned, or a second Run did not return at once.
	GuaranteeNothingAfter = "nothing of the controller runs after Run returned; a second Run returns at once"
	// GuaranteeBadInput: the constructor accepted, or panicked on, a setup
	// it cannot run.
	GuaranteeBadInput = "bad input rejected"
	// GuaranteeConstruction: the constructor failed on a valid setup.
	GuaranteeConstruction = "construction"
	// GuaranteeModelServer: the check's own server refused one of its
	// writes: the check, not the subject, is at fault.
	GuaranteeModelServer = "the model server accepts the check's writes"
)

// Guarantees lists every guarantee above.
func Guarantees() []string {
	return []string{GuaranteeOneAtATime, GuaranteeWorkers, GuaranteeCaughtUp, GuaranteeMonotonic, GuaranteeBusyLoop,
		GuaranteeRetryDelay, GuaranteeRequeue, GuaranteeEventual, GuaranteeWakeup, GuaranteeIsolation,
		GuaranteeSyncFirst, GuaranteeStop, GuaranteeNothingAfter, GuaranteeBadInput, GuaranteeConstruction,
		GuaranteeModelServer}
}

// byPromise names the guarantee each of the ledger's promises is.
var byPromise = map[string]string{
	spec.PromiseOneAtATime: GuaranteeOneAtATime,
	spec.PromiseCaughtUp:   GuaranteeCaughtUp,
	spec.PromiseMonotonic:  GuaranteeMonotonic,
	spec.PromiseBusyLoop:   GuaranteeBusyLoop,
	spec.PromiseRetryDelay: GuaranteeRetryDelay,
	spec.PromiseRequeue:    GuaranteeRequeue,
	spec.PromiseEventual:   GuaranteeEventual,
	spec.PromiseStopped:    GuaranteeNothingAfter,
	stopPromise:            GuaranteeStop,
	workersPromise:         GuaranteeWorkers,
	syncPromise:            GuaranteeSyncFirst,
}

// GuaranteeOf is the guarantee a promise of spec/controller's ledger is,
// as the checks name it in violations ("" for another name).
func GuaranteeOf(promise string) string { return byPromise[promise] }
