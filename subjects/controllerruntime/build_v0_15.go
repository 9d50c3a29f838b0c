//go:build controllerruntime_before_v0_19 && !controllerruntime_before_v0_15

package controllerruntime

import (
	"context"
	"runtime"
	"sync/atomic"

	pctrl "github.com/kverify/kverify/props/controller"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// build makes the controller on v0.15 to v0.18: the untyped
// NewUnmanaged with a manager stub (manager.go), client-go's untyped rate
// limiter (controller-runtime's ratelimiter.RateLimiter is the same
// interface), and the untyped handler; watch attaches it (watch_*.go: the
// Watch call changed in v0.18.0).
func build(s pctrl.Setup, inf cache.SharedIndexInformer, rec reconcileFunc, notified func(any, bool)) (func(context.Context) error, error) {
	var r reconcile.Reconciler
	if rec != nil {
		r = reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
			defer endWorkerOnPanic()
			return rec(ctx, req)
		})
	}
	ctrl, err := controller.NewUnmanaged("kverify", managerStub{}, controller.Options{
		Reconciler:              r,
		MaxConcurrentReconciles: s.Workers,
		RateLimiter:             workqueue.NewItemExponentialFailureRateLimiter(s.BaseDelay, s.MaxDelay),
	})
	if err != nil {
		return nil, err
	}
	enqueue := func(q workqueue.RateLimitingInterface, obj client.Object) {
		q.Add(reconcile.Request{NamespacedName: client.ObjectKeyFromObject(obj)})
	}
	h := handler.Funcs{
		CreateFunc: func(_ context.Context, e event.CreateEvent, q workqueue.RateLimitingInterface) {
			notified(e.Object, false)
			enqueue(q, e.Object)
		},
		UpdateFunc: func(_ context.Context, e event.UpdateEvent, q workqueue.RateLimitingInterface) {
			notified(e.ObjectNew, false)
			enqueue(q, e.ObjectNew)
		},
		DeleteFunc: func(_ context.Context, e event.DeleteEvent, q workqueue.RateLimitingInterface) {
			notified(e.Object, true)
			enqueue(q, e.Object)
		},
	}
	if err := watch(ctrl, inf, h); err != nil {
		return nil, err
	}
	return ctrl.Start, nil
}

// runInformer runs the informer until ctx ends.
func runInformer(ctx context.Context, inf cache.SharedIndexInformer) { inf.Run(ctx.Done()) }

// containing is set while containPanics runs a check.
var containing atomic.Bool

// endWorkerOnPanic, deferred in the reconcile, turns a reconcile's panic
// into the end of the worker's goroutine while a check contains panics.
// Before v0.19.0 RecoverPanic defaults to false and the controller panics
// again (v0.18.7 pkg/internal/controller/controller.go:99-113), which ends
// the process: runtime.Goexit runs the deferred calls that unwinding would
// have run (the queue's Done, the worker's WaitGroup) and ends that worker
// alone, so that the check reports what the panic did instead of the test
// binary dying.
func endWorkerOnPanic() {
	if containing.Load() {
		if recover() != nil {
			runtime.Goexit()
		}
	}
}

// containPanics runs body with reconcile panics contained (see
// endWorkerOnPanic).
func containPanics(body func() error) error {
	containing.Store(true)
	defer containing.Store(false)
	return body()
}
