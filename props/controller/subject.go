// Package controller is the conformance suite for controllers, end to end:
// an informer whose handler enqueues keys, a rate-limited work queue,
// workers and a reconciler that reads the informer's cache, run against
// the model API server (props/modelserver) and its fault schedules in
// synctest bubbles. Fixed scenarios and random runs hold it to what a
// reconciler relies on: one reconcile of a key at a time, at most Workers
// at once, reads of a cache that caught up with the key's notifications,
// retries at the rate limiter's delay, no lost wake-up, no reconcile
// before the first sync or after cancel, and every key's last reconcile
// reading the server's state once faults stop (docs/controller.md).
package controller

import (
	"context"
	"time"

	"github.com/kverify/kverify/props/modelserver"
	"github.com/kverify/kverify/spec/apiserver"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// Result is what a reconcile asks for besides its error: client-go's
// sample controller has none, controller-runtime's reconcile.Result
// RequeueAfter.
type Result struct {
	// RequeueAfter, if positive: reconcile the key again after this long
	// (the queue's AddAfter), its failures forgotten.
	RequeueAfter time.Duration
}

// Reader reads the controller's cache: the informer's store.
type Reader interface {
	// Get returns the cache's object at key ("namespace/name"), a
	// *metav1.PartialObjectMetadata as the server serves it.
	Get(key string) (obj any, exists bool, err error)
}

// Setup is what a check asks a subject to build: a controller whose
// informer lists and watches Server, whose handler enqueues the key of
// every object it is notified of, and whose workers call Reconcile.
type Setup struct {
	// Server is the ListerWatcher of the controller's informer (client-go's
	// ListerWatcher and ListerWatcherWithContext method sets).
	Server *modelserver.Server
	// Source, when set, replaces Server as what the informer lists and
	// watches, without watch-list (benchmarks set it: a fixed list and a
	// buffered watch, with no model server's bookkeeping). Checks never
	// set it.
	Source ListerWatcher
	// WatchList: the informer streams its syncs. Never set for a subject
	// that declares NoWatchList.
	WatchList bool
	// Workers is the number of workers (at least 1).
	Workers int
	// BaseDelay and MaxDelay configure the controller's only rate limiter:
	// client-go's per-item exponential failure limiter
	// (NewTypedItemExponentialFailureRateLimiter(BaseDelay, MaxDelay)).
	BaseDelay, MaxDelay time.Duration
	// Reconcile is the reconciler. The subject calls it with the key of a
	// notified object ("namespace/name") and a reader of its cache; an
	// error (or a panic) retries the key at the limiter's delay, success
	// forgets its failures, and a Result.RequeueAfter re-adds it after that
	// long.
	Reconcile func(ctx context.Context, key string, cache Reader) (Result, error)
	// Notified must be called by the controller's event handler, in the
	// handler's goroutine, with every object it takes a key from (a
	// deleted object's tombstone as given, deleted true for OnDelete),
	// just before it enqueues the key. The check takes time there (handler
	// timing) and records what the handler was told.
	Notified func(obj any, deleted bool)
}

// ListerWatcher is client-go's ListerWatcher and ListerWatcherWithContext
// method sets, which informers of every subject take.
type ListerWatcher interface {
	List(opts metav1.ListOptions) (runtime.Object, error)
	Watch(opts metav1.ListOptions) (watch.Interface, error)
	ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error)
	WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
}

// Controller is a controller under test.
type Controller interface {
	// Run runs the controller, its informer included, until ctx ends. It
	// starts reconciling once the informer has synced, starts no reconcile
	// once ctx has ended, and returns once every reconcile in flight has
	// returned and everything it started has stopped.
	Run(ctx context.Context)
}

// Subject is a controller implementation under test. New builds an
// unstarted controller inside the caller's synctest bubble, with the
// bubble's clock.
type Subject struct {
	New func(s Setup) (Controller, error)
	// BadInput, if set, builds a controller from a bad setup and must
	// return an error for each, without panicking: 0 a nil Reconcile, 1 a
	// negative number of workers.
	BadInput func(i int) error
	// ContainPanics, if set, runs body with the subject set up so that a
	// reconcile's panic cannot crash the process (client-go:
	// utilruntime.ReallyCrash false), and undoes that. nil: the subject
	// contains them on its own.
	ContainPanics func(body func() error) error
	// NoWatchList: the subject's informer never streams its syncs; Setup
	// never sets WatchList.
	NoWatchList bool
}

func (s Subject) contain(body func() error) error {
	if s.ContainPanics == nil {
		return body()
	}
	return s.ContainPanics(body)
}

// ListerWatcher is what a client-go informer of the subject lists and
// watches: Source when set; else Server, hidden behind
// modelserver.NoWatchList when the check asks for a listing informer
// (client-go decides watch-list by a feature gate, not per informer).
func (s Setup) ListerWatcher() ListerWatcher {
	switch {
	case s.Source != nil:
		return s.Source
	case !s.WatchList:
		return modelserver.NoWatchList{Server: s.Server}
	}
	return s.Server
}

// BadInputOf is a Subject.BadInput for a constructor: it builds a
// controller from setup i (0: a nil Reconcile, 1: -1 workers), otherwise
// valid, over a server it closes afterwards, and returns New's error.
func BadInputOf(newController func(Setup) (Controller, error)) func(i int) error {
	return func(i int) error {
		srv := modelserver.NewServer(apiserver.Config{}, nil)
		defer srv.Close()
		ok := func(context.Context, string, Reader) (Result, error) { return Result{}, nil }
		setup := Setup{Server: srv, Workers: 1, BaseDelay: time.Millisecond, MaxDelay: time.Second, Reconcile: ok}
		switch i {
		case 0:
			setup.Reconcile = nil
		case 1:
			setup.Workers = -1
		}
		_, err := newController(setup)
		return err
	}
}
