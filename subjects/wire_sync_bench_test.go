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
	prefl "github.com/kverify/kverify/props/reflector"
	"github.com/kverify/kverify/props/wire"
	"github.com/kverify/kverify/spec/apiserver"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
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
	model := prefl.NewServer(apiserver.Config{}, nil)
	defer model.Close()
	srv := wire.NewServer(model)
	if err := srv.Populate(syncObjects); err != nil {
		b.Fatal(err)
	}
	for _, impl := range wireImpls {
		b.Run(fmt.Sprintf("impl=%s", impl.name), func(b *testing.B) { benchWireSync(b, srv, impl.new) })
	}
}

func benchWireSync(b *testing.B, srv *wire.Server, newInf wireInformer) {
	live := newHeapMeter()
	var peaks, bytes float64
	b.ReportAllocs()
	op := func() (float64, float64) {
		b.StopTimer()
		h := &syncCounter{done: make(chan struct{})}
		peak := newHeapMeter()
		base := live.live()
		sent := srv.Bytes()
		stopSampling := sampleHeap(peak)
		b.StartTimer()

		cs, err := kubernetes.NewForConfig(&rest.Config{Host: "http://kverify.invalid", Transport: wire.Transport(srv), QPS: -1})
		if err != nil {
			b.Fatal(err)
		}
		lw := cache.NewListWatchFromClient(cs.CoreV1().RESTClient(), wire.Resource, wire.Namespace, fields.Everything())
		inf := newInf(b, lw, h)
		ctx, cancel := context.WithCancel(context.Background())
		ran := make(chan struct{})
		go func() {
			defer close(ran)
			inf.run(ctx)
		}()
		waitDone(b, h.done, "the handler to have every add")
		waitFor(b, "the informer to sync", inf.hasSynced)

		b.StopTimer()
		top := mb(stopSampling(), base)
		cancel()
		waitDone(b, ran, "Run to return")
		if n := inf.watchErrs.Load(); n > 0 || h.others.Load() > 0 || h.initial.Load() != syncObjects {
			b.Fatalf("the sync was not clean: %d watch errors, %d updates or deletes, %d initial-list adds of %d", n, h.others.Load(), h.initial.Load(), syncObjects)
		}
		b.StartTimer()
		return top, float64(srv.Bytes()-sent) / (1 << 20)
	}
	warm(b, func() { op() })
	for range b.N {
		p, w := op()
		peaks, bytes = peaks+p, bytes+w
	}
	b.StopTimer()
	b.ReportMetric(peaks/float64(b.N), "peak-MB")
	b.ReportMetric(bytes/float64(b.N), "wire-MB")
}
