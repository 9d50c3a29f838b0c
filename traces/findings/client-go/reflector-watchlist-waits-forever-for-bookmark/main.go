// Command reflector-watchlist-waits-forever-for-bookmark shows that a
// watch-list stream that never sends its initial-events-end bookmark, and is
// never closed, holds the reflector forever. watchList's doc says the stream
// "ends with a synthetic "Bookmark" event containing the most recent
// ResourceVersion. After receiving a "Bookmark" event the reflector is
// considered to be synchronized" (k8s.io/client-go@v0.37.2/tools/cache/
// reflector.go:786-803), and ListAndWatch falls back to a regular LIST when
// "Data couldn't be fetched in watchlist mode" (reflector.go:489-497); but
// handleAnyWatch waits for the bookmark as long as the stream stays open,
// with only a 10s warning ticker (reflector.go:840-875,1230-1283): no
// deadline, no fallback. Sequence: a ListerWatcher whose first Watch returns
// a stream with one ADDED event and nothing more; r :=
// cache.NewReflectorWithOptions(lw, &metav1.PartialObjectMetadata{}, store,
// cache.ReflectorOptions{Clock: fakeClock}) with watch-list on (the default
// since v0.35); go r.Run(stop); advance the fake clock 30 minutes, 5 at a
// time. The reflector never lists, never syncs the store and publishes no
// resource version: an informer behind it stays unsynced until restarted.
// (The stream's timeoutSeconds is the server's to honour; a proxy or server
// that keeps the connection open without the bookmark hangs the client.)
package main

import (
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

func main() {
	clk := testingclock.NewFakeClock(time.Now())
	a := object("a", "5")
	lw := &fakeLW{
		list: func(int, metav1.ListOptions) (runtime.Object, error) { return list("5", a), nil },
		watch: func(n int, _ metav1.ListOptions) (watch.Interface, error) {
			if n == 1 {
				// The initial events, without the end bookmark; never closed.
				return newStream(watch.Event{Type: watch.Added, Object: a.DeepCopy()}), nil
			}
			return newStream(), nil // later watches: open, quiet
		},
	}
	store := cache.NewStore(cache.MetaNamespaceKeyFunc)
	r := newReflector(lw, store, clk)

	stop := make(chan struct{})
	defer close(stop)
	go r.Run(stop)

	// Wait until the stream is open, and briefly for the reflector to set
	// a timer on its clock (releases before v0.31 set none while streaming;
	// a timer set late only misses the first of the steps below).
	if !waitFor(2*time.Second, func() bool { _, watches := lw.requests(); return len(watches) > 0 }) {
		fmt.Println("DEFECT: setup: the reflector made no watch request")
		os.Exit(1)
	}
	waitFor(200*time.Millisecond, clk.HasWaiters)
	if !lw.firstIsWatchList() {
		fmt.Println("OK: this client-go did not stream with watch-list (its first request was not a watch with sendInitialEvents=true); nothing to show")
		return
	}

	fellBack := func() bool {
		lists, watches := lw.requests()
		return len(lists) > 0 || len(watches) > 1
	}
	var waited time.Duration
	for waited < 30*time.Minute && !fellBack() {
		clk.Step(5 * time.Minute)
		waited += 5 * time.Minute
		waitFor(200*time.Millisecond, fellBack)
	}
	lists, watches := lw.requests()
	if !fellBack() {
		fmt.Printf("DEFECT: after %v on the reflector's clock it still waits on the watch-list stream without its end bookmark: no LIST fallback, %d objects stored, resource version %q\n",
			waited, len(store.List()), r.LastSyncResourceVersion())
		os.Exit(1)
	}
	fmt.Printf("OK: within %v the reflector gave up the stream without its end bookmark (%d lists, %d watches)\n", waited, len(lists), len(watches))
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
