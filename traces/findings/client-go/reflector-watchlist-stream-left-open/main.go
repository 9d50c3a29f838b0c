// Command reflector-watchlist-stream-left-open shows that the reflector
// leaves a watch-list stream open when the store's Replace fails. handleAnyWatch
// promises "The watcher will always be stopped, unless
// exitOnWatchListBookmarkReceived is true and watchListBookmarkReceived is
// true. This allows the same watch stream to be re-used by the caller"
// (k8s.io/client-go@v0.37.2/tools/cache/reflector.go:969-971), so the caller
// owns the stream after the end bookmark; but when r.store.Replace then
// fails, watchList returns (nil, err) without stopping it
// (reflector.go:901-903), and ListAndWatchWithContext sets w = nil and falls
// back to LIST (reflector.go:489-497): nobody holds the stream any more.
// Sequence: a watch-list stream with ADDED a@5 and the initial-events-end
// bookmark at 5, left open; a store whose first Replace fails; r :=
// cache.NewReflectorWithOptions(lw, &metav1.PartialObjectMetadata{}, store,
// cache.ReflectorOptions{Clock: fakeClock}) with watch-list on (the default
// since v0.35); go r.Run(stop); wait for the reflector to list and watch
// again; close(stop). The first stream's Stop is never called, not even after
// Run returned: its goroutine and connection leak for as long as the server
// keeps it open. (A stream stopped twice is allowed, kubernetes PR #131266;
// only a stream never stopped is the defect.)
package main

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	testingclock "k8s.io/utils/clock/testing"
)

// reflector is the part of cache.Reflector the sequence uses.
type reflector interface {
	Run(stopCh <-chan struct{})
	LastSyncResourceVersion() string
}

// failOnceStore is a cache.Store whose first Replace fails.
type failOnceStore struct {
	cache.Store
	failed atomic.Bool
}

func (s *failOnceStore) Replace(list []interface{}, rv string) error {
	if s.failed.CompareAndSwap(false, true) {
		return errors.New("replace failed")
	}
	return s.Store.Replace(list, rv)
}

func main() {
	clk := testingclock.NewFakeClock(time.Now())
	a := object("a", "5")
	first := newStream(watch.Event{Type: watch.Added, Object: a.DeepCopy()}, endBookmark("5")) // left open
	lw := &fakeLW{
		list: func(int, metav1.ListOptions) (runtime.Object, error) { return list("6", a), nil },
		watch: func(n int, _ metav1.ListOptions) (watch.Interface, error) {
			if n == 1 {
				return first, nil
			}
			return newStream(), nil // later watches: open, quiet
		},
	}
	store := &failOnceStore{Store: cache.NewStore(cache.MetaNamespaceKeyFunc)}
	r := newReflector(lw, store, clk)

	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		r.Run(stop)
		close(done)
	}()

	// Wait until the reflector, after the failed Replace, watches again,
	// advancing the clock past any backoff on the way (releases before
	// v0.29 retry the whole ListAndWatch after a backoff instead of
	// falling back to LIST at once).
	again := func() bool { _, watches := lw.requests(); return len(watches) > 1 }
	for i := 0; i < 10 && !waitFor(100*time.Millisecond, again); i++ {
		clk.Step(time.Minute)
	}
	if !again() {
		lists, watches := lw.requests()
		fmt.Printf("DEFECT: setup: the reflector did not watch again after the failed Replace (%d lists, %d watches)\n", len(lists), len(watches))
		os.Exit(1)
	}
	if !lw.firstIsWatchList() {
		fmt.Println("OK: this client-go did not stream with watch-list (its first request was not a watch with sendInitialEvents=true); nothing to show")
		return
	}
	whileRunning := first.stops.Load()
	close(stop)
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		fmt.Println("DEFECT: setup: Run did not return within 2s after stop was closed")
		os.Exit(1)
	}
	lists, watches := lw.requests()
	if first.stops.Load() == 0 {
		fmt.Printf("DEFECT: the watch-list stream whose initial events the store failed to take was never stopped: the reflector went on (%d lists, %d watches) and Run returned with it still open\n",
			len(lists), len(watches))
		os.Exit(1)
	}
	fmt.Printf("OK: the watch-list stream was stopped (%d Stop calls by the time the reflector watched again, %d after Run returned)\n", whileRunning, first.stops.Load())
}

// stream is a fake watch.Interface: it delivers the events it was given
// and records how often it is stopped. Stop closes its result channel, as
// a real stream does; close ends it from the server's side.
type stream struct {
	ch    chan watch.Event
	once  sync.Once
	stops atomic.Int32
}

func newStream(events ...watch.Event) *stream {
	s := &stream{ch: make(chan watch.Event, len(events))}
	for _, e := range events {
		s.ch <- e
	}
	return s
}

func (s *stream) ResultChan() <-chan watch.Event { return s.ch }
func (s *stream) Stop()                          { s.stops.Add(1); s.close() }
func (s *stream) close()                         { s.once.Do(func() { close(s.ch) }) }

// fakeLW is a cache.ListerWatcher answering with the given funcs and
// recording every request's options.
type fakeLW struct {
	mu      sync.Mutex
	first   string // "list" or "watch": the first request's kind
	lists   []metav1.ListOptions
	watches []metav1.ListOptions
	list    func(n int, opts metav1.ListOptions) (runtime.Object, error)
	watch   func(n int, opts metav1.ListOptions) (watch.Interface, error)
}

func (lw *fakeLW) List(opts metav1.ListOptions) (runtime.Object, error) {
	lw.mu.Lock()
	if lw.first == "" {
		lw.first = "list"
	}
	lw.lists = append(lw.lists, opts)
	n := len(lw.lists)
	lw.mu.Unlock()
	return lw.list(n, opts)
}

func (lw *fakeLW) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	lw.mu.Lock()
	if lw.first == "" {
		lw.first = "watch"
	}
	lw.watches = append(lw.watches, opts)
	n := len(lw.watches)
	lw.mu.Unlock()
	return lw.watch(n, opts)
}

// requests returns copies of the list and watch requests made so far.
func (lw *fakeLW) requests() (lists, watches []metav1.ListOptions) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return append([]metav1.ListOptions(nil), lw.lists...), append([]metav1.ListOptions(nil), lw.watches...)
}

// firstIsWatchList reports whether the reflector's first request was a
// watch-list stream (a watch with sendInitialEvents=true).
func (lw *fakeLW) firstIsWatchList() bool {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return lw.first == "watch" && lw.watches[0].SendInitialEvents != nil && *lw.watches[0].SendInitialEvents
}

func object(name, rv string) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, ResourceVersion: rv}}
}

// endBookmark is the initial-events-end bookmark of a watch-list stream.
func endBookmark(rv string) watch.Event {
	return watch.Event{Type: watch.Bookmark, Object: &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
		ResourceVersion: rv, Annotations: map[string]string{"k8s.io/initial-events-end": "true"}}}}
}

func list(rv string, items ...*metav1.PartialObjectMetadata) *metav1.PartialObjectMetadataList {
	l := &metav1.PartialObjectMetadataList{ListMeta: metav1.ListMeta{ResourceVersion: rv}}
	for _, o := range items {
		l.Items = append(l.Items, *o)
	}
	return l
}

// waitFor polls cond for up to d of real time.
func waitFor(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(time.Millisecond)
	}
	return true
}
