package reflector

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"sync"
	"time"

	"github.com/kverify/kverify/impl/delta"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/watch"
)

// VeryShortWatchError is the error of a watch that closed within
// VeryShort of its start without delivering an event: the server is
// likely failing, so the reflector relists.
type VeryShortWatchError struct{ Name string }

func (e *VeryShortWatchError) Error() string {
	return fmt.Sprintf("%s: very short watch: the watch closed within %v without an event", e.Name, VeryShort)
}

// MalformedEventError is the error of a watch that delivered an event the
// reflector cannot apply: the event is not stored and the watch ends.
type MalformedEventError struct {
	Name   string
	Type   watch.EventType
	Reason string
}

func (e *MalformedEventError) Error() string {
	return fmt.Sprintf("%s: malformed %s event: %s", e.Name, e.Type, e.Reason)
}

// errStop ends a watch because the context ended.
var errStop = errors.New("reflector: stop requested")

// watchWithResync watches (reusing w, the stream handed over by
// watch-list, if not nil) while a goroutine resyncs the store every
// ResyncPeriod; a Resync error ends the watch.
func (r *Reflector) watchWithResync(ctx context.Context, w watch.Interface) error {
	resyncErr := make(chan error, 1)
	rctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	if r.opts.ResyncPeriod > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.resync(rctx, resyncErr)
		}()
	}
	defer wg.Wait()
	defer cancel()
	return r.watch(ctx, w, resyncErr)
}

// resync calls the store's Resync every period until ctx ends or Resync
// fails; its one timer is stopped on every way out.
func (r *Reflector) resync(ctx context.Context, errc chan<- error) {
	t := r.clock.NewTimer(r.opts.ResyncPeriod)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
		if r.opts.ShouldResync == nil || r.opts.ShouldResync() {
			if err := r.store.Resync(); err != nil {
				errc <- fmt.Errorf("%s: resync: %w", r.name, err)
				return
			}
		}
		t.Reset(r.opts.ResyncPeriod)
	}
}

// watch watches from the last synced version until the watch cannot go
// on: a clean close re-watches at once, 429 and refused connections back
// off and re-watch, an internal error re-watches within
// MaxInternalErrorRetryDuration; anything else returns (nil for an expired
// version and for the end of ctx) and the caller relists.
func (r *Reflector) watch(ctx context.Context, w watch.Interface, resyncErr <-chan error) error {
	var firstInternal time.Time
	for {
		if ctx.Err() != nil {
			if w != nil {
				w.Stop()
			}
			return nil
		}
		start := r.clock.Now()
		propagate := true
		if w == nil {
			rv := r.LastSyncResourceVersion()
			timeout := r.watchTimeout()
			opts := metav1.ListOptions{ResourceVersion: rv, TimeoutSeconds: &timeout, AllowWatchBookmarks: true}
			// A watch from "" or "0" begins with synthetic ADDED events in
			// no particular version order: their versions are not earned
			// until the stream has delivered something else.
			propagate = rv != "" && rv != "0"
			var err error
			w, err = r.lw.WatchWithContext(ctx, opts)
			if err != nil {
				if retriable(err) {
					if !r.sleep(ctx, r.delay.Next()) {
						return nil
					}
					continue
				}
				return fmt.Errorf("%s: starting a watch at %q: %w", r.name, rv, err)
			}
		}
		_, _, err := r.handle(ctx, start, w, r.store, propagate, false, nil, resyncErr)
		w.Stop()
		w = nil
		if err == nil {
			firstInternal = time.Time{}
			continue
		}
		switch {
		case errors.Is(err, errStop):
			return nil
		case isExpired(err):
			return nil
		case apierrors.IsTooManyRequests(err):
			if !r.sleep(ctx, r.delay.Next()) {
				return nil
			}
			continue
		case apierrors.IsInternalError(err) && r.opts.MaxInternalErrorRetryDuration > 0:
			now := r.clock.Now()
			if firstInternal.IsZero() {
				firstInternal = now
			}
			if now.Sub(firstInternal) < r.opts.MaxInternalErrorRetryDuration {
				continue
			}
		}
		return err
	}
}

// handle applies w's events to store until the stream closes, an event
// ends it, ctx ends, a resync fails, or (untilBookmark) the
// initial-events-end bookmark arrives. Every applied event's version is
// published (to the reflector, or to rvOut in watch-list mode) when
// propagate is set or once the stream delivered anything but ADDED. It
// reports whether the end bookmark arrived and the last version recorded.
// It does not stop w.
func (r *Reflector) handle(ctx context.Context, start time.Time, w watch.Interface, store Store, propagate, untilBookmark bool, deadline <-chan time.Time, resyncErr <-chan error) (gotBookmark bool, rv string, err error) {
	count := 0
	besidesAdded := false
	for {
		var ev watch.Event
		var ok bool
		select {
		case <-ctx.Done():
			return false, rv, errStop
		case err := <-resyncErr:
			return false, rv, err
		case <-deadline:
			return false, rv, fmt.Errorf("%s: %w", r.name, ErrNoInitialEventsEnd)
		case ev, ok = <-w.ResultChan():
		}
		if !ok {
			break
		}
		if ev.Type == watch.Error {
			if ev.Object == nil {
				return false, rv, r.malformed(ev.Type, "an ERROR event without a status")
			}
			return false, rv, apierrors.FromObject(ev.Object)
		}
		evRV, err := r.validate(ev)
		if err != nil {
			return false, rv, err
		}
		switch ev.Type {
		case watch.Added:
			r.report(store.Add(ev.Object))
		case watch.Modified:
			besidesAdded = true
			r.report(store.Update(ev.Object))
		case watch.Deleted:
			besidesAdded = true
			r.report(store.Delete(ev.Object))
		case watch.Bookmark:
			besidesAdded = true
			m, _ := meta.Accessor(ev.Object)
			if m.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true" {
				gotBookmark = true
			}
			if !untilBookmark {
				switch b := store.(type) {
				case BookmarkStore:
					r.report(b.Bookmark(evRV))
				case bookmarkStore:
					b.Bookmark(evRV)
				}
			}
		}
		if propagate || besidesAdded {
			rv = evRV
			if !untilBookmark {
				r.setLastSync(evRV)
				if u, ok := store.(ResourceVersionUpdater); ok {
					u.UpdateResourceVersion(evRV)
				}
			}
		}
		count++
		if untilBookmark && gotBookmark {
			return true, rv, nil
		}
	}
	if count == 0 && r.clock.Since(start) < VeryShort {
		return false, rv, &VeryShortWatchError{Name: r.name}
	}
	return false, rv, nil
}

// validate checks an ADDED, MODIFIED, DELETED or BOOKMARK event and
// returns its object's resource version.
func (r *Reflector) validate(ev watch.Event) (string, error) {
	switch ev.Type {
	case watch.Added, watch.Modified, watch.Deleted, watch.Bookmark:
	default:
		return "", r.malformed(ev.Type, "unknown event type")
	}
	if delta.IsNil(ev.Object) {
		return "", r.malformed(ev.Type, "no object")
	}
	if r.expectedType != nil && reflect.TypeOf(ev.Object) != r.expectedType {
		return "", r.malformed(ev.Type, fmt.Sprintf("object of type %T, expected %v", ev.Object, r.expectedType))
	}
	m, err := meta.Accessor(ev.Object)
	if err != nil {
		return "", r.malformed(ev.Type, fmt.Sprintf("object of type %T has no metadata: %v", ev.Object, err))
	}
	rv := m.GetResourceVersion()
	if _, err := strconv.ParseUint(rv, 10, 64); err != nil {
		return "", r.malformed(ev.Type, fmt.Sprintf("resource version %q is not a number", rv))
	}
	return rv, nil
}

func (r *Reflector) malformed(t watch.EventType, reason string) error {
	return &MalformedEventError{Name: r.name, Type: t, Reason: reason}
}

// report hands a store error to OnWatchError: the event is applied as far
// as the store could, and the watch goes on (client-go's HandleError).
func (r *Reflector) report(err error) {
	if err != nil && r.opts.OnWatchError != nil {
		r.opts.OnWatchError(fmt.Errorf("%s: store: %w", r.name, err))
	}
}

func isExpired(err error) bool {
	return apierrors.IsResourceExpired(err) || apierrors.IsGone(err)
}

// isTooLarge is client-go's isTooLargeResourceVersionError, cause only:
// servers older than 1.18.6 that signalled it by message are out of scope.
func isTooLarge(err error) bool {
	return apierrors.HasStatusCause(err, metav1.CauseTypeResourceVersionTooLarge)
}

func retriable(err error) bool {
	return utilnet.IsConnectionRefused(err) || apierrors.IsTooManyRequests(err)
}
