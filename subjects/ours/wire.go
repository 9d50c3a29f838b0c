package ours

import (
	"context"
	"net/http"

	"github.com/kverify/kverify/impl/delta"
	"github.com/kverify/kverify/impl/informer"
	"github.com/kverify/kverify/impl/reflector"
	"github.com/kverify/kverify/props/wire"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// Wire is our informer (impl/informer) on client-go's REST stack as a
// wire subject: the ListerWatcher is client-go's NewListWatchFromClient
// over kubernetes.NewForConfig, as a controller would hand it ours.
func Wire() wire.Subject {
	return wire.Subject{Name: "ours", Start: func(url string, rt http.RoundTripper) (wire.Client, error) {
		cs, err := kubernetes.NewForConfig(&rest.Config{Host: url, Transport: rt})
		if err != nil {
			return nil, err
		}
		lw := cache.NewListWatchFromClient(cs.CoreV1().RESTClient(), wire.Resource, wire.Namespace, fields.Everything())
		inf, err := informer.NewInformer(lw, informer.InformerOptions{Reflector: reflector.Options{Name: "ours-wire", ExpectedType: &corev1.ConfigMap{}}})
		if err != nil {
			return nil, err
		}
		c := wire.NewGoClient("github.com/kverify/kverify/impl/informer")
		reg, err := inf.AddEventHandler(c)
		if err != nil {
			return nil, err
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		c.Informer = wire.Informer{List: inf.List, LastSyncResourceVersion: inf.LastSyncResourceVersion,
			Synced: reg.HasSynced, Stop: func() { cancel(); <-done },
			Tombstone: func(obj any) (any, bool) {
				t, ok := obj.(delta.DeletedFinalStateUnknown)
				return t.Obj, ok
			}}
		go func() {
			defer close(done)
			inf.Run(ctx)
		}()
		return c, nil
	}}
}
