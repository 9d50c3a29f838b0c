//go:build !controllerruntime_before_v0_15

package controllerruntime

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/kverify/kverify/props/checkkit"
	pctrl "github.com/kverify/kverify/props/controller"
	"github.com/kverify/kverify/subjects/suite"
	"github.com/kverify/kverify/traces"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Controller is controller-runtime's real controller (the internal
// controller behind controller.NewUnmanaged) as a subject of the controller
// component, built with the release's defaults but for the options below.
// No manager or cluster: from v0.21.0 NewTypedUnmanaged takes none; before,
// NewUnmanaged reads only GetLogger and GetControllerOptions of the manager
// it is given (v0.19.7 pkg/controller/controller.go:140-210), which a stub
// answers with a discarding logger and zero options (build_*.go).
//
// Options: Reconciler a reconcile.Func calling the check's Reconcile with
// "namespace/name" and a Reader of the informer's store;
// MaxConcurrentReconciles Setup.Workers; RateLimiter client-go's
// ItemExponentialFailureRateLimiter(BaseDelay, MaxDelay); SkipNameValidation
// (v0.19.0 and later: the name registry is process-wide); the queue is the
// release's default (controller-runtime's priority queue from v0.23.0,
// pkg/controller/controller.go:272,281 ptr.Deref(UsePriorityQueue, true) at
// v0.25.3; client-go's rate-limiting queue before). The controller gets one
// source.Informer over a client-go SharedIndexInformer
// (cache.NewSharedIndexInformer over the check's *props/modelserver.Server,
// wrapped in modelserver.NoWatchList when the check asks for a listing
// informer) with a handler.Funcs whose Create, Update and Delete call
// Setup.Notified (deleted true for Delete; controller-runtime's source
// unwraps a DeletedFinalStateUnknown before the handler, so Notified gets
// the last object) and then add reconcile.Request{NamespacedName} to the
// queue, as a builder's EnqueueRequestForObject does. Run runs the informer
// and the controller's Start(ctx), and returns once both returned.
// source.Informer is not a SyncingSource (v0.25.3 pkg/source/source.go:267-303:
// no WaitForSync), so Start does not wait for the informer's sync before it
// starts its workers; nothing is queued before the informer's handler is
// called, so no reconcile comes before the first list. RecoverPanic is left
// at the release's default: recovered into an error from v0.19.0
// (pkg/internal/controller/controller.go:196-213 at v0.25.3), re-raised
// before, where ContainPanics ends the panicking worker instead of the
// process (build_v0_15.go).
//
// New rejects a nil Reconcile through NewUnmanaged's own "must specify
// Reconciler" (v0.25.3 pkg/controller/controller.go:233-235); a negative
// number of workers is rejected by the composition, as subjects/upstream's
// is: controller-runtime itself turns MaxConcurrentReconciles <= 0 into 1
// (pkg/controller/controller.go:263-265).
func Controller() pctrl.Subject {
	return pctrl.Subject{New: newController, BadInput: pctrl.BadInputOf(newController), ContainPanics: containPanics}
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
	var rec reconcileFunc
	if s.Reconcile != nil {
		rec = func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
			res, err := s.Reconcile(ctx, requestKey(req), c)
			return reconcile.Result{RequeueAfter: res.RequeueAfter}, err
		}
	}
	notified := func(obj any, deleted bool) {
		if s.Notified != nil {
			s.Notified(obj, deleted)
		}
	}
	start, err := build(s, inf, rec, notified)
	if err != nil {
		return nil, err
	}
	c.start = start
	return c, nil
}

// reconcileFunc is the reconcile the adapter gives the controller (nil
// when the check gives none).
type reconcileFunc = func(ctx context.Context, req reconcile.Request) (reconcile.Result, error)

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
	start    func(context.Context) error // the controller's Start
}

// Run runs the informer and the controller until ctx ends, and waits for
// both. A second Start returns an error at once ("controller was started
// more than once"), a second informer Run returns at once.
func (c *crController) Run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Go(func() { runInformer(ctx, c.informer) })
	_ = c.start(ctx)
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

func controllerEntries() []suite.Entry {
	return []suite.Entry{{Component: pctrl.Component, Subject: Name,
		Checks:      func() []checkkit.Check { return pctrl.Checks(Controller()) },
		Divergences: forRelease(ControllerDivergences, historyController),
		Replay:      func(t *testing.T, tr *traces.Trace) error { return pctrl.Replay(t, Controller(), tr) }}}
}
