// Package retrywatcher is a watch that resumes across failures, as
// client-go's tools/watch.RetryWatcher does, and as spec/retrywatcher
// says: each watch it opens starts from the version of the last event or
// bookmark it took in; the consumer sees every Added, Modified and Deleted
// event once, in order, and no bookmark; what it cannot recover from (a
// 410 Gone in the stream, a watch refused as Forbidden or Unauthorized,
// an event without a version or of an unknown type) ends it after one
// Error event; what it can (a closed stream, any other failure) it
// recovers from silently, no sooner than the server's RetryAfterSeconds
// after the failure and than RestartPeriod after the last watch began.
//
// It is not resilient to the server no longer having the version it
// resumes from: a 410 in the stream ends it (relist then, or use an
// informer).
package retrywatcher

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/clock"
)

// DefaultRestartPeriod is the least time between the starts of two
// watches when Config.RestartPeriod is zero: client-go's.
const DefaultRestartPeriod = time.Second

// Watcher opens a watch: a ListWatch's Watch, a typed client's Watch.
type Watcher interface {
	Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
}

// WatchFunc is a function as a Watcher.
type WatchFunc func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)

// Watch calls f.
func (f WatchFunc) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	return f(ctx, opts)
}

// Config is what New needs. InitialRV and Watcher are required.
type Config struct {
	// InitialRV is the version the first watch starts from: a version the
	// caller has seen (a list's). "" and "0" are refused: a watch from
	// them starts with a synthetic state, not a resumable stream.
	InitialRV string
	Watcher   Watcher
	// RestartPeriod is the least time between the starts of two watches;
	// DefaultRestartPeriod when zero.
	RestartPeriod time.Duration
	// Clock times the restarts; the real clock when nil.
	Clock clock.Clock
}

// RetryWatcher is a watch that resumes across failures. Read its events
// from ResultChan until it is closed; Stop ends it; Done is closed once
// its goroutine has ended.
type RetryWatcher struct {
	cfg      Config
	rv       string // the version the next watch starts from (the goroutine's)
	results  chan watch.Event
	done     chan struct{}
	cancel   context.CancelFunc
	stopOnce sync.Once
}

// ErrInitialRV is New's error for an initial version a watch cannot
// resume from.
var ErrInitialRV = errors.New(`retrywatcher: the initial resource version must be neither "" nor "0"`)

// New starts a RetryWatcher, which runs until ctx is done, Stop is called
// or a failure it cannot recover from ends it.
func New(ctx context.Context, cfg Config) (*RetryWatcher, error) {
	switch {
	case cfg.InitialRV == "" || cfg.InitialRV == "0":
		return nil, fmt.Errorf("%w: got %q", ErrInitialRV, cfg.InitialRV)
	case cfg.Watcher == nil:
		return nil, errors.New("retrywatcher: Config.Watcher is nil")
	case cfg.RestartPeriod < 0:
		return nil, fmt.Errorf("retrywatcher: Config.RestartPeriod is negative (%v)", cfg.RestartPeriod)
	}
	if cfg.RestartPeriod == 0 {
		cfg.RestartPeriod = DefaultRestartPeriod
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	ctx, cancel := context.WithCancel(ctx)
	rw := &RetryWatcher{cfg: cfg, rv: cfg.InitialRV, results: make(chan watch.Event), done: make(chan struct{}), cancel: cancel}
	go rw.run(ctx)
	return rw, nil
}

// ResultChan is the events: closed when the watcher ends.
func (rw *RetryWatcher) ResultChan() <-chan watch.Event { return rw.results }

// Stop ends the watcher: its goroutine stops its watch and closes
// ResultChan and then Done. Calling it again does nothing.
func (rw *RetryWatcher) Stop() { rw.stopOnce.Do(rw.cancel) }

// Done is closed once the watcher's goroutine has ended.
func (rw *RetryWatcher) Done() <-chan struct{} { return rw.done }

func (rw *RetryWatcher) run(ctx context.Context) {
	defer close(rw.done)
	defer close(rw.results)
	defer rw.cancel() // releases the context's resources
	for {
		started := rw.cfg.Clock.Now()
		end, retryAfter := rw.watchOnce(ctx)
		if end {
			return
		}
		// The next watch: retryAfter after this one ended, and the
		// restart period after it began, whichever is later.
		wait := max(retryAfter, rw.cfg.RestartPeriod-rw.cfg.Clock.Since(started))
		if wait > 0 {
			t := rw.cfg.Clock.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C():
			}
		} else if ctx.Err() != nil {
			return
		}
	}
}

// send passes ev on, unless the watcher is stopped first.
func (rw *RetryWatcher) send(ctx context.Context, ev watch.Event) bool {
	select {
	case rw.results <- ev:
		return true
	case <-ctx.Done():
		return false
	}
}

// fail ends the watcher with an Error event carrying status.
func (rw *RetryWatcher) fail(ctx context.Context, status metav1.Status) (bool, time.Duration) {
	rw.send(ctx, watch.Event{Type: watch.Error, Object: &status})
	return true, 0
}

// watchOnce runs one watch from rw.rv to its end. It reports whether the
// watcher ends, and otherwise how long the server asked it to wait.
func (rw *RetryWatcher) watchOnce(ctx context.Context) (end bool, retryAfter time.Duration) {
	if ctx.Err() != nil {
		return true, 0
	}
	w, err := rw.cfg.Watcher.Watch(ctx, metav1.ListOptions{ResourceVersion: rw.rv, AllowWatchBookmarks: true})
	if err != nil {
		if apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err) {
			var st apierrors.APIStatus
			if errors.As(err, &st) {
				return rw.fail(ctx, st.Status())
			}
		}
		// Anything else (a dropped connection, a timeout, a 410 from the
		// call itself, a 5xx) is worth another try from the same version.
		return ctx.Err() != nil, 0
	}
	if w == nil {
		return ctx.Err() != nil, 0
	}
	defer w.Stop()
	ch := w.ResultChan()
	for {
		select {
		case <-ctx.Done():
			return true, 0
		case ev, ok := <-ch:
			if !ok {
				return false, 0
			}
			switch ev.Type {
			case watch.Added, watch.Modified, watch.Deleted, watch.Bookmark:
				v, ok := ev.Object.(interface{ GetResourceVersion() string })
				if !ok || v.GetResourceVersion() == "" {
					return rw.fail(ctx, apierrors.NewInternalError(fmt.Errorf("retrywatcher: a %s event whose object (%T) has no resource version", ev.Type, ev.Object)).ErrStatus)
				}
				if ev.Type != watch.Bookmark && !rw.send(ctx, ev) {
					return true, 0
				}
				rw.rv = v.GetResourceVersion()
			case watch.Error:
				var se *apierrors.StatusError
				if !errors.As(apierrors.FromObject(ev.Object), &se) {
					return false, 0 // not a Status: try again
				}
				if se.ErrStatus.Code == http.StatusGone {
					rw.send(ctx, ev)
					return true, 0
				}
				if d := se.ErrStatus.Details; d != nil && d.RetryAfterSeconds > 0 {
					return false, time.Duration(d.RetryAfterSeconds) * time.Second
				}
				return false, 0
			default:
				return rw.fail(ctx, apierrors.NewInternalError(fmt.Errorf("retrywatcher: an event of unknown type %q", ev.Type)).ErrStatus)
			}
		}
	}
}
