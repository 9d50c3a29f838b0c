package ours

import (
	"context"
	"fmt"
	"time"

	"github.com/kverify/kverify/impl/informer"
	"github.com/kverify/kverify/impl/reflector"
	"github.com/kverify/kverify/props/modelserver"
	prefl "github.com/kverify/kverify/props/reflector"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Assembled is impl/informer's Informer (our reflector, RealFIFO,
// delta.Process, store and processor) over the model server, with the
// check's default resync period.
func Assembled() prefl.InformerSubject {
	return prefl.InformerSubject{New: func(srv *modelserver.Server, watchList bool, resync time.Duration) (prefl.Informer, error) {
		ro := reflector.Options{Name: "ours", ExpectedType: &metav1.PartialObjectMetadata{}}
		if !watchList {
			ro.WatchList = reflector.WatchListOff
		}
		i, err := informer.NewInformer(srv, informer.InformerOptions{Reflector: ro, ResyncPeriod: resync})
		if err != nil {
			return nil, err
		}
		return oursInformer{i}, nil
	}}
}

// ListWatchAssembled is Assembled over a plain list-and-watch reflector
// (see ListWatchReflector), with no resync: it never streams, lists in one
// request and never resyncs, and declares so (listWatchOnly), as most
// informers outside client-go are. Asked to stream or to resync, its
// constructor fails.
func ListWatchAssembled() prefl.InformerSubject {
	return prefl.InformerSubject{Capabilities: listWatchOnly, New: func(srv *modelserver.Server, watchList bool, resync time.Duration) (prefl.Informer, error) {
		if watchList {
			return nil, fmt.Errorf("ours list-and-watch informer: asked to stream its syncs, but it has no watch-list")
		}
		if resync != 0 {
			return nil, fmt.Errorf("ours list-and-watch informer: asked to resync every %v, but it has no resync", resync)
		}
		ro := reflector.Options{Name: "ours", ExpectedType: &metav1.PartialObjectMetadata{},
			WatchList: reflector.WatchListOff, Paging: reflector.PagingOff}
		i, err := informer.NewInformer(srv, informer.InformerOptions{Reflector: ro})
		if err != nil {
			return nil, err
		}
		return oursInformer{i}, nil
	}}
}

type oursInformer struct{ i *informer.Informer }

func (o oursInformer) AddEventHandler(h prefl.Handler) (prefl.Registration, error) {
	r, err := o.i.AddEventHandler(h)
	if err != nil {
		return nil, err
	}
	return r, nil
}
func (o oursInformer) AddEventHandlerWithResyncPeriod(h prefl.Handler, period time.Duration) (prefl.Registration, error) {
	r, err := o.i.AddEventHandlerWithResyncPeriod(h, period)
	if err != nil {
		return nil, err
	}
	return r, nil
}
func (o oursInformer) HasSynced() bool         { return o.i.HasSynced() }
func (o oursInformer) List() []any             { return o.i.List() }
func (o oursInformer) Run(ctx context.Context) { o.i.Run(ctx) }
