//go:build !clientgo_before_v0_27

package upstream

import (
	"context"
	"time"

	"github.com/kverify/kverify/props/modelserver"
	prefl "github.com/kverify/kverify/props/reflector"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

// SharedInformer returns client-go's cache.SharedIndexInformer over the
// model server as an assembled-informer subject, made with
// NewSharedIndexInformer for *metav1.PartialObjectMetadata, the check's
// default resync period and no indexers; watch-list as in Reflector.
func SharedInformer() prefl.InformerSubject {
	return prefl.InformerSubject{Capabilities: prefl.Capabilities{NoWatchList: noWatchList(), AlwaysStreams: alwaysStreams()}, New: func(srv *modelserver.Server, watchList bool, resync time.Duration) (prefl.Informer, error) {
		dropErrorBackoff()
		var lw cache.ListerWatcher = srv
		if !watchList {
			lw = modelserver.NoWatchList{Server: srv}
		}
		return sharedInformer{cache.NewSharedIndexInformer(lw, &metav1.PartialObjectMetadata{}, resync, cache.Indexers{})}, nil
	}}
}

type sharedInformer struct{ i cache.SharedIndexInformer }

func (s sharedInformer) AddEventHandler(h prefl.Handler) (prefl.Registration, error) {
	return s.i.AddEventHandler(h)
}
func (s sharedInformer) AddEventHandlerWithResyncPeriod(h prefl.Handler, period time.Duration) (prefl.Registration, error) {
	return s.i.AddEventHandlerWithResyncPeriod(h, period)
}
func (s sharedInformer) HasSynced() bool         { return s.i.HasSynced() }
func (s sharedInformer) List() []any             { return s.i.GetStore().List() }
func (s sharedInformer) Run(ctx context.Context) { runInformer(ctx, s.i) }
