package realapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	"k8s.io/apimachinery/pkg/apis/meta/internalversion/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/features"
	"k8s.io/apiserver/pkg/storage"
	storeerr "k8s.io/apiserver/pkg/storage/errors"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
)

// ListerWatcher serves a Stack to a reflector: client-go's ListerWatcher
// and ListerWatcherWithContext. It redoes what kube-apiserver does between
// the HTTP query and storage (k8s.io/apiserver@v0.37.2
// pkg/endpoints/handlers/get.go:202-312, pkg/registry/generic/registry/
// store.go:450-493,1489-1552): it converts, defaults and validates the
// options, maps them onto storage.ListOptions, bounds a watch by its
// timeoutSeconds, deep-copies listed items (they alias the watch cache),
// and unwraps the cacher's cachingObject from watch events (client-go's
// reflector drops events of an unexpected type).
//
// It records every request and every resource version it served, so that
// a test can check the request shapes and that a reflector publishes only
// versions it was given. Between SetStack(nil) and the next SetStack it
// answers 503, as an apiserver that is restarting.
//
// It must not implement IsWatchListSemanticsUnSupported: client-go turns
// watch-list off for a ListerWatcher that does.
type ListerWatcher struct {
	Namespace string // "" for all namespaces

	mu       sync.Mutex
	stack    *Stack
	requests []string
	served   map[string]bool
	open     map[*watcher]bool
	expired  int           // 410 answers
	held     chan struct{} // non-nil while Hold is in force; closed to release
	wg       sync.WaitGroup
}

// NewListerWatcher serves s.
func NewListerWatcher(s *Stack) *ListerWatcher {
	return &ListerWatcher{stack: s, served: map[string]bool{}, open: map[*watcher]bool{}}
}

// Hold stops delivering events on the open watches (they stay open), as an
// apiserver cut off from its clients, until SetStack.
func (lw *ListerWatcher) Hold() {
	lw.mu.Lock()
	if lw.held == nil {
		lw.held = make(chan struct{})
	}
	lw.mu.Unlock()
}

func (lw *ListerWatcher) hold() chan struct{} {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return lw.held
}

// StopAll stops every open watch (the server ends them).
func (lw *ListerWatcher) StopAll() {
	lw.mu.Lock()
	open := make([]*watcher, 0, len(lw.open))
	for w := range lw.open {
		open = append(open, w)
	}
	lw.mu.Unlock()
	for _, w := range open {
		w.Stop()
	}
}

// SetStack replaces the stack it serves (nil: answer 503), closes every
// open watch, as an apiserver restart does, and ends a Hold (the events
// held are not delivered: their watches are closed).
func (lw *ListerWatcher) SetStack(s *Stack) {
	lw.mu.Lock()
	lw.stack = s
	if lw.held != nil {
		defer close(lw.held)
		lw.held = nil
	}
	lw.mu.Unlock()
	lw.StopAll()
}

// Requests returns the requests served so far, one line each.
func (lw *ListerWatcher) Requests() []string {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return append([]string(nil), lw.requests...)
}

// Count returns how many requests started with prefix ("LIST", "WATCH",
// "WATCH-LIST").
func (lw *ListerWatcher) Count(prefix string) int {
	n := 0
	for _, r := range lw.Requests() {
		if strings.HasPrefix(r, prefix+" ") {
			n++
		}
	}
	return n
}

// Served reports whether rv was served: as a list's version, an event's
// object version or a bookmark's version.
func (lw *ListerWatcher) Served(rv string) bool {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return lw.served[rv]
}

// Expired is the number of 410 answers (as errors or error events).
func (lw *ListerWatcher) Expired() int {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return lw.expired
}

// Open is the number of watches handed out and not stopped.
func (lw *ListerWatcher) Open() int {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return len(lw.open)
}

// Wait waits until every watch's goroutine has exited.
func (lw *ListerWatcher) Wait() { lw.wg.Wait() }

// record logs a request and returns its index and the stack to serve it.
func (lw *ListerWatcher) record(line string) (int, *Stack) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	lw.requests = append(lw.requests, line)
	return len(lw.requests) - 1, lw.stack
}

func (lw *ListerWatcher) serve(rv string) {
	lw.mu.Lock()
	lw.served[rv] = true
	lw.mu.Unlock()
}

// noteErr records err as the answer to request i (an error event on a
// watch: i < 0, appended as its own line).
func (lw *ListerWatcher) noteErr(i int, err error) error {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
		lw.expired++
	}
	line := "-> " + err.Error()
	if st, ok := err.(apierrors.APIStatus); ok {
		line = fmt.Sprintf("-> %d %s", st.Status().Code, st.Status().Reason)
	}
	if i < 0 {
		lw.requests = append(lw.requests, "ERROR-EVENT "+line)
	} else {
		lw.requests[i] += " " + line
	}
	return err
}

func watchListOn() bool { return utilfeature.DefaultFeatureGate.Enabled(features.WatchList) }

// internal converts, defaults and validates opts as the apiserver does.
// cache.ListWatch does not set Watch on a watch; the HTTP client does.
func internal(in metav1.ListOptions, isWatch bool) (*metainternalversion.ListOptions, error) {
	out := &metainternalversion.ListOptions{}
	if err := metainternalversion.Convert_v1_ListOptions_To_internalversion_ListOptions(&in, out, nil); err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	if isWatch {
		out.Watch = true
	}
	metainternalversion.SetListOptionsDefaults(out, watchListOn())
	if errs := validation.ValidateListOptions(out, watchListOn()); len(errs) > 0 {
		return nil, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "ListOptions"}, "", errs)
	}
	return out, nil
}

func (lw *ListerWatcher) key() string {
	if lw.Namespace == "" {
		return Prefix
	}
	return Prefix + lw.Namespace + "/"
}

func (lw *ListerWatcher) ctx(ctx context.Context) context.Context {
	return request.WithNamespace(ctx, lw.Namespace)
}

// List is ListWithContext without a context.
func (lw *ListerWatcher) List(opts metav1.ListOptions) (runtime.Object, error) {
	return lw.ListWithContext(context.Background(), opts)
}

// Watch is WatchWithContext without a context.
func (lw *ListerWatcher) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return lw.WatchWithContext(context.Background(), opts)
}

// ListWithContext serves a LIST.
func (lw *ListerWatcher) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	i, s := lw.record(fmt.Sprintf("LIST rv=%q match=%q limit=%d continue=%t", opts.ResourceVersion, opts.ResourceVersionMatch, opts.Limit, opts.Continue != ""))
	if s == nil {
		return nil, lw.noteErr(i, apierrors.NewServiceUnavailable("the apiserver is restarting"))
	}
	o, err := internal(opts, false)
	if err != nil {
		return nil, lw.noteErr(i, err)
	}
	list := newCMList()
	err = s.deleg.GetList(lw.ctx(ctx), lw.key(), storage.ListOptions{
		ResourceVersion:      o.ResourceVersion,
		ResourceVersionMatch: o.ResourceVersionMatch,
		Predicate: storage.SelectionPredicate{Label: o.LabelSelector, Field: o.FieldSelector,
			GetAttrs: storage.DefaultNamespaceScopedAttr, Limit: o.Limit, Continue: o.Continue},
		Recursive: true,
	}, list)
	if err != nil {
		return nil, lw.noteErr(i, storeerr.InterpretListError(err, gr))
	}
	list = list.DeepCopyObject() // the items alias the watch cache's objects
	if a, err := metaList(list); err == nil {
		lw.serve(a)
	}
	return list, nil
}

func metaList(o runtime.Object) (string, error) {
	l, ok := o.(metav1.ListInterface)
	if !ok {
		return "", fmt.Errorf("%T is not a list", o)
	}
	return l.GetResourceVersion(), nil
}

// WatchWithContext serves a WATCH; with sendInitialEvents it is a
// watch-list stream.
func (lw *ListerWatcher) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	kind := "WATCH"
	if opts.SendInitialEvents != nil && *opts.SendInitialEvents {
		kind = "WATCH-LIST"
	}
	i, s := lw.record(fmt.Sprintf("%s rv=%q bookmarks=%t timeout=%v", kind, opts.ResourceVersion, opts.AllowWatchBookmarks, opts.TimeoutSeconds != nil))
	if s == nil {
		return nil, lw.noteErr(i, apierrors.NewServiceUnavailable("the apiserver is restarting"))
	}
	o, err := internal(opts, true)
	if err != nil {
		return nil, lw.noteErr(i, err)
	}
	wctx, cancel := context.WithCancel(lw.ctx(context.Background()))
	if o.TimeoutSeconds != nil {
		wctx, cancel = context.WithTimeout(lw.ctx(context.Background()), time.Duration(*o.TimeoutSeconds)*time.Second)
	}
	inner, err := s.deleg.Watch(wctx, lw.key(), storage.ListOptions{
		ResourceVersion: o.ResourceVersion,
		Predicate: storage.SelectionPredicate{Label: o.LabelSelector, Field: o.FieldSelector,
			GetAttrs: storage.DefaultNamespaceScopedAttr, AllowWatchBookmarks: o.AllowWatchBookmarks},
		Recursive:         true,
		SendInitialEvents: o.SendInitialEvents,
	})
	if err != nil {
		cancel()
		// As the registry and the handler answer it: Store.WatchPredicate
		// returns the storage error unconverted (InterpretWatchError is
		// called nowhere in k8s.io/apiserver), and ErrorToAPIStatus makes a
		// non-API error a 500 (an RV that is not a number, kubernetes#139485).
		return nil, lw.noteErr(i, asHandler(err))
	}
	w := &watcher{lw: lw, inner: inner, cancel: cancel, out: make(chan watch.Event), stop: make(chan struct{})}
	lw.mu.Lock()
	lw.open[w] = true
	lw.mu.Unlock()
	lw.wg.Add(1)
	go w.forward()
	return w, nil
}

// watcher forwards the storage watch's events with cachingObjects
// unwrapped, recording the versions it serves.
type watcher struct {
	lw       *ListerWatcher
	inner    watch.Interface
	cancel   context.CancelFunc
	out      chan watch.Event
	stop     chan struct{}
	stopOnce sync.Once
}

func (w *watcher) ResultChan() <-chan watch.Event { return w.out }

// Stop ends the watch; it is safe to call more than once.
func (w *watcher) Stop() {
	w.stopOnce.Do(func() {
		close(w.stop)
		w.inner.Stop()
		w.cancel()
		w.lw.mu.Lock()
		delete(w.lw.open, w)
		w.lw.mu.Unlock()
	})
}

func (w *watcher) forward() {
	defer w.lw.wg.Done()
	defer close(w.out)
	in := w.inner.ResultChan()
	for {
		var ev watch.Event
		var ok bool
		select {
		case <-w.stop:
			return
		case ev, ok = <-in:
			if !ok {
				return
			}
		}
		if c, isCaching := ev.Object.(runtime.CacheableObject); isCaching {
			ev.Object = c.GetObject() // a deep copy
		}
		switch ev.Type {
		case watch.Error:
			if st, isStatus := ev.Object.(*metav1.Status); isStatus {
				_ = w.lw.noteErr(-1, &apierrors.StatusError{ErrStatus: *st})
			}
		default:
			if m, err := metaObject(ev.Object); err == nil {
				w.lw.serve(m)
			}
		}
		if h := w.lw.hold(); h != nil {
			select {
			case <-w.stop:
				return
			case <-h:
			}
		}
		select {
		case <-w.stop:
			return
		case w.out <- ev:
		}
	}
}

func metaObject(o runtime.Object) (string, error) {
	m, ok := o.(metav1.Object)
	if !ok {
		return "", fmt.Errorf("%T has no metadata", o)
	}
	return m.GetResourceVersion(), nil
}

// asHandler is err as the handler answers it (responsewriters.
// ErrorToAPIStatus, k8s.io/apiserver v0.37.2
// pkg/endpoints/handlers/responsewriters/status.go): an API error as it
// is, any other as a 500 with no reason and the error as the message (a
// storage conflict, a 409 there, does not reach a watch).
// (Importing responsewriters would pull the CEL stack into this module.)
func asHandler(err error) error {
	var s apierrors.APIStatus
	if errors.As(err, &s) {
		return err
	}
	return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: http.StatusInternalServerError, Message: err.Error()}}
}
