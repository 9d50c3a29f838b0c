package reflector

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kverify/kverify/impl/delta"
	"github.com/kverify/kverify/impl/store"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// ErrNoInitialEventsEnd is the error of a watch-list stream that closed,
// or ran past Options.InitialEventsTimeout, without its
// initial-events-end bookmark.
var ErrNoInitialEventsEnd = errors.New("the watch-list stream ended without its initial-events-end bookmark")

// watchList syncs the store from one stream: the initial ADDED events go
// to a temporary store, and at the initial-events-end bookmark the store
// gets one Replace of it at the bookmark's version. It returns the stream,
// still open, for the watch to go on with; on every error path the stream
// is stopped. Refused connections and 429 back off and retry; an expired
// or too-large version retries at once from "".
func (r *Reflector) watchList(ctx context.Context) (watch.Interface, error) {
	for {
		if ctx.Err() != nil {
			return nil, nil
		}
		temp := tempStore{store.New(delta.DeletionHandlingKey)}
		timeout := r.watchTimeout()
		sendInitial := true
		opts := metav1.ListOptions{
			ResourceVersion:      r.rewatchRV(),
			AllowWatchBookmarks:  true,
			SendInitialEvents:    &sendInitial,
			ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
			TimeoutSeconds:       &timeout,
		}
		start := r.clock.Now()
		w, err := r.lw.WatchWithContext(ctx, opts)
		if err != nil {
			if retry, err := r.retryWatchList(ctx, err); !retry {
				return nil, err
			}
			continue
		}
		bound := r.opts.InitialEventsTimeout
		if bound == 0 {
			bound = time.Duration(timeout) * time.Second
		}
		t := r.clock.NewTimer(bound)
		got, rv, err := r.handle(ctx, start, w, temp, false, true, t.C(), nil)
		t.Stop()
		if err == nil && !got {
			err = fmt.Errorf("%s: %w", r.name, ErrNoInitialEventsEnd)
		}
		if err != nil {
			w.Stop()
			if errors.Is(err, errStop) {
				return nil, nil
			}
			if retry, err := r.retryWatchList(ctx, err); !retry {
				return nil, err
			}
			continue
		}
		r.setUnavailable(false)
		if err := r.store.Replace(temp.List(), rv); err != nil {
			w.Stop()
			return nil, fmt.Errorf("%s: replacing the store's content with the initial events at %q: %w", r.name, rv, err)
		}
		r.setLastSync(rv)
		return w, nil
	}
}

// retryWatchList decides after a failed watch-list: back off and retry
// (refused, 429), retry at once from "" (expired, too large), or give up.
func (r *Reflector) retryWatchList(ctx context.Context, err error) (bool, error) {
	switch {
	case retriable(err):
		if !r.sleep(ctx, r.delay.Next()) {
			return false, nil
		}
		return true, nil
	case isExpired(err) || isTooLarge(err):
		// Retry from "" once: a stream from "" is a consistent read and
		// cannot be expired or ahead; a server that says so anyway gets a
		// list (from "" too).
		fromEmpty := r.rewatchRV() == ""
		r.setUnavailable(true)
		if !fromEmpty {
			return true, nil
		}
	}
	return false, err
}

// tempStore is the temporary store of a watch-list sync, keyed like
// client-go's (DeletionHandlingMetaNamespaceKeyFunc).
type tempStore struct{ *store.Store }

// Resync is never called on a temporary store.
func (tempStore) Resync() error { return nil }
