package controller

import (
	"context"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing/synctest"
	"time"

	"github.com/kverify/kverify/props/checkkit"
	"github.com/kverify/kverify/props/modelserver"
	spec "github.com/kverify/kverify/spec/controller"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// behaviour is what one reconcile of a key does, in the check's script.
type behaviour struct {
	Sleep        time.Duration `json:",omitempty"`
	Fail         bool          `json:",omitempty"`
	Panic        bool          `json:",omitempty"`
	RequeueAfter time.Duration `json:",omitempty"`
	// Hold: the reconcile waits until the check releases the key.
	Hold bool `json:",omitempty"`
}

func (b behaviour) String() string {
	var parts []string
	if b.Sleep > 0 {
		parts = append(parts, "sleep "+b.Sleep.String())
	}
	if b.Hold {
		parts = append(parts, "hold")
	}
	switch {
	case b.Panic:
		parts = append(parts, "panic")
	case b.Fail && b.RequeueAfter > 0:
		parts = append(parts, "fail with a requeue after "+b.RequeueAfter.String())
	case b.Fail:
		parts = append(parts, "fail")
	case b.RequeueAfter > 0:
		parts = append(parts, "requeue after "+b.RequeueAfter.String())
	default:
		parts = append(parts, "ok")
	}
	return strings.Join(parts, ", ")
}

// logSize is how many of the last events a violation shows.
const logSize = 40

// world is one controller run: the server, the subject's controller, the
// reconciler and handler hook the check gives it, and the ledger
// (spec/controller) they report to.
type world struct {
	fail func(guarantee, format string, args ...any)
	srv  *modelserver.Server
	c    Controller

	mu  sync.Mutex
	led *spec.Ledger
	// broken is the first promise a subject goroutine saw broken; the
	// check's goroutine reports it at its next look (check).
	broken *spec.Broken
	// script is each key's behaviour per reconcile, in order (then: ok at
	// once); delays each key's handler delay per notification.
	script map[string][]behaviour
	delays map[string][]time.Duration
	// starts are each key's reconcile start times; reads what each read.
	starts map[string][]time.Time
	reads  map[string][]spec.Seen
	// inflight counts reconciles running; released closes holds.
	inflight int
	handling int
	// workers is how many reconciles may run at once.
	workers int
	// initial, when set, are the keys of the first list: every one must
	// be in the cache, and the handler told of it, when any reconcile
	// starts.
	initial   []string
	released  chan struct{}
	cancelled bool
	events    []string

	cancel context.CancelFunc
	done   chan struct{}
}

func newWorld(fail func(string, string, ...any), srv *modelserver.Server, lim spec.Limiter) *world {
	return &world{fail: fail, srv: srv, led: spec.New(lim), script: map[string][]behaviour{},
		delays: map[string][]time.Duration{}, starts: map[string][]time.Time{}, reads: map[string][]spec.Seen{},
		released: make(chan struct{}), done: make(chan struct{})}
}

// build makes the subject's controller.
func (w *world) build(s Subject, watchList bool, workers int, lim spec.Limiter) {
	w.workers = workers
	c, err := s.New(Setup{Server: w.srv, WatchList: watchList, Workers: workers, BaseDelay: lim.Base, MaxDelay: lim.Max,
		Reconcile: w.reconcile, Notified: w.notified})
	if err != nil {
		w.fail(GConstruction, "New: %v", err)
	}
	if c == nil {
		w.fail(GConstruction, "New returned no controller and no error")
	}
	w.c = c
}

// run starts the controller's Run.
func (w *world) run() {
	ctx, cancel := context.WithCancel(context.Background())
	w.cancel = cancel
	go func() {
		defer close(w.done)
		w.c.Run(ctx)
	}()
}

// logf keeps an event for the violation's report (mu held).
func (w *world) logf(format string, args ...any) {
	w.events = append(w.events, time.Now().Format("15:04:05.000")+" "+fmt.Sprintf(format, args...))
	if len(w.events) > logSize {
		w.events = w.events[len(w.events)-logSize:]
	}
}

// note keeps the first broken promise (mu held).
func (w *world) note(err error) {
	if b, ok := err.(*spec.Broken); ok && w.broken == nil {
		w.broken = b
	}
}

// check reports a promise broken since the last look.
func (w *world) check() {
	w.mu.Lock()
	b, events := w.broken, append([]string(nil), w.events...)
	w.mu.Unlock()
	if b != nil {
		w.fail(byPromise[b.Promise], "%s\n\tlast events:\n\t\t%s", b.Detail, strings.Join(events, "\n\t\t"))
	}
}

func (w *world) reconcile(ctx context.Context, key string, cache Reader) (Result, error) {
	w.mu.Lock()
	// Read under mu, which Notify also takes: every notification recorded
	// before this point had reached the cache (informers write it first),
	// so the ledger may hold the read to them.
	obj, ok, err := cache.Get(key)
	seen, rerr := readSeen(key, obj, ok, err)
	now := time.Now()
	if rerr != "" {
		w.note(&spec.Broken{Promise: spec.PromiseCaughtUp, Detail: rerr})
	}
	if missing := w.missing(cache); missing != "" {
		w.note(&spec.Broken{Promise: syncPromise, Detail: fmt.Sprintf("a reconcile of %s started before the handler was given %s of the first list", key, missing)})
	}
	if w.cancelled {
		w.note(&spec.Broken{Promise: stopPromise, Detail: fmt.Sprintf("a reconcile of %s started after Run's context was cancelled", key)})
	}
	w.note(w.led.Start(key, now, seen))
	w.starts[key] = append(w.starts[key], now)
	w.reads[key] = append(w.reads[key], seen)
	var b behaviour
	if sc := w.script[key]; len(sc) > 0 {
		b, w.script[key] = sc[0], sc[1:]
	}
	w.logf("reconcile %s reads %s: %s", key, seen, b)
	w.inflight++
	if w.workers > 0 && w.inflight > w.workers {
		w.note(&spec.Broken{Promise: workersPromise, Detail: fmt.Sprintf("%d reconciles run at once with %d workers", w.inflight, w.workers)})
	}
	released := w.released
	w.mu.Unlock()

	if b.Sleep > 0 {
		time.Sleep(b.Sleep)
	}
	if b.Hold {
		<-released
	}

	w.mu.Lock()
	o := spec.Outcome{Failed: b.Fail || b.Panic}
	if !o.Failed {
		o.RequeueAfter = b.RequeueAfter
	}
	w.note(w.led.End(key, time.Now(), o))
	w.logf("reconcile %s returns", key)
	w.inflight--
	w.mu.Unlock()
	switch {
	case b.Panic:
		panic(fmt.Sprintf("kverify: the reconcile of %s panics (the check's choice)", key))
	case b.Fail:
		// A RequeueAfter besides the error is ignored: the error wins.
		return Result{RequeueAfter: b.RequeueAfter}, fmt.Errorf("kverify: the reconcile of %s fails (the check's choice)", key)
	}
	return Result{RequeueAfter: b.RequeueAfter}, nil
}

// missing lists the keys of the first list the handler has not been told
// of yet, or the cache lacks (mu held).
func (w *world) missing(cache Reader) string {
	var out []string
	for _, k := range w.initial {
		if _, ok, err := cache.Get(k); !ok || err != nil || !w.led.Told(k) {
			out = append(out, k)
		}
	}
	return strings.Join(out, ", ")
}

// syncPromise marks a reconcile before the first list was in the cache
// (GSyncFirst).
const syncPromise = "sync first"

// workersPromise marks more reconciles at once than workers
// (GWorkers), which the ledger, knowing keys only, cannot see.
const workersPromise = "workers"

// stopPromise marks a reconcile started after cancel (GStop), apart
// from the ledger's nothing-after-Run.
const stopPromise = "stop"

func (w *world) notified(obj any, deleted bool) {
	k, seen, ok := notifiedSeen(obj, deleted)
	w.mu.Lock()
	if !ok {
		w.note(&spec.Broken{Promise: spec.PromiseCaughtUp, Detail: fmt.Sprintf("the handler was notified of a %T without a key", obj)})
		w.mu.Unlock()
		return
	}
	var d time.Duration
	if ds := w.delays[k]; len(ds) > 0 {
		d, w.delays[k] = ds[0], ds[1:]
	}
	w.handling++
	w.mu.Unlock()
	if d > 0 {
		time.Sleep(d)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.handling--
	w.logf("notified %s%s", k, seen)
	w.note(w.led.Notify(k, seen, time.Now()))
}

// readSeen turns a cache read into a state, or says what is wrong with it.
func readSeen(key string, obj any, ok bool, err error) (spec.Seen, string) {
	if err != nil {
		return spec.Seen{}, fmt.Sprintf("the cache's Get(%s) failed: %v", key, err)
	}
	if !ok {
		return spec.Seen{}, ""
	}
	m, isMeta := obj.(*metav1.PartialObjectMetadata)
	if !isMeta {
		return spec.Seen{}, fmt.Sprintf("the cache's Get(%s) returned a %T, not the server's object", key, obj)
	}
	if k := metaKey(m); k != key {
		return spec.Seen{}, fmt.Sprintf("the cache's Get(%s) returned the object %s", key, k)
	}
	rv, perr := strconv.ParseInt(m.ResourceVersion, 10, 64)
	if perr != nil {
		return spec.Seen{}, fmt.Sprintf("the cache's Get(%s) returned version %q", key, m.ResourceVersion)
	}
	return spec.Seen{Present: true, RV: rv}, ""
}

func metaKey(m *metav1.PartialObjectMetadata) string {
	if m.Namespace == "" {
		return m.Name
	}
	return m.Namespace + "/" + m.Name
}

// notifiedSeen is the key and state a notification tells of: the object's,
// or a tombstone's (any struct with a string field Key and, optionally, the
// last state in Obj).
func notifiedSeen(obj any, deleted bool) (string, spec.Seen, bool) {
	if m, ok := obj.(*metav1.PartialObjectMetadata); ok {
		rv, _ := strconv.ParseInt(m.ResourceVersion, 10, 64)
		return metaKey(m), spec.Seen{Present: !deleted, RV: rv}, true
	}
	v := reflect.ValueOf(obj)
	if v.Kind() == reflect.Pointer && !v.IsNil() {
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return "", spec.Seen{}, false
	}
	f := v.FieldByName("Key")
	if !f.IsValid() || f.Kind() != reflect.String {
		return "", spec.Seen{}, false
	}
	var rv int64
	if o := v.FieldByName("Obj"); o.IsValid() && o.CanInterface() {
		if m, ok := o.Interface().(*metav1.PartialObjectMetadata); ok {
			rv, _ = strconv.ParseInt(m.ResourceVersion, 10, 64)
		}
	}
	return f.String(), spec.Seen{RV: rv}, true
}

// serverState is the server's objects now, key to version.
func (w *world) serverState() map[string]int64 {
	_, objs := w.srv.Current()
	out := make(map[string]int64, len(objs))
	for _, o := range objs {
		out[o.Key] = o.RV
	}
	return out
}

// settle waits, with bookmarks, until every key is reconciled (the
// ledger's Final holds) and nothing runs, or two hours pass; it fails with
// eventual reconcile otherwise.
func (w *world) settle() {
	var err error
	for r := 0; r < 120; r++ {
		w.srv.Bookmark()
		time.Sleep(61 * time.Second)
		synctest.Wait()
		w.check()
		w.mu.Lock()
		err = w.led.Final(w.serverState())
		w.mu.Unlock()
		if err == nil {
			return
		}
	}
	w.mu.Lock()
	events := append([]string(nil), w.events...)
	w.mu.Unlock()
	w.fail(GEventual, "two hours after the last write: %v\n\tlast events:\n\t\t%s", err, strings.Join(events, "\n\t\t"))
}

// stop cancels Run and, with check, holds the controller to the stop
// guarantees: Run returns at once when nothing is in flight, and nothing
// of it runs afterwards. Without check it only cleans up.
func (w *world) stop(check bool) {
	if !check {
		w.cleanup()
		return
	}
	if w.cancel == nil {
		return
	}
	w.mu.Lock()
	w.cancelled = true
	w.mu.Unlock()
	w.cancel()
	w.cancel = nil
	w.awaitReturn()
	w.nothingAfter()
	w.srv.Close()
}

// awaitReturn, once Run's context is cancelled, waits for Run to return:
// not while a reconcile is in flight, and at once when none is and no
// handler call (which the informer's Run waits for) is in progress.
func (w *world) awaitReturn() {
	for i := 0; ; i++ {
		synctest.Wait()
		w.check()
		w.mu.Lock()
		n, h := w.inflight, w.handling
		w.mu.Unlock()
		switch {
		case closed(w.done) && n > 0:
			w.fail(GStop, "Run returned with %d reconciles in flight", n)
		case closed(w.done):
			return
		case n == 0 && h == 0 || i == 10:
			stuck := checkkit.BubbleStacks()
			w.release()
			w.srv.Close()
			w.fail(GStop, "Run did not return after its context was cancelled, with %d reconciles in flight and %d handler calls in progress; the bubble's goroutines:\n%s", n, h, stuck)
		}
		time.Sleep(time.Minute)
	}
}

// cleanup, after a check failed, stops everything the run started, so
// that the bubble ends: it cancels Run, releases the held reconciles,
// closes the server and lets time pass until Run, the reconciles and the
// handler calls have returned (a subject that returns early from Run may
// still be reconciling).
func (w *world) cleanup() {
	w.mu.Lock()
	w.cancelled = true
	w.mu.Unlock()
	if w.cancel != nil {
		w.cancel()
		w.cancel = nil
	}
	w.release()
	w.srv.Close()
	for i := 0; i < 1000; i++ {
		synctest.Wait()
		w.mu.Lock()
		busy := w.inflight + w.handling
		w.mu.Unlock()
		if busy == 0 && (w.c == nil || closed(w.done)) {
			return
		}
		time.Sleep(time.Minute)
	}
}

// release lets every held reconcile go on.
func (w *world) release() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !closed(w.released) {
		close(w.released)
	}
}

// nothingAfter checks that, once Run returned, the controller is told of
// nothing and reconciles nothing while the server changes and time passes.
func (w *world) nothingAfter() {
	w.mu.Lock()
	w.led.Stop()
	w.mu.Unlock()
	_ = w.srv.Create("default/after-stop")
	_ = w.srv.Update("default/o001")
	w.srv.Bookmark()
	time.Sleep(10 * time.Minute)
	synctest.Wait()
	w.check()
}

func closed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
