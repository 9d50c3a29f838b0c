// Command reflector-watchlist-backoff-ignores-cancel shows that stopping a
// reflector waits out the watch-list backoff. Run "will exit when stopCh is
// closed" (k8s.io/client-go@v0.37.2/tools/cache/reflector.go:411-413, and
// RunWithContext "will exit when the context is canceled", :420-422), but
// when a watch-list request is refused (connection refused, or 429) watchList
// backs off with <-r.clock.After(r.delayHandler()) (reflector.go:811-819),
// which does not watch the stop channel or context. Sequence: a
// ListerWatcher whose Watch answers 429 Too Many Requests;
// r := cache.NewReflectorWithOptions(lw, &metav1.PartialObjectMetadata{},
// store, cache.ReflectorOptions{Clock: fakeClock}) with watch-list on (the
// default since v0.35); go r.Run(stop); once the request was refused and the
// reflector waits on the clock, close(stop). Run does not return within 2s;
// it returns only once the fake clock is advanced past the backoff. With
// the real clock the wait is the backoff delay: up to 60s with jitter, and
// a shut-down informer keeps its goroutine (and the next request) until
// then.
package main

import (
	"fmt"
	"os"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
	lw := &fakeLW{
		list: func(int, metav1.ListOptions) (runtime.Object, error) { return list("1"), nil },
		watch: func(int, metav1.ListOptions) (watch.Interface, error) {
			return nil, apierrors.NewTooManyRequests("too many requests, please try again later", 1)
		},
	}
	r := newReflector(lw, cache.NewStore(cache.MetaNamespaceKeyFunc), clk)

	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		r.Run(stop)
		close(done)
	}()

	// Wait until the watch-list request was refused and the reflector
	// waits on its clock (the backoff).
	if !waitFor(2*time.Second, func() bool {
		_, watches := lw.requests()
		return len(watches) > 0 && clk.HasWaiters()
	}) {
		fmt.Println("DEFECT: setup: the reflector made no watch request or does not wait on its clock after a 429")
		os.Exit(1)
	}
	if !lw.firstIsWatchList() {
		fmt.Println("OK: this client-go did not stream with watch-list (its first request was not a watch with sendInitialEvents=true); nothing to show")
		return
	}

	close(stop)
	select {
	case <-done:
		fmt.Println("OK: Run returned at once after stop was closed during the watch-list backoff")
		return
	case <-time.After(2 * time.Second):
	}

	// Attribute the wait: advancing the clock past any backoff releases it.
	clk.Step(2 * time.Minute)
	released := "and still had not after the clock was advanced 2m"
	select {
	case <-done:
		released = "it returned only once the clock was advanced past the backoff"
	case <-time.After(time.Second):
	}
	fmt.Printf("DEFECT: Run did not return within 2s after stop was closed: it waits out the watch-list 429 backoff on clock.After; %s\n", released)
	os.Exit(1)
}

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
