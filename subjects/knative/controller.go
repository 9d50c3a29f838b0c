package knative

//lint:file-ignore SA1019 knative's ControllerOptions.RateLimiter is client-go's untyped RateLimiter

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	pctrl "github.com/kverify/kverify/props/controller"
	"go.uber.org/zap"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"knative.dev/pkg/controller"
)

// Controller is knative.dev/pkg's controller.Impl as a subject of the
// controller component, composed as a knative controller binary composes
// it (injection's generated informer, a controller constructor, sharedmain):
//
//   - the informer is a client-go SharedIndexInformer, as knative's
//     generated injection informers are (a SharedInformerFactory's, with
//     controller.GetResyncPeriod's resync, 10h by default, and the
//     namespace index), over the check's ListerWatcher
//     (cache.NewSharedIndexInformer(Setup.ListerWatcher(),
//     &metav1.PartialObjectMetadata{}, 10h, {namespace: MetaNamespaceIndexFunc}));
//   - the Impl is controller.NewContext(ctx, reconciler,
//     ControllerOptions{WorkQueueName, Logger: zap's no-op logger, Reporter:
//     a StatsReporter that reports nothing (knative's default registers
//     OpenCensus views), RateLimiter: client-go's
//     NewItemExponentialFailureRateLimiter(BaseDelay, MaxDelay), Concurrency:
//     Setup.Workers}): ControllerOptions takes the check's limiter as it is,
//     and the two-lane queue (newTwoLaneWorkQueue) hands it to both its lanes;
//   - its handler is controller.HandleAll(impl.Enqueue), as a knative
//     controller constructor registers it (informer.AddEventHandler(
//     controller.HandleAll(impl.Enqueue))), with Setup.Notified called first:
//     HandleAll's own funcs, Add, Update (the new object, PassNew) and Delete
//     (a tombstone as given: Enqueue takes it through
//     kmeta.DeletionHandlingAccessor), each calling Notified, then Enqueue;
//   - the reconciler implements controller.Reconciler (Reconcile(ctx, key)
//     error) by calling Setup.Reconcile with the key and a reader of the
//     informer's store (a knative reconciler's lister reads that store): an
//     error is returned as it is (a transient error: the Impl retries it with
//     AddRateLimited), an error with a RequeueAfter too (the error wins), a
//     RequeueAfter alone is returned as controller.NewRequeueAfter(d), which
//     the Impl turns into AddAfter (controller.go:560-564), and a success as nil
//     (Forget).
//
// Run is sharedmain's start: the informers first, waited for (knative's
// controller.RunInformers, which runs them, waits with
// WaitForCacheSyncQuick for their HasSynced and hands back a wait for their
// end; sharedmain's StartInformers does the same but hands back nothing to
// wait with), then controller.StartAll(ctx, impl) (Impl.Run, that is
// RunContext(ctx, Concurrency)), then the wait for the informer. A context
// cancelled before the sync starts no controller (sharedmain exits the
// process there: logger.Fatalw); Run then shuts the Impl's queue down
// through Impl.WorkQueue(), which is all that ends the three goroutines
// NewContext started (two_lane_queue.go:55-59).
//
// New rejects a nil Reconcile and a negative number of workers itself, as
// client-go's sample composition (subjects/upstream) does: knative takes
// both (NewContext stores a nil Reconciler, whose first call panics; a
// negative Concurrency makes RunContext start no worker, and 0 is
// DefaultThreadsPerController, 2, controller.go:246-248).
//
// knative recovers no reconcile panic: processNextWorkItem calls the
// Reconciler bare and the workers run as plain goroutines
// (controller.go:487-494, 505-553), so a panic ends the process (the
// deferred runtime.HandleCrash of RunContext, controller.go:462, is on Run's
// goroutine, not the workers'). ContainPanics keeps the process alive
// without recovering what knative does not: around a check, a reconcile's
// panic is recovered by the adapter at the Reconciler's boundary and
// becomes runtime.Goexit() of the worker's goroutine, which runs the
// deferred calls the panic's unwinding would have run (processNextWorkItem's
// Done, the worker's WaitGroup Done) and ends that worker, as the panic
// would have ended it, short of ending the process.
func Controller() pctrl.Subject {
	return pctrl.Subject{New: newController, BadInput: pctrl.BadInputOf(newController), ContainPanics: containPanics}
}

func newController(s pctrl.Setup) (pctrl.Controller, error) {
	switch {
	case s.Server == nil && s.Source == nil:
		return nil, errors.New("knative controller: no server")
	case s.Reconcile == nil:
		return nil, errors.New("knative controller: no reconciler")
	case s.Workers < 0:
		return nil, fmt.Errorf("knative controller: %d workers", s.Workers)
	}
	dropErrorBackoff()
	ctx := context.Background()
	inf := cache.NewSharedIndexInformer(s.ListerWatcher(), &metav1.PartialObjectMetadata{},
		controller.GetResyncPeriod(ctx), cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	c := &knController{informer: inf}
	c.impl = controller.NewContext(ctx, reconciler{setup: s, cache: c}, controller.ControllerOptions{
		WorkQueueName: "kverify",
		Logger:        zap.NewNop().Sugar(),
		Reporter:      noReports{},
		RateLimiter:   workqueue.NewItemExponentialFailureRateLimiter(s.BaseDelay, s.MaxDelay),
		Concurrency:   s.Workers,
	})
	if _, err := inf.AddEventHandler(notifying(controller.HandleAll(c.impl.Enqueue), s.Notified)); err != nil {
		return nil, err
	}
	return c, nil
}

// notifying is a knative handler (HandleAll's ResourceEventHandlerFuncs)
// that calls notified, in the handler's goroutine, before each of its
// funcs.
func notifying(h cache.ResourceEventHandler, notified func(obj any, deleted bool)) cache.ResourceEventHandler {
	if notified == nil {
		return h
	}
	return cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) {
			notified(obj, false)
			h.OnAdd(obj, initial)
		},
		UpdateFunc: func(old, obj any) {
			notified(obj, false)
			h.OnUpdate(old, obj)
		},
		DeleteFunc: func(obj any) {
			notified(obj, true)
			h.OnDelete(obj)
		},
	}
}

type knController struct {
	informer cache.SharedIndexInformer
	impl     *controller.Impl
}

// Run starts the informer and the Impl as sharedmain does, and returns
// once both have returned.
func (c *knController) Run(ctx context.Context) {
	wait, err := controller.RunInformers(ctx.Done(), c.informer)
	if err == nil {
		_ = controller.StartAll(ctx, c.impl)
	} else {
		// Cancelled before the sync: the Impl never runs, and its queue's
		// goroutines, started by NewContext, end only when the queue is
		// shut down (RunContext does it on its way out).
		c.impl.WorkQueue().ShutDown()
	}
	wait()
}

// Get reads the informer's store, as a knative lister does.
func (c *knController) Get(key string) (any, bool, error) {
	return c.informer.GetIndexer().GetByKey(key)
}

// reconciler is the check's Reconcile as a knative controller.Reconciler.
type reconciler struct {
	setup pctrl.Setup
	cache pctrl.Reader
}

func (r reconciler) Reconcile(ctx context.Context, key string) error {
	if containing.Load() {
		defer endWorkerOnPanic()
	}
	res, err := r.setup.Reconcile(ctx, key, r.cache)
	switch {
	case err != nil:
		return err
	case res.RequeueAfter > 0:
		return controller.NewRequeueAfter(res.RequeueAfter)
	}
	return nil
}

// containing is set while ContainPanics runs a check.
var containing atomic.Bool

// endWorkerOnPanic, deferred, turns a reconcile's panic into the end of
// the worker's goroutine (see Controller).
func endWorkerOnPanic() {
	if recover() != nil {
		runtime.Goexit()
	}
}

// containPanics runs body with reconcile panics contained (see
// Controller).
func containPanics(body func() error) error {
	containing.Store(true)
	defer containing.Store(false)
	return body()
}

var dropOnce sync.Once

// dropErrorBackoff removes apimachinery's HandleError throttle, once per
// process, as the other subjects do: the throttle sleeps minPeriod minus
// the time since the last error, measured from a time.Now() taken at
// package init (k8s.io/apimachinery@v0.37.2/pkg/util/runtime/runtime.go:152-158),
// which inside a synctest bubble (its clock starts in 2000) is a sleep of
// decades at the informer's first error. It is logging policy, not
// controller behaviour.
func dropErrorBackoff() {
	dropOnce.Do(func() {
		if len(utilruntime.ErrorHandlers) > 1 {
			utilruntime.ErrorHandlers = utilruntime.ErrorHandlers[:1]
		}
	})
}
