// Package controller is the loop every Kubernetes controller writes, built
// from this module's parts: an informer whose handler enqueues the keys of
// the objects it is told about, a rate-limiting work queue, N workers that
// reconcile one key at a time, and the informer's cache for the reconciler
// to read. It is client-go's sample-controller (controller.go, v0.37.2
// era) and controller-runtime's internal controller, with their
// differences settled:
//
//   - Success Forgets the key's failures; an error (or a panic, recovered
//     and reported as an error) re-adds it with AddRateLimited; a
//     Result.RequeueAfter re-adds it with AddAfter, failures forgotten.
//   - Workers start only once the informer's first list has reached the
//     controller's handler (client-go's WaitForCacheSync), so a reconcile
//     never reads a cache that has not caught up with the first list.
//   - Stop: cancelling Run's context starts no further reconcile; Run
//     returns once every reconcile in flight has returned and every
//     goroutine the controller and its informer started has exited. Keys
//     still queued are dropped: the next Run lists them again. client-go's
//     sample controller returns at once and lets its workers drain the
//     queue with a cancelled context; controller-runtime waits for its
//     workers, as we do.
//
// A key's reconciles never overlap (the work queue's guarantee: a key
// handed out is not handed out again before Done), and a change that lands
// while its key is being reconciled reconciles it again afterwards.
package controller

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kverify/kverify/impl/delta"
	"github.com/kverify/kverify/impl/informer"
	"github.com/kverify/kverify/impl/ratelimit"
	"github.com/kverify/kverify/impl/workqueue"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/utils/clock"
)

// Result is what a reconcile asks for besides its error.
type Result struct {
	// RequeueAfter, if positive, reconciles the key again after this long
	// even if nothing changes (a poll). An error takes precedence: the key
	// is then retried at the rate limiter's delay.
	RequeueAfter time.Duration
}

// Reconciler brings the world in line with the cache's state of one key
// ("namespace/name", or "name" for a cluster-scoped object). It is called
// for one key at a time per key, from any worker; it reads the cache
// through the Controller's GetByKey.
type Reconciler interface {
	Reconcile(ctx context.Context, key string) (Result, error)
}

// ReconcilerFunc adapts a function to Reconciler.
type ReconcilerFunc func(ctx context.Context, key string) (Result, error)

// Reconcile calls f.
func (f ReconcilerFunc) Reconcile(ctx context.Context, key string) (Result, error) {
	return f(ctx, key)
}

// Options configure a Controller. The zero value is valid.
type Options struct {
	// Name names the queue's metrics and the controller's reports.
	Name string
	// Workers is the number of keys reconciled at once (0: 1).
	Workers int
	// Limiter decides how long a failed key waits before it is retried
	// (nil: ratelimit.DefaultController, client-go's default for
	// controllers).
	Limiter ratelimit.Limiter[string]
	// Clock times the queue's delays and the wait for the cache's sync
	// (nil: the real clock). The informer has its own (InformerOptions).
	Clock clock.WithTicker
	// Keys maps an object the informer notifies about to the keys to
	// reconcile (nil: the object's own key; a deleted object's tombstone
	// is unwrapped first). For an update, the keys of the old and the new
	// object are both enqueued. An error is reported and enqueues nothing.
	Keys func(obj any) ([]string, error)
	// Filter, if set, is asked about every notification before its keys
	// are enqueued; false drops it (controller-runtime's predicates, the
	// sample controller's same-version check on updates). It runs in the
	// informer's handler goroutine, so a slow Filter delays this
	// controller's later notifications, and no one else's.
	Filter func(e Event) bool
	// OnError receives reconcile errors, recovered panics and Keys errors
	// (nil: utilruntime.HandleError).
	OnError func(key string, err error)
}

// EventKind is the kind of a notification.
type EventKind uint8

// The notifications an informer gives a handler.
const (
	Added EventKind = iota
	Updated
	Deleted
)

// Event is one notification, as Options.Filter sees it.
type Event struct {
	Kind EventKind
	// Object is the object added, the new one of an update, or the one
	// deleted: for a deletion the informer missed, a
	// delta.DeletedFinalStateUnknown tombstone.
	Object any
	// Old is the old object of an update.
	Old any
	// InInitialList: an add of the informer's initial list.
	InInitialList bool
}

// ErrAlreadyRan is returned by a second Run: a controller runs once.
var ErrAlreadyRan = errors.New("controller: Run called twice")

// PanicError is the error a reconcile that panicked is reported with; the
// key is retried as after any error.
type PanicError struct {
	Key   string
	Value any
	Stack []byte
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("controller: reconcile of %q panicked: %v", e.Key, e.Value)
}

// syncPoll is how often Run checks whether the cache has synced, as
// client-go's WaitForCacheSync (shared_informer.go:327, 100ms).
const syncPoll = 100 * time.Millisecond

// Controller reconciles the keys of the objects its informer is told about.
// Make one with New.
type Controller struct {
	inf     *informer.Informer
	reg     *informer.Registration
	rec     Reconciler
	q       *workqueue.RateLimiting[string]
	clock   clock.WithTicker
	workers int
	keys    func(obj any) ([]string, error)
	filter  func(e Event) bool
	onError func(key string, err error)
	ran     atomic.Bool
}

// New makes a controller that owns inf: it adds its handler now and runs
// inf within Run. inf must not be run by anyone else.
func New(inf *informer.Informer, r Reconciler, opts Options) (*Controller, error) {
	switch {
	case inf == nil:
		return nil, errors.New("controller: New: the informer is nil")
	case r == nil:
		return nil, errors.New("controller: New: the reconciler is nil")
	case opts.Workers < 0:
		return nil, fmt.Errorf("controller: New: %d workers", opts.Workers)
	}
	c := &Controller{inf: inf, rec: r, clock: opts.Clock, workers: opts.Workers, keys: opts.Keys, filter: opts.Filter, onError: opts.OnError}
	if c.clock == nil {
		c.clock = clock.RealClock{}
	}
	if c.workers == 0 {
		c.workers = 1
	}
	if c.keys == nil {
		c.keys = ownKey
	}
	if c.onError == nil {
		c.onError = func(key string, err error) {
			utilruntime.HandleError(fmt.Errorf("controller %q: key %q: %w", opts.Name, key, err))
		}
	}
	lim := opts.Limiter
	if lim == nil {
		lim = ratelimit.DefaultController[string]()
	}
	q, err := workqueue.NewRateLimiting(workqueue.RateLimitingConfig[string]{
		DelayingConfig: workqueue.DelayingConfig[string]{Config: workqueue.Config[string]{Name: opts.Name, Clock: c.clock}},
		Limiter:        lim})
	if err != nil {
		return nil, fmt.Errorf("controller: New: %w", err)
	}
	c.q = q
	reg, err := inf.AddEventHandler(handler{c})
	if err != nil {
		q.ShutDown()
		return nil, fmt.Errorf("controller: New: adding the handler: %w", err)
	}
	c.reg = reg
	return c, nil
}

// ownKey is the object's key, a tombstone's for a deleted one.
func ownKey(obj any) ([]string, error) {
	k, err := delta.DeletionHandlingKey(obj)
	if err != nil {
		return nil, err
	}
	return []string{k}, nil
}

// GetByKey reads the cache: the informer's state of key.
func (c *Controller) GetByKey(key string) (obj any, exists bool, err error) {
	return c.inf.GetByKey(key)
}

// HasSynced reports whether the cache has had the first list and the
// controller's handler has been given all of it.
func (c *Controller) HasSynced() bool { return c.reg.HasSynced() }

// Run runs the informer and, once it has synced, the workers, until ctx
// ends. It returns nil once every reconcile in flight has returned and
// every goroutine it started has exited; ctx's error if ctx ended before
// the cache synced (no reconcile ran); ErrAlreadyRan if called before.
func (c *Controller) Run(ctx context.Context) error {
	if !c.ran.CompareAndSwap(false, true) {
		return ErrAlreadyRan
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	defer wg.Wait()
	defer c.q.ShutDown() // before wg.Wait: it wakes workers blocked in Get
	wg.Go(func() { c.inf.Run(ctx) })
	if !c.waitSynced(ctx) {
		return ctx.Err()
	}
	for range c.workers {
		wg.Go(func() { c.work(ctx) })
	}
	<-ctx.Done()
	return nil
}

// waitSynced polls HasSynced until it holds or ctx ends.
func (c *Controller) waitSynced(ctx context.Context) bool {
	if c.reg.HasSynced() {
		return true
	}
	t := c.clock.NewTicker(syncPoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-t.C():
			if c.reg.HasSynced() {
				return true
			}
		}
	}
}

// work reconciles keys until the queue shuts down or ctx ends.
func (c *Controller) work(ctx context.Context) {
	for {
		key, shutdown := c.q.Get()
		if shutdown {
			return
		}
		if ctx.Err() != nil {
			// Stopping: a key handed out now is dropped, not reconciled
			// with a cancelled context.
			c.q.Done(key)
			return
		}
		c.process(ctx, key)
	}
}

// process reconciles key once and decides when it is reconciled again.
func (c *Controller) process(ctx context.Context, key string) {
	defer c.q.Done(key)
	res, err := c.reconcile(ctx, key)
	switch {
	case err != nil:
		c.onError(key, err)
		c.q.AddRateLimited(key)
	case res.RequeueAfter > 0:
		c.q.Forget(key)
		c.q.AddAfter(key, res.RequeueAfter)
	default:
		c.q.Forget(key)
	}
}

// reconcile calls the reconciler, turning a panic into a PanicError.
func (c *Controller) reconcile(ctx context.Context, key string) (res Result, err error) {
	defer func() {
		if v := recover(); v != nil {
			res, err = Result{}, &PanicError{Key: key, Value: v, Stack: debug.Stack()}
		}
	}()
	return c.rec.Reconcile(ctx, key)
}

// enqueue adds the keys the objects map to, each once: an update whose
// old and new object map to one key adds it once, so that a worker taking
// it between two adds does not reconcile it twice.
func (c *Controller) enqueue(objs ...any) {
	var all []string
	for _, obj := range objs {
		keys, err := c.keys(obj)
		if err != nil {
			c.onError("", fmt.Errorf("controller: mapping a %T to keys: %w", obj, err))
			continue
		}
		for _, k := range keys {
			if !slices.Contains(all, k) {
				all = append(all, k)
			}
		}
	}
	for _, k := range all {
		c.q.Add(k)
	}
}

// handler is the controller's informer handler: every notification the
// filter lets through enqueues the keys of its object.
type handler struct{ c *Controller }

func (h handler) OnAdd(obj any, initial bool) {
	h.c.notify(Event{Kind: Added, Object: obj, InInitialList: initial}, obj)
}
func (h handler) OnUpdate(oldObj, newObj any) {
	h.c.notify(Event{Kind: Updated, Object: newObj, Old: oldObj}, oldObj, newObj)
}
func (h handler) OnDelete(obj any) { h.c.notify(Event{Kind: Deleted, Object: obj}, obj) }

// notify enqueues the keys of objs unless the filter drops e.
func (c *Controller) notify(e Event, objs ...any) {
	if c.filter != nil && !c.filter(e) {
		return
	}
	c.enqueue(objs...)
}
