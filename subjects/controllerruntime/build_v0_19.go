//go:build controllerruntime_before_v0_21 && !controllerruntime_before_v0_19

package controllerruntime

import (
	"context"

	pctrl "github.com/kverify/kverify/props/controller"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// build makes the controller on v0.19 and v0.20: NewTypedUnmanaged with a
// manager stub (see manager.go).
func build(s pctrl.Setup, inf cache.SharedIndexInformer, rec reconcileFunc, notified func(any, bool)) (func(context.Context) error, error) {
	var r reconcile.TypedReconciler[reconcile.Request]
	if rec != nil {
		r = reconcile.Func(rec)
	}
	ctrl, err := controller.NewTypedUnmanaged[reconcile.Request]("kverify", managerStub{}, controller.TypedOptions[reconcile.Request]{
		Reconciler:              r,
		MaxConcurrentReconciles: s.Workers,
		RateLimiter:             workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](s.BaseDelay, s.MaxDelay),
		SkipNameValidation:      ptr.To(true),
	})
	if err != nil {
		return nil, err
	}
	if err := ctrl.Watch(&source.Informer{Informer: inf, Handler: typedHandler(notified)}); err != nil {
		return nil, err
	}
	return ctrl.Start, nil
}

// runInformer runs the informer until ctx ends.
func runInformer(ctx context.Context, inf cache.SharedIndexInformer) { inf.Run(ctx.Done()) }

// containPanics is nil from v0.19.0: RecoverPanic defaults to true.
var containPanics func(body func() error) error
