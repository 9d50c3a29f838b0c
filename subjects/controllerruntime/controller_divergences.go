//go:build !controllerruntime_before_v0_15

package controllerruntime

import (
	"github.com/kverify/kverify/props/checkkit"
	pctrl "github.com/kverify/kverify/props/controller"
	pwq "github.com/kverify/kverify/props/workqueue"
)

// ControllerDivergences are controller-runtime's controller's declared
// differences from the controller component's guarantees: source.Informer's
// start before the sync, and client-go's informer's watch-list backoff.
var ControllerDivergences = []checkkit.Divergence{
	{Check: pctrl.CheckSync, Guarantees: []string{pctrl.GSyncFirst}, Shape: `: a reconcile of \S+ started before the handler was given .* of the first list`,
		Reason:   "source.Informer is not a SyncingSource: Start starts the workers without waiting for the informer or the handler it registers, so the first keys are reconciled while the handler is still being given the rest of the first list",
		Upstream: Version + "/pkg/source/source.go:267-299; pkg/internal/controller/controller.go:362-394",
		Class:    checkkit.ClassDesign,
		Evidence: "controller-runtime's own source.Kind waits for both its cache and its handler registration before the workers start (" + Version + "/pkg/internal/source/kind.go:121-131: WaitForCacheSync, then toolscache.WaitForCacheSync(handlerRegistration.HasSynced), \"handler did not sync\"); source.Informer, for informers the caller runs, does neither"},
	{Check: pctrl.CheckConverge, Intermittent: true,
		Guarantees: []string{pctrl.GStop},
		Shape:      `: Run did not return after its context was cancelled, with 0 reconciles in flight and 0 handler calls in progress; (?s:.*)\(\*Reflector\)\.watchList`,
		Reason:     "client-go's informer under the controller's source: a refused or 429 watch-list request backs off with <-r.clock.After(r.delayHandler()) without watching the context, so stopping the controller waits out the backoff (up to 60s with jitter) when a run stops it there; client-go's defect (traces/findings/client-go/reflector-watchlist-backoff-ignores-cancel), reached through source.Informer",
		Upstream:   "k8s.io/client-go@v0.37.2/tools/cache/reflector.go:811-819",
		Class:      checkkit.ClassDefect,
		Evidence:   "k8s.io/client-go@v0.37.2/tools/cache/reflector.go:420-422: RunWithContext \"will exit when the context is canceled\", but the watch-list backoff (:811-819) waits on <-r.clock.After alone"},
}

// v015 is the oldest release the controller checks reach, whose code the
// controller history quotes.
const v015 = "sigs.k8s.io/controller-runtime@v0.15.3"

// historyController are the controller's declarations for earlier
// releases (see history.go).
var historyController = []checkkit.Divergence{
	{Check: pctrl.CheckIsolation, Releases: "<v0.19.0", Guarantees: []string{pctrl.GIsolation},
		Shape:    `: with o000's reconcile held: (default/o00[2-5]@\d+ read \[\]; )+default/o001 reconciled 0 times after its panic, want once more$`,
		Reason:   "RecoverPanic defaults to false before v0.19.0: Reconcile's deferred recover panics again (" + v015 + "/pkg/internal/controller/controller.go:101-116), which ends the process. Contained for the check (the adapter turns the panic into the end of the worker's goroutine, running the deferred calls the unwinding would: the queue's Done, the worker's WaitGroup Done), the worker is gone for good and the key is not retried",
		Upstream: v015 + "/pkg/internal/controller/controller.go:101-116; pkg/controller/controller.go:150-152",
		Class:    checkkit.ClassDesign,
		Evidence: "an option, off by default: RecoverPanic \"indicates whether the panic caused by reconcile should be recovered\" (" + v015 + "/pkg/config/controller.go:42); made the default by https://github.com/kubernetes-sigs/controller-runtime/pull/2905 (\"Recover panics per default\", v0.19.0), after https://github.com/kubernetes-sigs/controller-runtime/issues/2167 (\"a panic which might only occur when reconciling one special object doesn't influence reconciliations of other objects\")"},
	{Check: pctrl.CheckStop, Releases: "<v0.23.0", Guarantees: []string{pctrl.GStop},
		Shape:    `: a reconcile of default/o\d+ started after Run's context was cancelled`,
		Reason:   "before v0.23.0 the controller's default queue is client-go's rate-limiting queue (UsePriorityQueue defaults to false, pkg/controller/controller.go at v0.22.5:253,262): at the context's end Start shuts the queue down and waits for its workers, but a client-go queue hands out the keys still queued after ShutDown, so the workers go on reconciling them, with a cancelled context",
		Upstream: v015 + "/pkg/internal/controller/controller.go:150-240; k8s.io/client-go util/workqueue/queue.go (Get after ShutDown)",
		Class:    checkkit.ClassDesign,
		Evidence: "client-go documents the drain (queue.go: \"ShutDown will cause q to ignore all new items added to it and worker goroutines will continue processing items in the queue until it is empty\"); from v0.23.0 the default priority queue returns shutdown to every Get after ShutDown (https://github.com/kubernetes-sigs/controller-runtime/pull/3332, \"Priorityqueue: Enable per default\"), and the check passes"},
}

// divergences are every declared divergence, by component.
func divergences() map[string][]checkkit.Divergence {
	return map[string][]checkkit.Divergence{pwq.Component: QueueDivergences, pwq.ComponentDelaying: DelayingDivergences, pwq.ComponentRateLimit: RateLimitDivergences,
		pctrl.Component: ControllerDivergences}
}
