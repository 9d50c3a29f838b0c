package reflector

import (
	"context"
	"time"
)

// Reflector is a reflector under test.
type Reflector interface {
	// Run lists and watches until ctx ends and returns once it has
	// stopped every watch it started and every goroutine it started has
	// exited.
	Run(ctx context.Context)
	// LastSyncResourceVersion is the published resource version.
	LastSyncResourceVersion() string
}

// Setup is what a check asks a subject to build.
type Setup struct {
	// Server is the ListerWatcher (client-go's ListerWatcher and
	// ListerWatcherWithContext method sets).
	Server *Server
	// WatchList: the reflector streams its syncs (watch-list); false: it
	// lists. A subject that cannot choose per reflector may read it from
	// the ListerWatcher (NoWatchList).
	WatchList bool
	// Store receives the reflector's writes.
	Store *Store
	// ResyncPeriod and ShouldResync as client-go's.
	ResyncPeriod time.Duration
	ShouldResync func() bool
	// PageSize is client-go's WatchListPageSize (0: the default rules).
	PageSize int64
	// MaxInternalErrorRetryDuration is client-go's field of that name: a
	// watch that ends with a 500 is re-watched without a relist for this
	// long after the first one (0: never).
	MaxInternalErrorRetryDuration time.Duration
	// OnError receives the errors the reflector reports (may be ignored).
	OnError func(error)
	// Clock is the clock the reflector must use; it counts timers, so that
	// the checks find timers left armed after Run returned.
	Clock *Clock
	// Rand, numbers in [0, 1), is the randomness the check chose for the
	// watch timeouts and the backoff's jitter, so that a counterexample
	// replays; a subject that cannot take it uses its own.
	Rand func() float64
}

// Subject is a reflector implementation under test. New builds an
// unstarted reflector inside the caller's synctest bubble, with its
// default backoff and watch timeouts and the bubble's clock.
type Subject struct {
	New func(s Setup) (Reflector, error)
	// BadInput, if set, builds a reflector from a nil ListerWatcher, a nil
	// store or a negative resync period and page size, and must return an
	// error for each (index 0..3) without panicking.
	BadInput func(i int) error
}
