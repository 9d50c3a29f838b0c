//go:build !clientgo_before_v0_31

package upstream

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/kverify/kverify/props/checkkit"
	pctrl "github.com/kverify/kverify/props/controller"
	"github.com/kverify/kverify/subjects/suite"
	"github.com/kverify/kverify/traces"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// Controller is client-go's parts composed the way k8s.io/sample-controller
// composes them (controller.go and main.go at kubernetes 1.37): a
// SharedIndexInformer over the model server whose handler enqueues
// cache.ObjectName keys into a TypedRateLimitingQueue, workers started with
// wait.UntilWithContext once cache.WaitForCacheSync returns, and
// processNextWorkItem's Forget on success and AddRateLimited on error.
// What the sample leaves out and a controller needs is added as its users
// add it: a DeleteFunc (the sample's Foos are deleted by the garbage
// collector) enqueueing DeletionHandlingObjectToName's key, and a requeue
// (Forget, then AddAfter, as controller-runtime does). The rate limiter is
// the check's (NewTypedItemExponentialFailureRateLimiter); the sample adds
// a 50 qps bucket.
func Controller() pctrl.Subject {
	return pctrl.Subject{New: newSampleController, BadInput: pctrl.BadInputOf(newSampleController), ContainPanics: ContainPanics, NoWatchList: noWatchList()}
}

func newSampleController(s pctrl.Setup) (pctrl.Controller, error) {
	switch {
	case s.Server == nil && s.Source == nil:
		return nil, errors.New("upstream controller: no server")
	case s.Reconcile == nil:
		return nil, errors.New("upstream controller: no reconciler")
	case s.Workers < 0:
		return nil, fmt.Errorf("upstream controller: %d workers", s.Workers)
	}
	dropErrorBackoff()
	inf := cache.NewSharedIndexInformer(s.ListerWatcher(), &metav1.PartialObjectMetadata{}, 0, cache.Indexers{})
	c := &sampleController{
		informer: inf,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[cache.ObjectName](s.BaseDelay, s.MaxDelay),
			workqueue.TypedRateLimitingQueueConfig[cache.ObjectName]{Name: "upstream"}),
		setup: s,
	}
	notified := func(obj any, deleted bool) {
		if s.Notified != nil {
			s.Notified(obj, deleted)
		}
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { notified(obj, false); c.enqueue(obj, cache.ObjectToName) },
		UpdateFunc: func(_, obj any) {
			notified(obj, false)
			c.enqueue(obj, cache.ObjectToName)
		},
		DeleteFunc: func(obj any) { notified(obj, true); c.enqueue(obj, cache.DeletionHandlingObjectToName) },
	}); err != nil {
		return nil, err
	}
	return c, nil
}

type sampleController struct {
	informer cache.SharedIndexInformer
	queue    workqueue.TypedRateLimitingInterface[cache.ObjectName]
	setup    pctrl.Setup
}

// enqueue is the sample's enqueueFoo.
func (c *sampleController) enqueue(obj any, name func(any) (cache.ObjectName, error)) {
	ref, err := name(obj)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	c.queue.Add(ref)
}

// Run is the sample's main.go and Controller.Run: the informer factory's
// Start, then Run(ctx, workers), then a wait for the informer, as
// SharedInformerFactory.Shutdown does (the sample's main.go exits the
// process instead, main.go:75-78). The workers are not waited for: the
// sample's Run does not (controller.go:162-186).
func (c *sampleController) Run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Go(func() { runInformer(ctx, c.informer) })
	_ = c.run(ctx, max(c.setup.Workers, 1))
	wg.Wait()
}

func (c *sampleController) run(ctx context.Context, workers int) error {
	defer utilruntime.HandleCrash()
	defer c.queue.ShutDown()
	if ok := cache.WaitForCacheSync(ctx.Done(), c.informer.HasSynced); !ok {
		return fmt.Errorf("failed to wait for caches to sync")
	}
	for i := 0; i < workers; i++ {
		go wait.UntilWithContext(ctx, c.runWorker, time.Second)
	}
	<-ctx.Done()
	return nil
}

func (c *sampleController) runWorker(ctx context.Context) {
	for c.processNextWorkItem(ctx) {
	}
}

// processNextWorkItem is the sample's, with a requeue.
func (c *sampleController) processNextWorkItem(ctx context.Context) bool {
	ref, shutdown := c.queue.Get()
	if shutdown {
		return false
	}
	defer c.queue.Done(ref)
	res, err := c.setup.Reconcile(ctx, ref.String(), c)
	if err == nil {
		c.queue.Forget(ref)
		if res.RequeueAfter > 0 {
			c.queue.AddAfter(ref, res.RequeueAfter)
		}
		return true
	}
	utilruntime.HandleErrorWithContext(ctx, err, "Error syncing; requeuing for later retry", "objectReference", ref)
	c.queue.AddRateLimited(ref)
	return true
}

// Get is the sample's lister read.
func (c *sampleController) Get(key string) (any, bool, error) {
	return c.informer.GetIndexer().GetByKey(key)
}

func controllerEntries() []suite.Entry {
	return []suite.Entry{entry(pctrl.Component, func() []checkkit.Check { return pctrl.Checks(Controller()) }, ControllerDivergences,
		func(t *testing.T, tr *traces.Trace) error { return pctrl.Replay(t, Controller(), tr) })}
}

// ControllerDivergences are the sample composition's declared differences.
var ControllerDivergences = append(controllerStop(), []checkkit.Divergence{
	{Check: pctrl.CheckConverge, Releases: watchListGate, Gate: WatchListClient, Intermittent: true,
		Guarantees: []string{pctrl.GStop},
		Shape:      `: Run did not return after its context was cancelled, with 0 reconciles in flight and 0 handler calls in progress; (?s:.*)\(\*Reflector\)\.watchList`,
		Reason:     "the informer's reflector: a refused or 429 watch-list request backs off with <-r.clock.After(r.delayHandler()) without watching the context, so cancelling the controller waits out the backoff (up to 60s with jitter) when a run stops it there; the same defect as reflector/cancel's (traces/findings/client-go/reflector-watchlist-backoff-ignores-cancel)",
		Upstream:   Version + "/tools/cache/reflector.go:811-819",
		Class:      checkkit.ClassDefect,
		Evidence:   Version + "/tools/cache/reflector.go:420-422: RunWithContext \"will exit when the context is canceled\", but the watch-list backoff (:811-819) waits on <-r.clock.After alone"},
	{Check: pctrl.CheckSync, Guarantees: []string{pctrl.GSyncFirst}, Shape: `: a reconcile of \S+ started before the handler was given .* of the first list`,
		Reason:   "the sample waits with cache.WaitForCacheSync for the informer's HasSynced, which holds once the informer's store has the first list, not once the controller's handler has been given it: with a slow handler, workers reconcile the first keys while later ones are still being delivered",
		Upstream: "k8s.io/sample-controller@v0.35.0 controller.go:173; " + Version + "/tools/cache/shared_informer.go:203-210",
		Class:    checkkit.ClassDesign,
		Evidence: Version + "/tools/cache/shared_informer.go:203-210 documents it: \"Note that this doesn't tell you if an individual handler is synced!! For that, please call HasSynced on the handle returned by AddEventHandler\"; the sample keeps the informer's"},
	{Check: pctrl.CheckIsolation, Guarantees: []string{pctrl.GIsolation}, Shape: `: with o000's reconcile held: default/o001 reconciled 0 times after its panic, want once more$`,
		Reason: "a panicking reconcile crashes the process by default: wait.UntilWithContext runs each worker under HandleCrash (apimachinery util/wait/backoff.go:254), which re-panics while utilruntime.ReallyCrash is true (util/runtime/runtime.go:114); " +
			"with ReallyCrash false (as the check runs it, to stay in process) the panic unwinds processNextWorkItem past AddRateLimited: its deferred Done runs, so the key is dropped until its object changes again, and the worker sleeps a second before it takes the next key",
		Upstream: "k8s.io/sample-controller@v0.35.0 controller.go:180,200-236; apimachinery util/wait/backoff.go:254; util/runtime/runtime.go:114",
		Class:    checkkit.ClassDesign,
		Evidence: "client-go chooses to crash on a panic (util/runtime/runtime.go:34-38: \"ReallyCrash controls the behavior of HandleCrash and defaults to true. It's exposed so components can optionally set to false to restore prior behavior\"); " +
			"controller-runtime recovers reconcile panics into errors and retries (RecoverPanic, default true since v0.15, pkg/internal/controller/controller.go)"},
}...)

// sampleStop is controller/stop's declaration on every release: the
// sample's Run does not wait for its workers.
var sampleStop = checkkit.Divergence{Check: pctrl.CheckStop, Guarantees: []string{pctrl.GStop}, Shape: `: Run returned with \d+ reconciles in flight$`,
	Reason: "the sample's Run starts its workers with go wait.UntilWithContext and returns at <-ctx.Done() without waiting for them, so it returns with reconciles in flight; " +
		"its deferred ShutDown does not stop them either: a client-go queue hands out the keys still queued after ShutDown (util/workqueue/queue.go:268-276), so the workers reconcile them, with a cancelled context, after Run returned",
	Upstream: "k8s.io/sample-controller@v0.35.0 controller.go:162-186; util/workqueue/queue.go:265-276",
	Class:    checkkit.ClassDesign,
	Evidence: "the sample's main.go ends the process when Run returns (main.go:78-80), so nothing waits for the workers; the queue's drain after ShutDown is documented (queue.go: \"ShutDown will cause q to ignore all new items added to it and worker goroutines will continue processing items in the queue until it is empty\"); " +
		"controller-runtime's controller waits for its workers (pkg/internal/controller/controller.go: c.mu, wg.Wait after the queue's ShutDown)"}

// controllerStop is sampleStop, widened on v0.31-v0.34 with
// WatchListClient on, where a cancelled Run was seen not to return with
// the informer's reflector inside its watch (v0.31.14 and v0.32.13 in the
// matrix with --flip-gates; not on v0.33-v0.34, and never from v0.35,
// where the gate is on by default).
func controllerStop() []checkkit.Divergence {
	return splitByGate(sampleStop, "<v0.31.0 || >=v0.35.0", ">=v0.31.0 <v0.35.0", func(on *checkkit.Divergence) {
		on.Shape = "(" + sampleStop.Shape + ")|: Run did not return after its context was cancelled, with 0 reconciles in flight and 0 handler calls in progress; (?s:.*)\\(\\*Reflector\\)\\.watch"
		on.Reason = sampleStop.Reason + "; and before v0.35, with WatchListClient on, a cancelled Run sometimes does not return, the informer's reflector still inside its watch (in the scenario that cancels with the first request held; its cause is not read yet)"
		on.Evidence = sampleStop.Evidence + "; the hang: k8s.io/client-go@v0.31.14/tools/cache/reflector.go:301-303 says the reflector's \"Run will exit when stopCh is closed\"; seen in the matrix with --flip-gates"
	})
}
