package ours

import (
	"net/http"

	"github.com/kverify/kverify/impl/delta"
	"github.com/kverify/kverify/impl/informer"
	"github.com/kverify/kverify/impl/reflector"
	"github.com/kverify/kverify/props/wire"
	"github.com/kverify/kverify/subjects/upstream"
	corev1 "k8s.io/api/core/v1"
)

// Wire is our informer (impl/informer) on client-go's REST stack as a
// wire subject: the ListerWatcher is client-go's NewListWatchFromClient
// over kubernetes.NewForConfig, as a controller would hand it ours.
func Wire() wire.Subject {
	return wire.Subject{Name: "ours", Start: func(url string, rt http.RoundTripper) (wire.Client, error) {
		lw, err := upstream.ConfigMapListWatch(url, rt)
		if err != nil {
			return nil, err
		}
		inf, err := informer.NewInformer(lw, informer.InformerOptions{Reflector: reflector.Options{Name: "ours-wire", ExpectedType: &corev1.ConfigMap{}}})
		if err != nil {
			return nil, err
		}
		c := wire.NewGoClient("github.com/kverify/kverify/impl/informer")
		reg, err := inf.AddEventHandler(c)
		if err != nil {
			return nil, err
		}
		c.Informer = wire.Informer{List: inf.List, LastSyncResourceVersion: inf.LastSyncResourceVersion,
			Synced: reg.HasSynced,
			Tombstone: func(obj any) (any, bool) {
				t, ok := obj.(delta.DeletedFinalStateUnknown)
				return t.Obj, ok
			}}
		c.Run(inf.Run)
		return c, nil
	}}
}
