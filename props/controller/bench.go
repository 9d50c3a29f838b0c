package controller

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// Benchmark measures s changing keys objects once each and reconciling
// them with workers workers. One op: a controller over a fixed list of
// keys objects runs and reconciles each once (outside the timer); then
// (timed) every object is modified once through the watch, and the op ends
// when every key has been reconciled reading its new version. The
// reconciler only reads the cache. Stopping the controller is outside the
// timer too. B/op counts everything allocated while timed: the watch
// events' objects (the same for every subject), the handler's, the
// queue's and the workers' work.
//
// The rate limiter is client-go's controller default's per-item part
// (5ms, 1000s); no reconcile fails, so it only counts.
func Benchmark(b *testing.B, s Subject, keys, workers int) {
	b.ReportAllocs()
	b.StopTimer()
	for range b.N {
		if err := benchOnce(b, s, keys, workers); err != nil {
			b.Fatal(err)
		}
	}
}

func benchOnce(b *testing.B, s Subject, keys, workers int) error {
	src := newBenchSource(keys)
	index := make(map[string]int, keys)
	for i := range keys {
		index[src.key(i)] = i
	}
	// done[i] is the last phase key i was reconciled in (1: its listed
	// version, 2: its modified one); left counts keys behind the phase.
	done := make([]atomic.Int32, keys)
	var phase atomic.Int32
	phase.Store(1)
	var left atomic.Int64
	left.Store(int64(keys))
	reached := make(chan struct{}, 2)
	var bad atomic.Value
	reconcile := func(_ context.Context, key string, cache Reader) (Result, error) {
		obj, ok, err := cache.Get(key)
		m, isMeta := obj.(*metav1.PartialObjectMetadata)
		if err != nil || !ok || !isMeta {
			bad.CompareAndSwap(nil, fmt.Sprintf("the cache's Get(%s): %T, %v, %v", key, obj, ok, err))
			return Result{}, nil
		}
		i := index[key]
		p := phase.Load()
		want := "1"
		if p == 2 {
			want = strconv.Itoa(2 + i)
		}
		if m.ResourceVersion == want && done[i].Load() < p && done[i].CompareAndSwap(p-1, p) && left.Add(-1) == 0 {
			reached <- struct{}{}
		}
		return Result{}, nil
	}
	c, err := s.New(Setup{Source: src, Workers: workers, BaseDelay: 5 * time.Millisecond, MaxDelay: 1000 * time.Second, Reconcile: reconcile})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { c.Run(ctx) })
	defer func() {
		cancel()
		wg.Wait()
	}()
	wait := func(what string) error {
		select {
		case <-reached:
			return nil
		case <-time.After(5 * time.Minute):
			return fmt.Errorf("%s: %d of %d keys not reconciled after 5 minutes", what, left.Load(), keys)
		}
	}
	if err := wait("the initial list"); err != nil {
		return err
	}
	phase.Store(2)
	left.Store(int64(keys))
	b.StartTimer()
	src.modifyAll()
	err = wait("the changes")
	b.StopTimer()
	if v := bad.Load(); v != nil {
		return errors.New(v.(string))
	}
	return err
}

// benchSource lists keys objects at version 1 and serves one watch, on
// which modifyAll sends one MODIFIED event per object; it refuses
// watch-list requests, so every subject lists.
type benchSource struct {
	n    int
	list *metav1.PartialObjectMetadataList
	w    *watch.FakeWatcher
	// watching is closed once the first watch is served.
	watching chan struct{}
	once     sync.Once
}

func newBenchSource(n int) *benchSource {
	s := &benchSource{n: n, list: &metav1.PartialObjectMetadataList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}},
		w: watch.NewFakeWithChanSize(n+1, false), watching: make(chan struct{})}
	s.list.Items = make([]metav1.PartialObjectMetadata, n)
	for i := range n {
		s.list.Items[i] = metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: s.name(i), ResourceVersion: "1"}}
	}
	return s
}

func (s *benchSource) name(i int) string { return fmt.Sprintf("o%06d", i) }
func (s *benchSource) key(i int) string  { return "default/" + s.name(i) }

func (s *benchSource) List(opts metav1.ListOptions) (runtime.Object, error) {
	return s.ListWithContext(context.Background(), opts)
}
func (s *benchSource) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return s.WatchWithContext(context.Background(), opts)
}

// ListWithContext returns the whole list, whatever the limit.
func (s *benchSource) ListWithContext(context.Context, metav1.ListOptions) (runtime.Object, error) {
	l := *s.list
	l.Items = append([]metav1.PartialObjectMetadata(nil), s.list.Items...)
	return &l, nil
}

// WatchWithContext serves the one watch; a watch-list request and any
// later watch are refused.
func (s *benchSource) WatchWithContext(_ context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	if opts.SendInitialEvents != nil && *opts.SendInitialEvents {
		return nil, errors.New("benchmark source: no watch-list")
	}
	served := false
	s.once.Do(func() { served = true })
	if !served {
		return nil, errors.New("benchmark source: one watch only")
	}
	close(s.watching)
	return s.w, nil
}

// modifyAll sends one MODIFIED event per object, at versions 2, 3, ...
func (s *benchSource) modifyAll() {
	<-s.watching
	for i := range s.n {
		s.w.Modify(&metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: s.name(i), ResourceVersion: strconv.Itoa(2 + i)}})
	}
}
