//go:build kverify_ours

package main

import (
	"context"

	"github.com/kverify/kverify/impl/delta"
	"github.com/kverify/kverify/impl/informer"
	"github.com/kverify/kverify/impl/reflector"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// start runs kverify's informer of PartialObjectMetadata over lw, listing
// rather than streaming, with a handler that calls onDelete with the key
// of every delete (the projection cilium's transform makes is the
// handler's business here: kverify's informer has no transform).
func start(ctx context.Context, lw *server, onDelete func(key string)) (held func() bool, stop func(), err error) {
	inf, err := informer.NewInformer(lw, informer.InformerOptions{Reflector: reflector.Options{
		Name: "repro", ExpectedType: &metav1.PartialObjectMetadata{}, WatchList: reflector.WatchListOff}})
	if err != nil {
		return nil, nil, err
	}
	if _, err := inf.AddEventHandler(handler{onDelete}); err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		inf.Run(ctx)
	}()
	held = func() bool {
		_, ok, _ := inf.GetByKey("default/o1")
		return ok
	}
	return held, func() { cancel(); <-done }, nil
}

type handler struct{ onDelete func(string) }

func (handler) OnAdd(any, bool)   {}
func (handler) OnUpdate(any, any) {}
func (h handler) OnDelete(obj any) {
	if key, err := delta.DeletionHandlingKey(obj); err == nil {
		h.onDelete(key)
	}
}
