package ours

import (
	"context"
	"errors"

	"github.com/kverify/kverify/impl/controller"
	"github.com/kverify/kverify/impl/informer"
	"github.com/kverify/kverify/impl/ratelimit"
	"github.com/kverify/kverify/impl/reflector"
	pctrl "github.com/kverify/kverify/props/controller"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Controller is impl/controller over our informer and the model server:
// its Filter reports every notification to the check (Setup.Notified).
func Controller() pctrl.Subject {
	return pctrl.Subject{New: newController, BadInput: pctrl.BadInputOf(newController)}
}

func newController(s pctrl.Setup) (pctrl.Controller, error) {
	var lw reflector.ListerWatcher = s.Server
	switch {
	case s.Source != nil:
		lw = s.Source
	case s.Server == nil:
		return nil, errors.New("ours controller: no server")
	}
	ro := reflector.Options{Name: "ours", ExpectedType: &metav1.PartialObjectMetadata{}}
	if !s.WatchList {
		ro.WatchList = reflector.WatchListOff
	}
	inf, err := informer.NewInformer(lw, informer.InformerOptions{Reflector: ro})
	if err != nil {
		return nil, err
	}
	lim, err := ratelimit.NewItemExponential[string](s.BaseDelay, s.MaxDelay)
	if err != nil {
		return nil, err
	}
	oc := &oursController{}
	var rec controller.Reconciler // nil for a nil Reconcile: New rejects it
	if s.Reconcile != nil {
		rec = controller.ReconcilerFunc(func(ctx context.Context, key string) (controller.Result, error) {
			r, err := s.Reconcile(ctx, key, oc)
			return controller.Result{RequeueAfter: r.RequeueAfter}, err
		})
	}
	c, err := controller.New(inf, rec, controller.Options{Name: "ours", Workers: s.Workers, Limiter: lim,
		OnError: func(string, error) {},
		Filter: func(e controller.Event) bool {
			if s.Notified != nil {
				s.Notified(e.Object, e.Kind == controller.Deleted)
			}
			return true
		}})
	if err != nil {
		return nil, err
	}
	oc.c = c
	return oc, nil
}

// oursController is the subject's controller and the reconciler's cache
// reader.
type oursController struct{ c *controller.Controller }

func (o *oursController) Run(ctx context.Context) { _ = o.c.Run(ctx) }
func (o *oursController) Get(key string) (any, bool, error) {
	return o.c.GetByKey(key)
}
