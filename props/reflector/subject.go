// Package reflector is the conformance suite for reflectors: a reflector
// under test runs against the model API server (spec/apiserver) served
// through client-go's ListerWatcher method set, over random server
// histories and fault schedules in synctest bubbles, and is held to
// client-go's request rules and to the guarantees a store's readers rely
// on: a published resource version is earned (the store holds the
// server's state at it), the store converges once faults stop, one Replace
// per sync, every watch stopped exactly once, cancellation at once,
// malformed events never stored, backoff within its bounds.
//
// The server, its fault schedules and its request rules are
// props/modelserver's, which other suites (the controller's, the wire's,
// benchmarks, fuzzing) use to serve the model too.
package reflector

import (
	"context"
	"strings"
	"time"

	"github.com/kverify/kverify/props/modelserver"
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
	Server *modelserver.Server
	// WatchList: the reflector streams its syncs (watch-list); false: it
	// lists. A subject that cannot choose per reflector may read it from
	// the ListerWatcher (modelserver.NoWatchList). Never set for a subject
	// that declares Capabilities.NoWatchList.
	WatchList bool
	// Store receives the reflector's writes.
	Store *Store
	// ResyncPeriod and ShouldResync as client-go's. Never set for a
	// subject that declares Capabilities.NoResync.
	ResyncPeriod time.Duration
	ShouldResync func() bool
	// PageSize is client-go's WatchListPageSize (0: the default rules).
	// Never set for a subject that declares Capabilities.NoPaging.
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
	// error for each (index 0..3) without panicking. The resync period
	// (2) and the page size (3) are not asked of a subject that declares
	// no resync or no paging.
	BadInput func(i int) error
	// Capabilities declares the optional features the reflector lacks;
	// the zero value is all of client-go's.
	Capabilities Capabilities
	// Name, when set, prefixes every check's name (Name/reflector/machine),
	// so that one subject entry can run the checks on two reflectors, as
	// ours does on its list-and-watch reduction; traces name the prefixed
	// check and Replay matches it.
	Name string
}

// checkName is the name of check c for s.
func (s Subject) checkName(c string) string {
	if s.Name == "" {
		return c
	}
	return s.Name + "/" + c
}

// Capabilities are the optional features of client-go's Reflector that a
// subject may declare absent, one field each. The zero value is
// everything client-go has, so a subject that declares nothing is checked
// exactly as client-go is.
//
// A feature declared absent is never asked of the subject: no Setup uses
// it, the fixed scenarios and the random schedules that need it are not
// generated, and a check that only exercises it is not offered, with the
// reason (checkkit.Check.NotOffered). Every other guarantee is checked in
// full, and requests are judged by the rules for the declared features,
// which are stricter where a feature is absent:
//
//   - NoWatchList: the reflector never streams its syncs. Setup.WatchList
//     is always false and no request may set sendInitialEvents.
//     reflector/initial-events-bound is not offered; the watch-list
//     scenarios of reflector/requests, reflector/stops, reflector/cancel
//     and reflector/malformed are not run; reflector/machine and
//     reflector/malformed draw only listing reflectors (servers still
//     with and without watch-list). The assembled informer's checks
//     (InformerSubject) build it only with watchList false.
//   - NoPaging: the reflector lists in one request. Setup.PageSize is
//     always 0, and every list must have no limit and no continue token
//     (client-go's limit of 500 is dropped from every expected request).
//     The scenarios of learned pages and of a page size are not run,
//     reflector/machine draws no page size (it still lists past 500
//     objects), and reflector/bad-input does not ask for a negative page
//     size.
//   - NoResync: the reflector has no resync. Setup.ResyncPeriod is always
//     0 and ShouldResync nil, and the store's Resync must never be called
//     (checked wherever the store is). reflector/resync is not offered,
//     and reflector/bad-input does not ask for a negative resync period.
//
// Bookmarks are not optional: every check's convergence waits on the
// bookmarks the server sends to watches that allow them, and a watch-list
// needs its initial-events-end bookmark.
type Capabilities struct {
	NoWatchList bool
	NoPaging    bool
	NoResync    bool
	// AlwaysStreams: an informer that streams its syncs even when built
	// to list, having no way to opt out (client-go v0.31-v0.34 with
	// WatchListClient on). The checks scripted request by request for a
	// listing informer (assembled/stop) are not offered; the others run
	// as they are, streaming where they asked for a list.
	AlwaysStreams bool
}

// String lists the features declared absent ("" for none).
func (c Capabilities) String() string {
	var out []string
	if c.NoWatchList {
		out = append(out, "no watch-list")
	}
	if c.NoPaging {
		out = append(out, "no paging")
	}
	if c.NoResync {
		out = append(out, "no resync")
	}
	if c.AlwaysStreams {
		out = append(out, "always streams")
	}
	return strings.Join(out, ", ")
}

// lacking names the first feature setup uses that c declares absent ("" if
// none): a check that builds such a setup has a bug, not the subject.
func (c Capabilities) lacking(setup Setup) string {
	switch {
	case c.NoWatchList && setup.WatchList:
		return "watch-list"
	case c.NoPaging && setup.PageSize != 0:
		return "paging"
	case c.NoResync && (setup.ResyncPeriod != 0 || setup.ShouldResync != nil):
		return "resync"
	}
	return ""
}
