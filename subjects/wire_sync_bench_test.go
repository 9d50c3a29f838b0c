package subjects

// BenchmarkWireSync100k: the initial sync of 100,000 ConfigMaps over HTTP
// (props/wire's served model, through the in-memory transport: JSON
// encoding on the server, client-go's REST client and decoder on the
// client), ours (impl/informer) side by side with client-go's shared
// informer, both built on kubernetes.NewForConfig and
// NewListWatchFromClient as a controller builds them, each syncing the
// way it does by default (a watch-list stream). Besides time, B/op and
// allocs/op (which count the server's side too, the same for both),
// peak-MB is the mean largest heap above the live heap before the op
// (BenchmarkInformerSync100k's meter; the model server's 100,000 objects
// are in that baseline) and wire-MB the bytes the server wrote per sync.
//
//	go test -run '^$' -bench WireSync100k -benchmem -benchtime 3x -count 3 ./subjects
//
// One op is one sync: a fresh clientset and informer with one handler
// that counts its adds, run until the handler has had every add and the
// informer reports HasSynced. Stopping it is outside the timer.

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/kverify/kverify/impl/informer"
	"github.com/kverify/kverify/impl/reflector"
	"github.com/kverify/kverify/props/modelserver"
	"github.com/kverify/kverify/props/wire"
	"github.com/kverify/kverify/spec/apiserver"
	"github.com/kverify/kverify/subjects/upstream"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
)

// wireInformer builds an informer on the REST stack over rt.
type wireInformer func(b *testing.B, lw *cache.ListWatch, h *syncCounter) syncInformer

var wireImpls = []struct {
	name string
	new  wireInformer
}{
	{Ours, func(b *testing.B, lw *cache.ListWatch, h *syncCounter) syncInformer {
		errs := &atomic.Int64{}
		inf, err := informer.NewInformer(lw, informer.InformerOptions{Reflector: reflector.Options{ExpectedType: &corev1.ConfigMap{},
			OnWatchError: func(error) { errs.Add(1) }}})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := inf.AddEventHandler(h); err != nil {
			b.Fatal(err)
		}
		return syncInformer{run: inf.Run, hasSynced: inf.HasSynced, watchErrs: errs}
	}},
	{Upstream, func(b *testing.B, lw *cache.ListWatch, h *syncCounter) syncInformer {
		errs := &atomic.Int64{}
		inf := cache.NewSharedIndexInformer(lw, &corev1.ConfigMap{}, 0, cache.Indexers{})
		if err := inf.SetWatchErrorHandlerWithContext(func(context.Context, *cache.Reflector, error) { errs.Add(1) }); err != nil {
			b.Fatal(err)
		}
		if _, err := inf.AddEventHandler(h); err != nil {
			b.Fatal(err)
		}
		return syncInformer{run: inf.RunWithContext, hasSynced: inf.HasSynced, watchErrs: errs}
	}},
}

func BenchmarkWireSync100k(b *testing.B) {
	model := modelserver.NewServer(apiserver.Config{}, nil)
	defer model.Close()
	srv := wire.NewServer(model)
	if err := srv.Populate(syncObjects); err != nil {
		b.Fatal(err)
	}
	for _, impl := range inRoundOrder(wireImpls) {
		b.Run(fmt.Sprintf("impl=%s", impl.name), func(b *testing.B) { benchWireSync(b, srv, impl.new) })
	}
}

func benchWireSync(b *testing.B, srv *wire.Server, newInf wireInformer) {
	var bytes float64
	benchSyncs(b, func(h *syncCounter) (func() syncInformer, func(int64)) {
		sent := srv.Bytes()
		return func() syncInformer {
				lw, err := upstream.ConfigMapListWatch("http://kverify.invalid", wire.Transport(srv))
				if err != nil {
					b.Fatal(err)
				}
				return newInf(b, lw, h)
			}, func(errs int64) {
				if errs > 0 || h.others.Load() > 0 || h.initial.Load() != syncObjects {
					b.Fatalf("the sync was not clean: %d watch errors, %d updates or deletes, %d initial-list adds of %d", errs, h.others.Load(), h.initial.Load(), syncObjects)
				}
				bytes += float64(srv.Bytes()-sent) / (1 << 20)
			}
	})
	b.ReportMetric(bytes/float64(b.N+1), "wire-MB") // the warm-up sync counted too
}
