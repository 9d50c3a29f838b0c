//go:build !controllerruntime_before_v0_19

package controllerruntime

import (
	"context"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// typedHandler is the handler of v0.19.0 and later (typed queues): Notified,
// then the object's request added, as EnqueueRequestForObject does.
func typedHandler(notified func(any, bool)) handler.Funcs {
	enqueue := func(q workqueue.TypedRateLimitingInterface[reconcile.Request], obj client.Object) {
		q.Add(reconcile.Request{NamespacedName: client.ObjectKeyFromObject(obj)})
	}
	return handler.Funcs{
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
}
