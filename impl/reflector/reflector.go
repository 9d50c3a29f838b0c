package reflector

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"sync"
	"time"

	"github.com/kverify/kverify/impl/backoff"
	"github.com/kverify/kverify/impl/delta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/clock"
)

// Defaults, as client-go's (tools/cache/reflector.go:54-68, pager.go:31).
const (
	// MinWatchTimeout is the floor of a watch's timeout: Options that ask
	// for less (or nothing) get timeouts in [5m, 10m).
	MinWatchTimeout = 5 * time.Minute
	// DefaultPageSize is the limit of a paged list.
	DefaultPageSize = 500
	// VeryShort is how soon a watch may close without events before the
	// reflector treats it as an error and relists.
	VeryShort = time.Second
)

// ListerWatcher lists and watches one resource. Its method set is
// client-go's ListerWatcherWithContext, so a client-go ListWatch serves.
type ListerWatcher interface {
	ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error)
	WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
}

// watchListUnsupported is implemented by a ListerWatcher that knows its
// client cannot stream initial events (client-go's
// IsWatchListSemanticsUnSupported, tools/cache/listwatch.go:149).
type watchListUnsupported interface {
	IsWatchListSemanticsUnSupported() bool
}

// Store is what the reflector writes to: client-go's ReflectorStore.
type Store interface {
	Add(obj any) error
	Update(obj any) error
	Delete(obj any) error
	Replace(list []any, resourceVersion string) error
	Resync() error
}

// ResourceVersionUpdater is implemented by stores that want every resource
// version the reflector publishes during a watch.
type ResourceVersionUpdater interface {
	UpdateResourceVersion(resourceVersion string)
}

// BookmarkStore is implemented by stores that take bookmarks (RealFIFO).
type BookmarkStore interface {
	Bookmark(resourceVersion string) error
}

// bookmarkStore is the error-less form (impl/store).
type bookmarkStore interface {
	Bookmark(resourceVersion string)
}

// WatchListMode says whether the reflector streams its syncs.
type WatchListMode uint8

// The watch-list modes.
const (
	// WatchListAuto streams unless the ListerWatcher says its client
	// cannot (client-go's default: the WatchListClient gate is on).
	WatchListAuto WatchListMode = iota
	// WatchListOff always lists.
	WatchListOff
)

// PagingMode says whether the reflector lists in pages.
type PagingMode uint8

// The paging modes.
const (
	// PagingAuto pages lists by client-go's rules (see
	// Options.WatchListPageSize): a limit of 500 for a list from "0" or
	// "" and for every list once a list from "0" came in pages, none for
	// a list from an exact version, and continue tokens followed.
	PagingAuto PagingMode = iota
	// PagingOff lists in one request with no limit, as a client without
	// paging does; WatchListPageSize must then be 0. A server that
	// answers such a list with a continue token fails the list.
	PagingOff
)

// Options configure a Reflector. The zero value is client-go's defaults.
type Options struct {
	// Name appears in errors.
	Name string
	// ExpectedType, if set, is the Go type of the objects: an event
	// carrying another type is malformed.
	ExpectedType runtime.Object
	// ResyncPeriod, if positive, calls the store's Resync every period
	// while a watch runs, when ShouldResync (nil: always) agrees.
	ResyncPeriod time.Duration
	ShouldResync func() bool
	// MinWatchTimeout is honoured only above MinWatchTimeout; watch
	// timeouts are then drawn from [min, 2·min).
	MinWatchTimeout time.Duration
	// Clock is the time source (nil: the real clock).
	Clock clock.WithTicker
	// Backoff is the delay between attempts (nil: backoff.Default()), and
	// BackoffReset the quiet time after which it starts over (0: 2m).
	Backoff      *backoff.Backoff
	BackoffReset time.Duration
	// WatchListPageSize, if positive, is the limit of every list.
	WatchListPageSize int64
	// Paging chooses between paged lists and lists in one request.
	Paging PagingMode
	// WatchList chooses between streaming and listing.
	WatchList WatchListMode
	// InitialEventsTimeout bounds the wait for a watch-list stream's
	// initial-events-end bookmark (0: the stream's own timeout). A stream
	// that does not deliver it in time is stopped and the reflector lists.
	InitialEventsTimeout time.Duration
	// MaxInternalErrorRetryDuration, if positive, re-watches after a 500
	// internal error for this long since the first one, without relisting.
	MaxInternalErrorRetryDuration time.Duration
	// OnWatchError is told of every error that ends a ListAndWatch (nil:
	// errors are dropped, as by a handler that only logs).
	OnWatchError func(error)
	// Rand is the source of the watch timeouts' and the backoff's
	// randomness, numbers in [0, 1) (nil: math/rand/v2).
	Rand func() float64
}

// ErrInvalidOptions is wrapped by New's errors about its arguments.
var ErrInvalidOptions = errors.New("reflector: invalid options")

// Reflector keeps a store in step with a ListerWatcher. Run it once.
type Reflector struct {
	name         string
	lw           ListerWatcher
	store        Store
	clock        clock.WithTicker
	delay        *backoff.Delay
	rand         func() float64
	expectedType reflect.Type
	useWatchList bool
	minTimeout   time.Duration
	opts         Options

	mu sync.RWMutex
	// lastSync is the published resource version; unavailable makes the
	// next sync start from "" (the version expired or is ahead of the
	// server); paginated records that a list from "0" came in pages.
	lastSync    string
	unavailable bool
	paginated   bool
}

// New returns a reflector that writes to store what lw serves.
func New(lw ListerWatcher, store Store, opts Options) (*Reflector, error) {
	if delta.IsNil(lw) {
		return nil, fmt.Errorf("%w: nil ListerWatcher", ErrInvalidOptions)
	}
	if delta.IsNil(store) {
		return nil, fmt.Errorf("%w: nil store", ErrInvalidOptions)
	}
	switch {
	case opts.ResyncPeriod < 0:
		return nil, fmt.Errorf("%w: negative resync period %v", ErrInvalidOptions, opts.ResyncPeriod)
	case opts.WatchListPageSize < 0:
		return nil, fmt.Errorf("%w: negative page size %d", ErrInvalidOptions, opts.WatchListPageSize)
	case opts.InitialEventsTimeout < 0:
		return nil, fmt.Errorf("%w: negative initial-events timeout %v", ErrInvalidOptions, opts.InitialEventsTimeout)
	case opts.BackoffReset < 0:
		return nil, fmt.Errorf("%w: negative backoff reset %v", ErrInvalidOptions, opts.BackoffReset)
	case opts.WatchList > WatchListOff:
		return nil, fmt.Errorf("%w: unknown watch-list mode %d", ErrInvalidOptions, opts.WatchList)
	case opts.Paging > PagingOff:
		return nil, fmt.Errorf("%w: unknown paging mode %d", ErrInvalidOptions, opts.Paging)
	case opts.Paging == PagingOff && opts.WatchListPageSize != 0:
		return nil, fmt.Errorf("%w: page size %d with paging off", ErrInvalidOptions, opts.WatchListPageSize)
	}
	r := &Reflector{name: opts.Name, lw: lw, store: store, clock: opts.Clock, rand: opts.Rand, opts: opts}
	if r.clock == nil {
		r.clock = clock.RealClock{}
	}
	if r.rand == nil {
		r.rand = rand.Float64
	}
	if r.name == "" {
		r.name = "reflector"
	}
	b := backoff.Default()
	if opts.Backoff != nil {
		b = *opts.Backoff
	}
	reset := opts.BackoffReset
	if reset == 0 {
		reset = backoff.DefaultReset
	}
	d, err := backoff.NewDelay(b, r.clock, reset)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidOptions, err)
	}
	r.delay = d.WithRand(r.rand)
	if opts.ExpectedType != nil {
		r.expectedType = reflect.TypeOf(opts.ExpectedType)
	}
	r.minTimeout = max(opts.MinWatchTimeout, MinWatchTimeout)
	r.useWatchList = opts.WatchList == WatchListAuto
	if u, ok := lw.(watchListUnsupported); ok && u.IsWatchListSemanticsUnSupported() {
		r.useWatchList = false
	}
	return r, nil
}

// Name is the reflector's name.
func (r *Reflector) Name() string { return r.name }

// LastSyncResourceVersion is the resource version the store is known to be
// at: the version of the last sync or of the last event that published.
func (r *Reflector) LastSyncResourceVersion() string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.lastSync
}

func (r *Reflector) setLastSync(rv string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lastSync = rv
}

func (r *Reflector) setUnavailable(v bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.unavailable = v
}

// relistRV is the version a list starts from: "" when the last one is
// unavailable, "0" (any) before the first sync, else the last sync's.
func (r *Reflector) relistRV() string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	switch {
	case r.unavailable:
		return ""
	case r.lastSync == "":
		return "0"
	}
	return r.lastSync
}

// rewatchRV is the version a watch-list starts from.
func (r *Reflector) rewatchRV() string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.unavailable {
		return ""
	}
	return r.lastSync
}

// Run lists and watches until ctx ends, waiting the backoff's delay after
// every ListAndWatch (as client-go's sliding Until) and reporting its
// errors to Options.OnWatchError. It returns once ctx is done and every
// goroutine it started has exited.
func (r *Reflector) Run(ctx context.Context) {
	for ctx.Err() == nil {
		if err := r.ListAndWatch(ctx); err != nil && ctx.Err() == nil && r.opts.OnWatchError != nil {
			r.opts.OnWatchError(err)
		}
		if !r.sleep(ctx, r.delay.Next()) {
			return
		}
	}
}

// sleep waits d or until ctx ends; it reports whether d passed.
func (r *Reflector) sleep(ctx context.Context, d time.Duration) bool {
	if ctx.Err() != nil {
		return false
	}
	t := r.clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C():
		return true
	}
}

// watchTimeout draws a watch's timeout, in whole seconds, from [min, 2·min).
func (r *Reflector) watchTimeout() int64 {
	d := r.minTimeout + time.Duration(r.rand()*float64(r.minTimeout))
	return int64(d / time.Second)
}

// ListAndWatch syncs the store once (by watch-list, or by list when
// streaming is off or fails) and then watches until the watch cannot go
// on. It returns nil when ctx ends or the watch ended in a way that calls
// for a relist without an error (an expired version); otherwise the error.
func (r *Reflector) ListAndWatch(ctx context.Context) error {
	var w watch.Interface
	fallback := !r.useWatchList
	if r.useWatchList {
		var err error
		w, err = r.watchList(ctx)
		switch {
		case ctx.Err() != nil:
			if w != nil {
				w.Stop()
			}
			return nil
		case err != nil:
			if r.opts.OnWatchError != nil {
				r.opts.OnWatchError(fmt.Errorf("%s: watch-list failed, falling back to list: %w", r.name, err))
			}
			fallback = true
		}
	}
	if fallback {
		if err := r.list(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
	}
	return r.watchWithResync(ctx, w)
}
