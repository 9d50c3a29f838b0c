package modelserver

import (
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// Watch timeouts: client-go's [5m, 10m) in whole seconds.
const (
	minTimeoutSeconds = 300
	maxTimeoutSeconds = 600
)

// shapes checks every request against client-go's rules as it is made
// (upstream-behaviour.md §5.3, properties 1-4 and 9): the version a list, a
// watch and a watch-list start from, page sizes, timeouts, bookmarks and
// sendInitialEvents, and that no request is made while a stream the
// reflector was given is still open. The server calls it under its lock.
type shapes struct {
	lastSync  func() string
	watchList bool
	pageSize  int64
	// noWatchList and noPaging: the reflector declares the feature absent
	// (Expectations): no request may set sendInitialEvents; every list has
	// no limit and no continue token.
	noWatchList bool
	noPaging    bool

	unavailable bool   // the last sync attempt failed with expired / too large
	chainRV     string // the version of the paged list in progress
	chainLimit  int64
	chain       bool
	chainFrom0  bool
	lastLimit   int64 // of the last list's first page
	listExpired bool  // unavailable because a list failed (not a watch-list)
	// maybeExpired: a watch-list stream is sending an expired ERROR that
	// the reflector may already have (see Server: a send and its record
	// cannot be one step).
	maybeExpired bool
	learned      bool // a list from "0" came in pages
	// maybeLearned: the "" retry of an expired "0" list came in pages.
	// client-go learns from it (reflector.go:760 tests the original
	// options' version, "0", against the retry's pages), against its own
	// comment; we do not. Either is accepted.
	maybeLearned bool
	lastRV       string // of the last list's first page
	// mayFallBack: the last WATCH was a watch-list request and its stream
	// has not gone on past the initial-events-end bookmark (endSeen): it
	// failed, is still sending, or its Replace failed at the bookmark.
	// Only then may a reflector told to stream list: it falls back to a
	// list within one ListAndWatch, and decides afresh at the next
	// (client-go v0.37.2 reflector.go:470-505: useWatchList is never
	// cleared).
	mayFallBack, endSeen bool
	chainMaybe0          bool
	inRetry              bool // the list in progress is the immediate retry from ""
	violations           []string
}

func (c *shapes) fail(format string, args ...any) {
	c.violations = append(c.violations, fmt.Sprintf(format, args...))
}

func timeoutOK(opts metav1.ListOptions) bool {
	return opts.TimeoutSeconds != nil && *opts.TimeoutSeconds >= minTimeoutSeconds && *opts.TimeoutSeconds < maxTimeoutSeconds
}

// Describe is a short account of a request's options (its version, match,
// limit, continue token, sendInitialEvents, bookmarks and timeout), as the
// server's violations quote them.
func Describe(opts metav1.ListOptions) string {
	s := fmt.Sprintf("rv=%q", opts.ResourceVersion)
	if opts.ResourceVersionMatch != "" {
		s += " match=" + string(opts.ResourceVersionMatch)
	}
	if opts.Limit != 0 {
		s += fmt.Sprintf(" limit=%d", opts.Limit)
	}
	if opts.Continue != "" {
		s += " continue"
	}
	if opts.SendInitialEvents != nil {
		s += fmt.Sprintf(" sendInitialEvents=%v", *opts.SendInitialEvents)
	}
	if opts.AllowWatchBookmarks {
		s += " bookmarks"
	}
	if opts.TimeoutSeconds != nil {
		s += fmt.Sprintf(" timeout=%ds", *opts.TimeoutSeconds)
	}
	return s
}

// wantList is the version and limit of a list's first page when the last
// sync attempt did or did not fail with expired / too large.
func (c *shapes) wantList(unavailable bool) (string, int64) {
	last := c.lastSync()
	rv := last
	switch {
	case unavailable:
		rv = ""
	case last == "":
		rv = "0"
	}
	switch {
	case c.noPaging:
		return rv, 0
	case unavailable && c.listExpired:
		return rv, c.lastLimit // the same pager retries from ""
	case c.pageSize > 0:
		return rv, c.pageSize
	case c.learned:
		return rv, 500
	case rv != "" && rv != "0":
		return rv, 0
	}
	return rv, 500
}

// list checks a LIST request.
func (c *shapes) list(opts metav1.ListOptions) {
	if opts.SendInitialEvents != nil || opts.AllowWatchBookmarks || opts.TimeoutSeconds != nil {
		c.fail("list with watch options: %s", Describe(opts))
	}
	if opts.Continue != "" {
		if c.noPaging {
			c.fail("continue from a reflector without paging: %s", Describe(opts))
			return
		}
		if !c.chain {
			c.fail("continue without a paged list in progress: %s", Describe(opts))
		}
		if opts.ResourceVersion != "" || opts.ResourceVersionMatch != "" || opts.Limit != c.chainLimit {
			c.fail("a continuation must send no version and the first page's limit %d: %s", c.chainLimit, Describe(opts))
		}
		return
	}
	if c.chain && opts.Limit == 0 && opts.ResourceVersion == c.chainRV {
		return // the pager's full list after an expired continuation
	}
	c.chain = false
	if c.watchList && !c.noWatchList && !c.inRetryNext() && !c.mayFallBack {
		c.fail("list %s from a reflector told to stream, with no failed watch-list before it: a reflector falls back to a list only after its stream failed, and streams again at its next sync", Describe(opts))
	}
	c.mayFallBack = false
	rv, limit := c.wantList(c.unavailable)
	if c.maybeExpired && (opts.ResourceVersion != rv || opts.Limit != limit) {
		// The stream's expired ERROR may or may not have reached the
		// reflector before this request: either reading is right.
		if arv, alimit := c.wantList(!c.unavailable); opts.ResourceVersion == arv && opts.Limit == alimit {
			c.unavailable, rv, limit = !c.unavailable, arv, alimit
		}
	}
	if c.maybeLearned && !c.learned && !c.noPaging && opts.Limit == 500 && opts.ResourceVersion == rv && c.pageSize == 0 && !(c.unavailable && c.listExpired) {
		c.learned, limit = true, 500
	}
	if opts.ResourceVersion != rv || opts.ResourceVersionMatch != "" {
		c.fail("list from %s, want rv=%q (last synced %q, last sync expired: %v)", Describe(opts), rv, c.lastSync(), c.unavailable)
	} else if opts.Limit != limit && c.noPaging {
		c.fail("list with limit %d from a reflector without paging, want none (%s)", opts.Limit, Describe(opts))
	} else if opts.Limit != limit {
		c.fail("list with limit %d, want %d (%s; configured page size %d, pages learned from \"0\": %v)", opts.Limit, limit, Describe(opts), c.pageSize, c.learned)
	}
	c.inRetry = c.inRetryNext()
	c.chainMaybe0 = c.inRetry && c.lastRV == "0"
	c.chainRV, c.chainLimit, c.chainFrom0 = opts.ResourceVersion, opts.Limit, opts.ResourceVersion == "0"
	c.lastLimit, c.lastRV, c.listExpired, c.maybeExpired = opts.Limit, opts.ResourceVersion, false, false
}

// inRetryNext reports whether the list about to be checked is the
// immediate retry from "" of a list that was expired or too large (its
// pager's second attempt): part of the same fallback.
func (c *shapes) inRetryNext() bool { return c.unavailable && c.listExpired }

// listed records a LIST's outcome.
func (c *shapes) listed(opts metav1.ListOptions, cont string, err error) {
	switch {
	case err != nil && apierrors.IsResourceExpired(err) && opts.Continue != "":
		// The pager lists in full at the first page's version next.
	case err != nil:
		// The list failed (an expired full list after a continuation
		// too): an expired or too-large version is retried from "".
		if isExpiredOrTooLarge(err) {
			// Only a first attempt is retried at once with its pager.
			c.unavailable, c.listExpired = true, !c.inRetry
		}
		c.chain = false
	case cont != "":
		c.chain = true
	default:
		if c.chain || opts.Continue != "" {
			c.learned = c.learned || c.chainFrom0
			c.maybeLearned = c.maybeLearned || c.chainMaybe0
		}
		c.chain, c.unavailable = false, false
	}
}

// watch checks a WATCH request.
func (c *shapes) watch(opts metav1.ListOptions) {
	c.chain = false
	last := c.lastSync()
	if !timeoutOK(opts) || !opts.AllowWatchBookmarks || opts.Limit != 0 || opts.Continue != "" {
		c.fail("watch %s: want bookmarks allowed and a timeout in [%d, %d) seconds", Describe(opts), minTimeoutSeconds, maxTimeoutSeconds)
	}
	if opts.SendInitialEvents == nil {
		c.mayFallBack = false
		if opts.ResourceVersion != last || opts.ResourceVersionMatch != "" {
			c.fail("watch from %s, want rv=%q (the last synced version)", Describe(opts), last)
		}
		return
	}
	c.mayFallBack, c.endSeen = true, false
	if !*opts.SendInitialEvents || opts.ResourceVersionMatch != metav1.ResourceVersionMatchNotOlderThan {
		c.fail("watch-list %s: want sendInitialEvents=true and match NotOlderThan", Describe(opts))
	}
	switch {
	case c.noWatchList:
		c.fail("watch-list request %s from a reflector that declares no watch-list", Describe(opts))
	case !c.watchList:
		c.fail("watch-list request %s from a reflector told to list", Describe(opts))
	}
	want := last
	if c.unavailable {
		want = ""
	}
	if c.maybeExpired && opts.ResourceVersion == "" {
		// The expired ERROR arrived before this request (the pump had not
		// recorded it yet).
		c.unavailable, c.listExpired, want = true, false, ""
	}
	c.maybeExpired = false
	if opts.ResourceVersion != want {
		c.fail("watch-list from %s, want rv=%q (last synced %q, last sync expired: %v)", Describe(opts), want, last, c.unavailable)
	}
}

// watched records a WATCH call's outcome.
func (c *shapes) watched(opts metav1.ListOptions, err error) {
	if err != nil && opts.SendInitialEvents != nil && isExpiredOrTooLarge(err) {
		c.unavailable, c.listExpired = true, false
	}
}

// sending records an event a watch-list stream is about to send, and
// aborted that the send did not happen.
func (c *shapes) sending(e watch.Event) {
	if e.Type == watch.Error {
		if st, ok := e.Object.(*metav1.Status); ok && isExpiredOrTooLarge(&apierrors.StatusError{ErrStatus: *st}) {
			c.maybeExpired = true
		}
	}
}

func (c *shapes) aborted() { c.maybeExpired = false }

// delivered records an event a watch-list stream delivered. An expired
// ERROR whose ambiguity a request already resolved changes nothing more.
func (c *shapes) delivered(e watch.Event) {
	if c.endSeen {
		// The stream goes on past its end bookmark: the sync was stored
		// and the reflector watches on it.
		c.mayFallBack = false
	}
	switch {
	case isEndBookmark(e):
		c.unavailable, c.endSeen = false, true
	case e.Type == watch.Error && c.maybeExpired:
		c.unavailable, c.listExpired = true, false
	}
	c.maybeExpired = false
}

func isExpiredOrTooLarge(err error) bool {
	return apierrors.IsResourceExpired(err) || apierrors.IsGone(err) ||
		apierrors.HasStatusCause(err, metav1.CauseTypeResourceVersionTooLarge)
}

// Expectations describe the client whose requests the server judges by
// client-go's request-shape rules (Server.Expect): how it was built and
// which of its optional features it lacks. The zero value but LastSync is
// a client built with client-go's defaults and every feature.
type Expectations struct {
	// LastSync returns the version the client last published (a
	// reflector's LastSyncResourceVersion); it must be set.
	LastSync func() string
	// WatchList: the client was told to stream its syncs (watch-list);
	// false: to list.
	WatchList bool
	// PageSize is the client's configured page size (0: client-go's
	// default rules).
	PageSize int64
	// NoWatchList: the client has no watch-list, so no request may set
	// sendInitialEvents. NoPaging: it lists in one request, so every list
	// must have no limit and no continue token.
	NoWatchList bool
	NoPaging    bool
}

// Expect makes the server check every request's shape against client-go's
// rules (see shapes) for the client e describes: the rules for its
// features, e.g. no limit and no continue without paging, no
// sendInitialEvents without watch-list.
func (s *Server) Expect(e Expectations) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rules = &shapes{lastSync: e.LastSync, watchList: e.WatchList, pageSize: e.PageSize,
		noWatchList: e.NoWatchList, noPaging: e.NoPaging}
}

// Violations returns what the server found wrong in the requests so far.
func (s *Server) Violations() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := slices.Clone(s.found)
	if s.rules != nil {
		out = append(out, s.rules.violations...)
	}
	return out
}
