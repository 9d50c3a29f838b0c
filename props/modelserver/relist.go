package modelserver

import (
	"fmt"
	"time"

	specrefl "github.com/kverify/kverify/spec/reflector"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"
)

// relistRules checks every request against spec/reflector's model of the
// relist-or-rewatch decision: how the last request ended, as the server
// saw it, decides whether the next one may be a relist (a LIST or a
// watch-list), a re-watch (a plain WATCH), or either. The shapes check
// (shapes) judges the versions and limits; this one judges the kind. The
// server calls it under its lock, before serving each request.
//
// The ending of a watch is read from its stream when the next request
// comes: the stream's goroutine has finished by then, because Stop waits
// for it and a reflector stops a stream before its next request (a
// request made while one is open is one of the server's Violations), so
// whether an event reached the reflector is settled, not raced.
type relistRules struct {
	// storeFailures counts the store's refused Replace and Resync calls:
	// one since the last request allows a relist whatever the server saw.
	storeFailures func() int
	failures      int
	// internalRetry: the reflector was given MaxInternalErrorRetryDuration.
	internalRetry bool
	last          specrefl.Ending
	stream        *stream // the last request's stream, if it opened one
	requests      int
	violations    []string
}

// request judges a request of kind req and makes it the last one.
func (r *relistRules) request(req specrefl.Request, opts metav1.ListOptions) {
	r.requests++
	e := r.ending()
	if n := r.storeFailures(); n != r.failures {
		e.StoreFailed, r.failures = true, n
	}
	if specrefl.Allowed(e)&specrefl.Of(req) == 0 {
		r.violations = append(r.violations, fmt.Sprintf("request %d, %s %s, after %v: want %v", r.requests, req, Describe(opts), e, specrefl.Allowed(e)))
	}
	r.last, r.stream = specrefl.Ending{Request: req, InternalRetry: r.internalRetry}, nil
}

// ending is how the last request ended.
func (r *relistRules) ending() specrefl.Ending {
	e := r.last
	if st := r.stream; st != nil {
		e.Synced = st.synced
		e.Cause = st.cause()
	}
	return e
}

// listed records a LIST's outcome.
func (r *relistRules) listed(cont string, err error) {
	switch {
	case err != nil:
		r.last.Cause = specrefl.Failed
	case cont != "":
		r.last.Cause = specrefl.Paged
	default:
		r.last.Cause = specrefl.Listed
	}
}

// watched records a WATCH call's outcome: an error, or the stream whose
// end the next request reads.
func (r *relistRules) watched(st *stream, err error) {
	if err != nil {
		r.last.Cause = causeOf(err)
		return
	}
	r.stream = st
}

// causeOf classifies an error as client-go's reflector does: connection
// refused and 429 (isWatchErrorRetriable), expired or gone
// (isExpiredError), too large (isTooLargeResourceVersionError), 500.
func causeOf(err error) specrefl.Cause {
	switch {
	case utilnet.IsConnectionRefused(err):
		return specrefl.Refused
	case apierrors.IsTooManyRequests(err):
		return specrefl.Throttled
	case apierrors.IsResourceExpired(err) || apierrors.IsGone(err):
		return specrefl.Expired
	case apierrors.HasStatusCause(err, metav1.CauseTypeResourceVersionTooLarge):
		return specrefl.TooLarge
	case apierrors.IsInternalError(err):
		return specrefl.Internal
	}
	return specrefl.Failed
}

// cause is how the stream ended, under the server's lock: by the last
// ERROR event it delivered, else by a malformed event it delivered, else
// by the server's close (within VeryShort of becoming a watch without an
// event since, or not), else by the reflector's Stop.
func (st *stream) cause() specrefl.Cause {
	switch {
	case st.errStatus != nil:
		return causeOf(&apierrors.StatusError{ErrStatus: *st.errStatus})
	case st.malformed:
		return specrefl.Malformed
	case st.serverEnded && len(st.delivered) == st.syncedAfter && st.endedAt.Sub(st.watchFrom()) < specrefl.VeryShort:
		return specrefl.Short
	case st.serverEnded:
		return specrefl.Closed
	}
	return specrefl.StoppedOpen
}

// watchFrom is when the stream became a watch: when it opened, or for a
// watch-list when it delivered its end bookmark. A reflector times a
// handed-over stream from there (client-go's watch takes its start after
// the sync, reflector.go:583, and handleAnyWatch counts the events from
// it, :1088-1092), so a stream that closes right after its end bookmark is
// a very short watch.
func (st *stream) watchFrom() time.Time {
	if st.synced {
		return st.syncedAt
	}
	return st.openedAt
}

// endedByServer records, under the server's lock, that the server closed
// the stream (its end or its timeout), unless the reflector stopped it
// first.
func (st *stream) endedByServer() {
	st.srv.mu.Lock()
	defer st.srv.mu.Unlock()
	if !st.stopped {
		st.serverEnded, st.endedAt = true, time.Now()
		switch c := st.cause(); {
		case st.watchList && !st.synced:
			st.srv.reachLocked("watch-list closed before its end bookmark")
		case c == specrefl.Short && st.synced:
			st.srv.reachLocked("watch-list closed right after its end bookmark")
		case c == specrefl.Short:
			st.srv.reachLocked("WATCH closed at once without an event")
		case c == specrefl.Closed:
			st.srv.reachLocked("watch closed after events or time")
		}
	}
}

// RelistViolations returns the requests so far that the relist-or-rewatch
// model (spec/reflector) does not allow after the request before them.
func (s *Server) RelistViolations() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.relist == nil {
		return nil
	}
	return append([]string(nil), s.relist.violations...)
}

// ExpectRelist makes the server judge every request by the
// relist-or-rewatch model, for a reflector that re-watches after internal
// errors if internalRetry, and whose store's refused Replace and Resync
// calls storeFailures counts (a new refusal allows a relist whatever the
// server saw).
func (s *Server) ExpectRelist(storeFailures func() int, internalRetry bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.relist = &relistRules{storeFailures: storeFailures, internalRetry: internalRetry}
}
