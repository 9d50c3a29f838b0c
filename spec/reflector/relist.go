// Package reflector is the reference model of a reflector's decision
// between relisting and re-watching: given how its last request ended, as
// the server saw it, which requests may come next. It is client-go's rule
// (k8s.io/client-go@v0.37.2/tools/cache/reflector.go), made permissive
// where the contract is loose (the server cannot tell why a client stopped
// a stream, or whether it skips or rejects an event it cannot apply) and
// strict where client-go pins it (a relist after an expired version, a
// re-watch after a clean close or a throttled or refused watch).
//
// The model is pure: no goroutines, no clock, no randomness. The caller
// classifies what the server saw (the status of an ERROR event, whether a
// stream closed before VeryShort without an event) into an Ending.
package reflector

import (
	"fmt"
	"time"
)

// VeryShort is how soon a watch may close without an event before
// client-go treats it as a failing server and relists
// (reflector.go:1088-1092: watchDuration < 1s && eventCount == 0).
const VeryShort = time.Second

// Request is the kind of a request a reflector makes.
type Request uint8

// The requests.
const (
	// List is a LIST: the first page of a sync, a continuation, or the
	// pager's full list after an expired continuation.
	List Request = iota
	// Watch is a plain WATCH (no sendInitialEvents) from the last synced
	// version: a re-watch.
	Watch
	// WatchList is a WATCH with sendInitialEvents=true: a sync by
	// streaming.
	WatchList
)

func (r Request) String() string {
	switch r {
	case List:
		return "LIST"
	case Watch:
		return "WATCH"
	case WatchList:
		return "watch-list"
	}
	return fmt.Sprintf("Request(%d)", r)
}

// Next is a set of requests allowed next.
type Next uint8

// The sets.
const (
	// Relist is a new sync: a LIST (or its next page) or a watch-list.
	Relist Next = 1 << iota
	// Rewatch is a plain WATCH from the last synced version.
	Rewatch
	// Either is both.
	Either = Relist | Rewatch
)

func (n Next) String() string {
	switch n {
	case Relist:
		return "a relist (LIST or watch-list)"
	case Rewatch:
		return "a re-watch (plain WATCH from the last synced version)"
	case Either:
		return "a relist or a re-watch"
	}
	return "nothing"
}

// Of is the set a request belongs to: a LIST and a watch-list are
// relists, a plain WATCH is a re-watch.
func Of(r Request) Next {
	if r == Watch {
		return Rewatch
	}
	return Relist
}

// Cause is how a request, or the stream it opened, ended.
type Cause uint8

// The causes. Status causes apply to a request rejected with that status
// and to a stream's ERROR event carrying it.
const (
	// Nothing: no request yet.
	Nothing Cause = iota
	// Listed: a LIST answered in full (its last page).
	Listed
	// Paged: a LIST page that carries a continue token.
	Paged
	// Refused: connection refused.
	Refused
	// Throttled: 429 Too Many Requests.
	Throttled
	// Expired: 410 Gone, or the Expired reason ("too old resource
	// version"): client-go's isExpiredError (reflector.go:1154-1160).
	Expired
	// TooLarge: "too large resource version" (the version is ahead of the
	// server): isTooLargeResourceVersionError (reflector.go:1162).
	TooLarge
	// Internal: 500 Internal Server Error with reason InternalError
	// (apierrors.IsInternalError, which client-go's retry keys on). A 500
	// without a reason (a watch at a version that is not a number, see
	// spec/apiserver's badWatchRV) is Failed.
	Internal
	// Failed: any other error (504, 400, a failed LIST of any status).
	Failed
	// Closed: the server closed the stream (its timeout, or an end without
	// an ERROR) after an event or at least VeryShort after it opened.
	Closed
	// Short: the server closed the stream within VeryShort without an
	// event: of a watch-list's stream, within VeryShort of its end
	// bookmark without an event after it (the handed-over stream is a new
	// watch to the reflector, which times it from the sync:
	// reflector.go:583, :1088-1092).
	Short
	// Malformed: the stream delivered an event the reflector cannot apply
	// (no object, the wrong type, a missing or non-numeric version).
	Malformed
	// StoppedOpen: the reflector stopped a stream the server had not
	// ended, for a reason of its own.
	StoppedOpen
)

var causeNames = [...]string{"nothing", "a LIST answered in full", "a LIST page with a continue token",
	"connection refused", "429", "410 expired", "too large resource version", "500", "another error",
	"a clean close", "a close within 1s without an event", "a malformed event", "a stop by the reflector"}

func (c Cause) String() string {
	if int(c) < len(causeNames) {
		return causeNames[c]
	}
	return fmt.Sprintf("Cause(%d)", c)
}

// Ending is how the reflector's last request ended.
type Ending struct {
	// Request is the last request.
	Request Request
	// Synced: for a watch-list, the stream delivered its
	// initial-events-end bookmark, so it went on as the watch and its
	// Cause is how that watch ended; otherwise no sync completed.
	Synced bool
	Cause  Cause
	// InternalRetry: the reflector re-watches after a 500 for a while
	// (MaxInternalErrorRetryDuration > 0). Whether the window is still
	// open depends on the reflector's clock and on when it counts from
	// (client-go's RetryWithDeadline resets a minute after an error; a
	// reflector may count from the first one), so either is allowed.
	InternalRetry bool
	// StoreFailed: the store refused a Replace or a Resync since the
	// request: the sync or the watch failed on the client's side, and a
	// relist is allowed whatever the server saw.
	StoreFailed bool
}

func (e Ending) String() string {
	s := e.Request.String()
	if e.Request == WatchList && e.Synced {
		s += " (synced)"
	}
	if e.Cause == Nothing {
		return "no request yet"
	}
	s += " ended by " + e.Cause.String()
	if e.StoreFailed {
		s += ", the store refused a call"
	}
	return s
}

// Allowed is the set of requests that may follow e. The rules, from
// client-go's reflector.go (v0.37.2):
//
//   - The first request is a sync: RunWithContext calls
//     ListAndWatchWithContext, which streams (watchList, :484) or lists
//     (:501).
//   - After a LIST page with a continue token, or a LIST that failed,
//     only a LIST or a watch-list follows: the pager asks for the next
//     page, or lists in full after an expired continuation
//     (tools/pager/pager.go:114-124); a failed list ends ListAndWatch
//     with its error and the next attempt syncs again (:501-503, then
//     RunWithContext's loop, :430-433); an expired or too-large list is
//     retried at once from "" (:720-733). A watch needs a synced
//     version.
//   - After a LIST answered in full: a re-watch, the watch of
//     ListAndWatch (:508). A relist there only when the store refused
//     the Replace (syncWith's error ends list, :776-779).
//   - After a watch-list that did not complete its sync (refused,
//     rejected, an ERROR, a close or a stop before the
//     initial-events-end bookmark): a relist. watchList retries the
//     stream (retriable errors, an expired or too-large version, a close
//     without the bookmark: :813-827, :863-890), and any other error
//     falls back to LIST (:489-503).
//
// After a watch (a plain WATCH, or a watch-list's stream once synced,
// which the watch goes on with: :508, :561-578):
//
//   - Refused or 429, at the request (isWatchErrorRetriable, :605-616,
//     :1195-1204) or as the stream's ERROR (:652-657): back off and
//     re-watch. A relist is not allowed: the version is still good, and
//     not relisting a whole collection while the server is overloaded
//     is what the rule is for.
//   - A clean close (the server's timeout, an end without ERROR) after an
//     event or after VeryShort: re-watch at once from the last synced
//     version (handleWatch returns nil and the loop goes on, :638-645).
//     A relist is not allowed: every watch times out within 5-10
//     minutes, and relisting then would turn every timeout into a full
//     LIST.
//   - A close within VeryShort without an event (Short): a relist
//     (VeryShortWatchError, :1088-1092, ends watch at :663-667 and
//     ListAndWatch returns).
//   - 410 expired, too large, or any other status, at the request
//     (:616) or as an ERROR (:647-651, :663-667): a relist (the LIST
//     from the last synced version, :648-650: the version is marked
//     unavailable only by a failed list or watch-list).
//   - 500: a relist, or either while the reflector retries internal
//     errors (InternalRetry, :660-662).
//   - A malformed event: either. client-go skips it and the watch goes
//     on (:1009-1036), so what follows is decided by the later end; a
//     reflector that rejects it ends the watch and relists. The model
//     does not pin one.
//   - A stop by the reflector while the stream was open: either (the
//     server cannot tell a failed Resync, a rejected event or a timeout
//     of the reflector's own from anything else).
//
// A store that refused a call since the request always allows a relist
// too.
//
// The rules do not depend on the reflector's features: one without
// watch-list relists by LIST only (its requests' shapes are judged
// elsewhere), one without paging never ends a request with Paged, one
// without resync never has a Resync refused.
func Allowed(e Ending) Next {
	n := allowed(e)
	if e.StoreFailed {
		n |= Relist
	}
	return n
}

func allowed(e Ending) Next {
	if e.Cause == Nothing {
		return Relist
	}
	switch {
	case e.Request == List:
		if e.Cause == Listed {
			return Rewatch
		}
		return Relist
	case e.Request == WatchList && !e.Synced:
		return Relist
	}
	switch e.Cause {
	case Refused, Throttled, Closed:
		return Rewatch
	case Internal:
		if e.InternalRetry {
			return Either
		}
		return Relist
	case Malformed, StoppedOpen:
		return Either
	}
	return Relist // Expired, TooLarge, Failed, Short (and Listed or Paged, which a watch never ends with)
}
