//go:build kverify_ours

package main

import (
	"context"

	kvreflector "github.com/kverify/kverify/impl/reflector"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	testingclock "k8s.io/utils/clock/testing"
)

// newReflector is kverify's reflector with client-go's defaults, for
// *metav1.PartialObjectMetadata, with the given clock.
func newReflector(lw *fakeLW, store cache.Store, clk *testingclock.FakeClock) reflector {
	r, err := kvreflector.New(contextLW{lw}, store, kvreflector.Options{
		Name: "repro", ExpectedType: &metav1.PartialObjectMetadata{}, Clock: clk})
	if err != nil {
		panic(err)
	}
	return oursReflector{r}
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

// oursReflector runs ours (which takes a context) until stopCh closes.
type oursReflector struct{ r *kvreflector.Reflector }

func (o oursReflector) Run(stopCh <-chan struct{}) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-stopCh:
			cancel()
		case <-ctx.Done():
		}
	}()
	o.r.Run(ctx)
}
