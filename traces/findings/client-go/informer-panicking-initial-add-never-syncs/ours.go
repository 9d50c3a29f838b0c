//go:build kverify_ours

package main

import (
	"context"

	kvinformer "github.com/kverify/kverify/impl/informer"
	kvreflector "github.com/kverify/kverify/impl/reflector"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// newInformer is kverify's informer (its reflector listing, no resync)
// for *metav1.PartialObjectMetadata.
func newInformer(lw *fakeLW) informer {
	i, err := kvinformer.NewInformer(contextLW{lw}, kvinformer.InformerOptions{Reflector: kvreflector.Options{
		Name: "repro", ExpectedType: &metav1.PartialObjectMetadata{}, WatchList: kvreflector.WatchListOff}})
	if err != nil {
		panic(err)
	}
	return oursInformer{i}
}

// contextLW gives the fake ListerWatcher the context-taking methods ours
// calls (client-go's ListerWatcherWithContext).
type contextLW struct{ lw *fakeLW }

func (c contextLW) ListWithContext(_ context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	return c.lw.List(opts)
}

func (c contextLW) WatchWithContext(_ context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	return c.lw.Watch(opts)
}

// oursInformer runs ours (which takes a context) until stopCh closes.
type oursInformer struct{ i *kvinformer.Informer }

func (o oursInformer) AddEventHandler(h cache.ResourceEventHandler) (registration, error) {
	r, err := o.i.AddEventHandler(h)
	if err != nil {
		return nil, err
	}
	return r, nil
}

func (o oursInformer) HasSynced() bool { return o.i.HasSynced() }

func (o oursInformer) Run(stopCh <-chan struct{}) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-stopCh:
			cancel()
		case <-ctx.Done():
		}
	}()
	o.i.Run(ctx)
}
