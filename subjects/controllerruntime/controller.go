package controllerruntime

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"github.com/kverify/kverify/props/checkkit"
	pctrl "github.com/kverify/kverify/props/controller"
	"github.com/kverify/kverify/subjects/suite"
	"github.com/kverify/kverify/traces"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// Controller is controller-runtime's real controller (the internal
// controller behind controller.NewTypedUnmanaged) as a subject of the
// controller component. No manager or cluster needed: New builds it with
// controller.NewTypedUnmanaged[reconcile.Request](name, TypedOptions{
// Reconciler: a reconcile.Func calling the check's Reconcile with
// "namespace/name" and a Reader of the informer's store,
// MaxConcurrentReconciles: Setup.Workers, RateLimiter:
// workqueue.NewTypedItemExponentialFailureRateLimiter(BaseDelay, MaxDelay),
// UsePriorityQueue: true (the default at v0.25.3 anyway:
// pkg/controller/controller.go:272,281 ptr.Deref(UsePriorityQueue, true)),
// SkipNameValidation: true, Logger: logr.Discard()}), and gives it one
// source.Informer over a client-go SharedIndexInformer
// (cache.NewSharedIndexInformer over the check's *props/modelserver.Server,
// wrapped in modelserver.NoWatchList when the check asks for a listing informer)
// with a handler.Funcs whose Create, Update and Delete call Setup.Notified
// (deleted true for Delete; controller-runtime's source unwraps a
// DeletedFinalStateUnknown before the handler, so Notified gets the last
// object) and then add reconcile.Request{NamespacedName} to the queue, as a
// builder's EnqueueRequestForObject does. Run runs the informer
// (RunWithContext) and the controller's Start(ctx), and returns once both
// returned. source.Informer is not a SyncingSource at v0.25.3
// (pkg/source/source.go:267-303: no WaitForSync), so Start does not wait for
// the informer's sync before it starts its workers; nothing is queued before
// the informer's handler is called, so no reconcile comes before the first
// list. RecoverPanic is left at its default (true): a reconcile's panic is
// recovered into an error (pkg/internal/controller/controller.go:196-213),
// so the subject contains panics on its own (ContainPanics nil).
//
// New rejects a nil Reconcile through NewTypedUnmanaged's own "must specify
// Reconciler" (pkg/controller/controller.go:233-235); a negative number of
// workers is rejected by the composition, as subjects/upstream's is:
// controller-runtime itself turns MaxConcurrentReconciles <= 0 into 1
// (pkg/controller/controller.go:263-265).
func Controller() pctrl.Subject {
	return pctrl.Subject{New: newController, BadInput: pctrl.BadInputOf(newController)}
}

func newController(s pctrl.Setup) (pctrl.Controller, error) {
	switch {
	case s.Server == nil && s.Source == nil:
		return nil, errors.New("controller-runtime controller: no server")
	case s.Workers < 0:
		return nil, fmt.Errorf("controller-runtime controller: %d workers", s.Workers)
	}
	dropErrorBackoff()
	inf := cache.NewSharedIndexInformer(s.ListerWatcher(), &metav1.PartialObjectMetadata{}, 0, cache.Indexers{})
	c := &crController{informer: inf}
	var rec reconcile.TypedReconciler[reconcile.Request]
	if s.Reconcile != nil {
		rec = reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
			res, err := s.Reconcile(ctx, requestKey(req), c)
			return reconcile.Result{RequeueAfter: res.RequeueAfter}, err
		})
	}
	ctrl, err := controller.NewTypedUnmanaged[reconcile.Request]("kverify", controller.TypedOptions[reconcile.Request]{
		Reconciler:              rec,
		MaxConcurrentReconciles: s.Workers,
		RateLimiter:             workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](s.BaseDelay, s.MaxDelay),
		UsePriorityQueue:        ptr.To(true),
		SkipNameValidation:      ptr.To(true),
		Logger:                  logr.Discard(),
	})
	if err != nil {
		return nil, err
	}
	notified := func(obj any, deleted bool) {
		if s.Notified != nil {
			s.Notified(obj, deleted)
		}
	}
	enqueue := func(q workqueue.TypedRateLimitingInterface[reconcile.Request], obj client.Object) {
		q.Add(reconcile.Request{NamespacedName: client.ObjectKeyFromObject(obj)})
	}
	h := handler.Funcs{
		CreateFunc: func(_ context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			notified(e.Object, false)
			enqueue(q, e.Object)
		},
		UpdateFunc: func(_ context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			notified(e.ObjectNew, false)
			enqueue(q, e.ObjectNew)
		},
		DeleteFunc: func(_ context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			notified(e.Object, true)
			enqueue(q, e.Object)
		},
	}
	if err := ctrl.Watch(&source.Informer{Informer: inf, Handler: h}); err != nil {
		return nil, err
	}
	c.ctrl = ctrl
	return c, nil
}

// requestKey is the request's cache key, "namespace/name" (the name alone
// for a cluster-scoped object), as cache.MetaNamespaceKeyFunc makes it.
func requestKey(req reconcile.Request) string {
	if req.Namespace == "" {
		return req.Name
	}
	return req.Namespace + "/" + req.Name
}

type crController struct {
	informer cache.SharedIndexInformer
	ctrl     controller.TypedController[reconcile.Request]
}

// Run runs the informer and the controller until ctx ends, and waits for
// both. A second Start returns an error at once ("controller was started
// more than once"), a second RunWithContext returns at once.
func (c *crController) Run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Go(func() { c.informer.RunWithContext(ctx) })
	_ = c.ctrl.Start(ctx)
	wg.Wait()
}

// Get reads the informer's store, as a lister does.
func (c *crController) Get(key string) (any, bool, error) {
	return c.informer.GetIndexer().GetByKey(key)
}

var dropOnce sync.Once

// dropErrorBackoff removes apimachinery's HandleError throttle, once per
// process, as subjects/upstream does: the throttle sleeps minPeriod minus
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

func controllerEntry() suite.Entry {
	return suite.Entry{Component: pctrl.Component, Subject: Name,
		Checks:      func() []checkkit.Check { return pctrl.Checks(Controller()) },
		Divergences: ControllerDivergences,
		Replay:      func(t *testing.T, tr *traces.Trace) error { return pctrl.Replay(t, Controller(), tr) }}
}
