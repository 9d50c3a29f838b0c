// Command reflector-publishes-non-numeric-rv shows that a watch event whose
// object has a resourceVersion that is not a number is stored and its
// version published, so the reflector's next request asks for it. The
// reflector resumes from "the resource version observed when last sync with
// the underlying store" (LastSyncResourceVersion,
// k8s.io/client-go@v0.37.2/tools/cache/reflector.go:1097), and
// resource versions are opaque strings the server issued; but
// handleAnyWatch takes meta.GetResourceVersion() of any event, stores the
// object and publishes the version without checking it
// (reflector.go:1009-1036,1075). Sequence: a watch-list stream with ADDED
// a@5, the initial-events-end bookmark at 5, then MODIFIED a with
// resourceVersion "not-a-number", then the server closes the stream; r :=
// cache.NewReflectorWithOptions(lw, &metav1.PartialObjectMetadata{}, store,
// cache.ReflectorOptions{Clock: fakeClock}) with watch-list on (the default
// since v0.35); go r.Run(stop). The store holds a at "not-a-number",
// LastSyncResourceVersion is "not-a-number", and the next watch request
// carries resourceVersion=not-a-number, which a real kube-apiserver
// refuses: with 500 Internal Server Error today (kubernetes#139485; PR
// #139525 would make it 400 Bad Request, both open). Either way every
// retry asks for the same version, so the informer never recovers without
// a restart.
package main

import (
	"fmt"
	"os"
	"strconv"
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

const badRV = "not-a-number"

func main() {
	clk := testingclock.NewFakeClock(time.Now())
	a := object("a", "5")
	lw := &fakeLW{
		list: func(int, metav1.ListOptions) (runtime.Object, error) { return list("5", a), nil },
		watch: func(n int, _ metav1.ListOptions) (watch.Interface, error) {
			if n == 1 {
				s := newStream(
					watch.Event{Type: watch.Added, Object: a.DeepCopy()},
					endBookmark("5"),
					watch.Event{Type: watch.Modified, Object: object("a", badRV)},
				)
				s.close() // the server ends the stream after these events
				return s, nil
			}
			return newStream(), nil // later watches: open, quiet
		},
	}
	store := cache.NewStore(cache.MetaNamespaceKeyFunc)
	r := newReflector(lw, store, clk)

	stop := make(chan struct{})
	defer close(stop)
	go r.Run(stop)

	// Wait for the request that follows the stream, advancing the clock
	// past any backoff on the way.
	next := func() bool { _, watches := lw.requests(); return len(watches) > 1 }
	for i := 0; i < 10 && !waitFor(100*time.Millisecond, next); i++ {
		clk.Step(time.Minute)
	}
	lists, watches := lw.requests()
	if len(watches) == 0 {
		fmt.Println("DEFECT: setup: the reflector made no watch request")
		os.Exit(1)
	}
	if !lw.firstIsWatchList() {
		fmt.Println("OK: this client-go did not stream with watch-list (its first request was not a watch with sendInitialEvents=true); nothing to show")
		return
	}
	if len(watches) < 2 {
		fmt.Printf("DEFECT: setup: no request followed the stream (%d lists)\n", len(lists))
		os.Exit(1)
	}
	asked := watches[1].ResourceVersion
	stored := "absent"
	if o, ok, _ := store.GetByKey("default/a"); ok {
		stored = o.(metav1.Object).GetResourceVersion()
	}
	if _, err := strconv.ParseUint(asked, 10, 64); err != nil && asked != "" {
		fmt.Printf("DEFECT: the event's resourceVersion %q was stored (a at %q) and published (LastSyncResourceVersion %q): the next watch asks for resourceVersion=%q, which a real kube-apiserver refuses (500 today, kubernetes#139485; 400 once PR #139525 lands): every retry asks for it again\n",
			badRV, stored, r.LastSyncResourceVersion(), asked)
		os.Exit(1)
	}
	fmt.Printf("OK: the event with resourceVersion %q was not applied (a at %q); the next watch asks for resourceVersion=%q\n", badRV, stored, asked)
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
