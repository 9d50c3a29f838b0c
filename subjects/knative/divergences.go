package knative

import (
	"slices"

	"github.com/kverify/kverify/props/checkkit"
	pctrl "github.com/kverify/kverify/props/controller"
	pwq "github.com/kverify/kverify/props/workqueue"
	"github.com/kverify/kverify/subjects/upstream"
)

// twoLane is the source the declarations cite.
const twoLane = Version + "/controller/two_lane_queue.go"

// drainSpins is the two-lane queue's ShutDownWithDrain: the fast lane's
// alone, promoted from the embedded queue, so the slow lane and the
// consumer never shut down; and once the fast lane's channel is closed the
// consumer loop spins on it. In a synctest bubble the spin shows as a
// bubble that cannot become quiescent.
var drainSpins = checkkit.Divergence{
	Guarantees: []string{checkkit.GTermination},
	Shape:      `^Termination: no progress while the process was given .*the subject spins (or polls )?instead of blocking`,
	Reason: "ShutDownWithDrain is not overridden: it is the fast lane's, promoted from the embedded RateLimitingInterface, so the slow lane stays open, the consumer goroutine never ends and Get never returns shutdown; " +
		"and runConsumer's second select keeps receiving from the fast lane's closed channel, so from the fast lane's end to the slow lane's (for good after ShutDownWithDrain) the consumer spins a CPU",
	Upstream: twoLane + ":25-37,77-131",
	Class:    checkkit.ClassDefect,
	Evidence: "the interface Impl.WorkQueue() returns promises that ShutDownWithDrain lets the workers drain the queue and then tells them to exit (k8s.io/client-go util/workqueue queue.go); the two-lane queue's own ShutDown shuts both lanes (two_lane_queue.go:125-131); " +
		"reproducer traces/findings/knative/twolane-drain-never-shuts-down (Get blocks, 660ms of CPU in 1s); knative/pkg#3206 (2025-07, after the pin) drains both lanes, but its drain still does not wait for the items workers hold",
}

// lenCounts is the two-lane queue's Len: the sum of its three queues'.
var lenCounts = checkkit.Divergence{
	Guarantees: []string{pwq.GImmediate},
	Shape:      `^Immediate: Len\(\) = \d+ right after (AddRateLimited|AddAfter|Add)\([a-z]+,(0s|-[0-9hmsµn.]+)\) returned, want \d+: (the item was not added before the call returned|the queue counts an item it should not hold)`,
	Reason:     "Len is the sum of the fast lane's, the slow lane's and the consumer queue's lengths, read one after the other, so an item added to the fast lane while the consumer queue holds it counts twice until the lane's goroutine hands it over (the consumer queue then keeps one), and an item the goroutine holds between the two counts not at all",
	Upstream:   twoLane + ":148-152",
	Class:      checkkit.ClassDesign,
	Evidence:   "two_lane_queue.go:148-149: \"Len returns the sum of lengths. NB: actual _number_ of unique object might be less than this sum.\"",
}

// QueueDivergences are the two-lane queue's declared differences from the
// plain queue's contract.
var QueueDivergences = []checkkit.Divergence{
	with(drainSpins, pwq.CheckDrain), with(drainSpins, pwq.CheckDoneUnheld), with(drainSpins, pwq.CheckModel),
	with(drainSpins, pwq.CheckExhaustive), with(drainSpins, pwq.CheckLeak), with(drainSpins, pwq.CheckLifecycle),
	with(drainSpins, pwq.CheckRace),
}

// DelayingDivergences are its declared differences from the delaying
// queue's.
var DelayingDivergences = []checkkit.Divergence{
	with(drainSpins, pwq.CheckDelayingLeak), with(drainSpins, pwq.CheckDelayingLifecycle),
	with(drainSpins, pwq.CheckDelayingRetention), with(drainSpins, pwq.CheckDelayingShutdown),
	with(lenCounts.Or(drainSpins), pwq.CheckDelayingModel),
	clientGo(upstream.DelayingDivergences, pwq.CheckDelayingTies),
}

// clientGo is client-go's declaration of check, which the two-lane queue
// inherits: its lanes are client-go's rate-limiting queues (its fast lane
// is where Add, AddAfter and AddRateLimited go).
func clientGo(ds []checkkit.Divergence, check string) checkkit.Divergence {
	i := slices.IndexFunc(ds, func(d checkkit.Divergence) bool { return d.Check == check })
	if i < 0 {
		panic("knative: client-go declares nothing for " + check)
	}
	d := ds[i]
	d.Reason = "the fast lane is client-go's delaying queue: " + d.Reason
	return d
}

// RateLimitDivergences are its declared differences from the
// rate-limiting queue's.
var RateLimitDivergences = []checkkit.Divergence{
	with(lenCounts.Or(drainSpins), pwq.CheckRateLimitingModel),
	with(lenCounts.Or(drainSpins), pwq.CheckRateLimitingDelegate),
	with(lenCounts.Or(drainSpins), pwq.CheckRateLimitingExhaustive),
}

// with returns d declared for check.
func with(d checkkit.Divergence, check string) checkkit.Divergence {
	d.Check = check
	return d
}

// The sources the controller declarations cite.
const (
	controllerGo = Version + "/controller/controller.go"
	informerGo   = "k8s.io/client-go@v0.37.2/tools/cache/shared_informer.go"
)

// requeueKeepsFailures is NewRequeueAfter's path through the Impl: the
// requeue is an error, handled without Forget.
var requeueKeepsFailures = checkkit.Divergence{
	Check:      pctrl.CheckRetry,
	Guarantees: []string{pctrl.GRetryDelay},
	Shape:      `: a failure, a requeue after 5s, a failure \(a requeue forgets the failures: base again\): the reconciles came \[1s 5s 2s\] apart, want \[1s 5s 1s\]$`,
	Reason: "a knative reconciler asks for a requeue by returning controller.NewRequeueAfter(d), an error: processNextWorkItem Forgets a key only when Reconcile returns nil (controller.go:547-549) and handleErr answers a requeueKeyError with AddAfter alone (:560-564), " +
		"so the key's failures are kept across a requeue and its next failure backs off from where the last left (the check: fail, requeue after 5s, fail is retried after 2s, not the base 1s); a reconciler that requeues with Impl.EnqueueKeyAfter and returns nil is forgotten instead",
	Upstream: controllerGo + ":519-553,555-564,683-687",
	Class:    checkkit.ClassDesign,
	Evidence: "a requeue is an error to the Impl by construction: NewRequeueAfter \"returns a new instance of requeueKeyError. Users can return this type of error to requeue a key after a delay\" (controller.go:683-687), and the Impl reports it as a failed reconcile (ReportReconcile status \"false\", :520-525); " +
		"processNextWorkItem's comment states the rule it follows: \"We also must remember to call Forget if reconcile succeeds. If a transient error occurs, we do not call Forget\" (:527-531); " +
		"knative/pkg#2201 (mattmoor, 2021-07-29), which added NewRequeueAfter, \"modeled after some of the semantics available in controller-runtime's Result type\" (which forgets on a requeue), does not take up the limiter; unchanged on knative/pkg main at 521cb33 (2026-07-27, controller.go:535-548); no upstream report found",
}

// syncOnInformer is the Impl started on the informer's HasSynced.
var syncOnInformer = checkkit.Divergence{
	Check:      pctrl.CheckSync,
	Guarantees: []string{pctrl.GSyncFirst},
	Shape:      `: a reconcile of \S+ started before the handler was given .* of the first list`,
	Reason: "knative starts its controllers once the informers' HasSynced holds (sharedmain: injection's StartInformers, cache.WaitForCacheSync(stopCh, informer.HasSynced), controller.go:729-741, then StartAll; RunInformers the same with WaitForCacheSyncQuick, :745-762), " +
		"which holds once the informer's store has the first list, not once the Impl's handler has been given it: the registration AddEventHandler returns is thrown away (informer.AddEventHandler(controller.HandleAll(impl.Enqueue)) in every knative controller constructor), so with a slow handler the workers reconcile the first keys while later ones are still being delivered",
	Upstream: controllerGo + ":729-741,745-762",
	Class:    checkkit.ClassDesign,
	Evidence: informerGo + ":203-210 documents it: \"Note that this doesn't tell you if an individual handler is synced!! For that, please call HasSynced on the handle returned by AddEventHandler\"; knative's Informer interface (controller.go:720-725) is Run and HasSynced alone, the informer's, as client-go's sample controller waits",
}

// panicEndsProcess is a reconcile panic under the Impl.
var panicEndsProcess = checkkit.Divergence{
	Check:      pctrl.CheckIsolation,
	Guarantees: []string{pctrl.GIsolation},
	Shape:      `: with o000's reconcile held: (default/o00[2-5]@\d+ read \[\]; )+default/o001 reconciled 0 times after its panic, want once more$`,
	Reason: "knative recovers no reconcile panic: processNextWorkItem calls the Reconciler bare (controller.go:542) and RunContext's workers are plain goroutines (:487-494); the deferred runtime.HandleCrash of RunContext (:462) runs on Run's goroutine, not a worker's, so a panicking reconcile ends the process (Go's unrecovered panic). " +
		"Contained for the check (the adapter turns the panic into the end of the worker's goroutine, running the deferred calls the unwinding would: processNextWorkItem's Done, the worker's WaitGroup Done), the worker is gone for good: with o000 held on the other of two workers nothing is reconciled, and o001 is not retried (Done without AddRateLimited)",
	Upstream: controllerGo + ":456-463,485-494,505-553",
	Class:    checkkit.ClassDesign,
	Evidence: "knative leaves panics to the process, as client-go does by default (apimachinery util/runtime/runtime.go:34-38, ReallyCrash \"defaults to true\"), and never opts out: there is no recover or RecoverPanic option on the Impl, on knative/pkg main at 521cb33 (2026-07-27) either; " +
		"a reconcile panic through knative.dev/pkg/controller.(*Impl).processNextWorkItem crashing a whole controller: tektoncd/pipeline#6885 (closed, fixed in Tekton's reconciler); controller-runtime recovers reconcile panics into errors and retries (RecoverPanic, default true)",
}

// drainsAfterCancel is RunContext's shutdown: the queue is drained.
var drainsAfterCancel = checkkit.Divergence{
	Guarantees: []string{pctrl.GStop},
	Shape:      `: a reconcile of \S+ started after Run's context was cancelled`,
	Reason: "when its context ends, RunContext shuts the two-lane queue down and then waits, polling every 100ms, until the queue's Len is 0 (controller.go:456-461): a client-go queue hands out the keys still queued after ShutDown (util/workqueue/queue.go), so the workers reconcile every key queued at cancel, with new reconciles starting after it, before Run returns " +
		"(the check: o002 queued behind o000 and o001, cancelled while they run, is reconciled once o000 returns); only the keys waiting out a delay (AddAfter, AddRateLimited) are dropped",
	Upstream: controllerGo + ":449-463",
	Class:    checkkit.ClassDesign,
	Evidence: "RunContext's doc: \"It then blocks until the context is cancelled, at which point it shuts down its internal work queue and waits for workers to finish processing their current work items\" (controller.go:449-453); the drain loop is deliberate: knative/serving#5470 (vagababov, 2019-09-10: \"Now that the controller knows how to wait for the queue to drain we can remove the sleeps\"); unchanged on knative/pkg main at 521cb33 (controller.go:442-451)",
}

// secondRunBlocks is RunContext on an Impl whose queue is shut down: it
// waits for its context all the same. Behind drainsAfterCancel in
// controller/stop (measured on its own: a second Run of a stopped
// controller had not returned a minute later).
var secondRunBlocks = checkkit.Divergence{
	Guarantees: []string{pctrl.GNothingAfter},
	Shape:      `: a second Run, after the first returned, does not return$`,
	Reason: "an Impl is single-use and does not say so: a second Run starts its workers on the shut-down queue (they return at once) and then blocks on <-ctx.Done() like the first (controller.go:485-498), until its context ends; " +
		"RunInformers on the stopped informer returns at once (client-go's Run of a started informer), so a second Run of the composition waits for its context",
	Upstream: controllerGo + ":454-501",
	Class:    checkkit.ClassDesign,
	Evidence: "RunContext's doc: it \"blocks until the context is cancelled\" (controller.go:449-453), with no word on a second call; knative runs each Impl once per process (sharedmain's StartAll)",
}

// watchListBackoff is client-go's reflector under the Impl's informer:
// its watch-list backoff ignores cancellation (client-go's defect, with
// its reproducer under traces/findings/client-go). controller/converge
// meets it now and then (a run that stops the controller while the
// reflector backs off from a refused or 429 watch-list request), as it
// does on the client-go and controller-runtime subjects.
var watchListBackoff = checkkit.Divergence{
	Check:        pctrl.CheckConverge,
	Intermittent: true,
	Guarantees:   []string{pctrl.GStop},
	Shape:        `: Run did not return after its context was cancelled, with 0 reconciles in flight and 0 handler calls in progress; (?s:.*)\(\*Reflector\)\.watchList`,
	Reason: "client-go's informer, which knative's injection informers are and controller.RunInformers runs (controller.go:745-762, whose wait is for the informer's Run to return): a refused or 429 watch-list request backs off with <-r.clock.After(r.delayHandler()) without watching the context, so stopping the controller waits out the backoff (up to 60s with jitter) when a run stops it there; " +
		"client-go's defect (traces/findings/client-go/reflector-watchlist-backoff-ignores-cancel), reached through knative's informer start",
	Upstream: "k8s.io/client-go@v0.37.2/tools/cache/reflector.go:811-819",
	Class:    checkkit.ClassDefect,
	Evidence: "k8s.io/client-go@v0.37.2/tools/cache/reflector.go:420-422: RunWithContext \"will exit when the context is canceled\", but the watch-list backoff (:811-819) waits on <-r.clock.After alone",
}

// ControllerDivergences are controller.Impl's declared differences from
// the controller component's guarantees.
var ControllerDivergences = []checkkit.Divergence{
	requeueKeepsFailures,
	syncOnInformer,
	panicEndsProcess,
	with(drainsAfterCancel.Or(secondRunBlocks), pctrl.CheckStop),
	watchListBackoff,
}
