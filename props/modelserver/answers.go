package modelserver

import (
	"fmt"
	"maps"
	"strconv"

	"github.com/kverify/kverify/spec/apiserver"
	specrefl "github.com/kverify/kverify/spec/reflector"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// Answers returns how many times the server gave each kind of answer (a
// LIST's outcome, a WATCH's refusal, an event by the phase of its stream,
// how a stream closed), for measuring what the generators reach: a kind
// the checks never give is behaviour of a real server no check exercises.
func (s *Server) Answers() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.answers)
}

func (s *Server) reachLocked(kind string) {
	if s.answers == nil {
		s.answers = map[string]int{}
	}
	s.answers[kind]++
}

// answer names an error's kind: the relist model's cause, with a 410
// Gone told from a 410 Expired and a 504 from other errors.
func answer(err error) string {
	switch c := causeOf(err); {
	case apierrors.IsGone(err):
		return "410 Gone"
	case c == specrefl.Failed && apierrors.IsTimeout(err):
		return "504 Timeout"
	default:
		return c.String()
	}
}

func requestName(watchList bool) string {
	if watchList {
		return "watch-list"
	}
	return "WATCH"
}

// reachListLocked records a LIST's answer.
func (s *Server) reachListLocked(opts metav1.ListOptions, c apiserver.ListChoice, f Fault, list *metav1.PartialObjectMetadataList, err error) {
	what := "LIST"
	if opts.Continue != "" {
		what = "LIST continuation"
	}
	if err != nil {
		s.reachLocked(what + ": " + answer(err))
		return
	}
	switch {
	case list.Continue != "":
		s.reachLocked(what + ": a page with a continue token")
	default:
		s.reachLocked(what + ": the last page")
	}
	if opts.Continue == "" && list.Continue != "" {
		// A paged list by the version it reads: "0" (a cache that pages),
		// "" (the latest, as after an expired version) or an exact one (a
		// relist from the last synced version).
		s.reachLocked("LIST in pages from " + pagedFrom(opts.ResourceVersion))
	}
	if f.IgnoreLimit && opts.Limit > 0 && int64(len(list.Items)) > opts.Limit {
		s.reachLocked("LIST with its limit ignored")
	}
	if opts.Continue != "" {
		return
	}
	at := c.At
	if at == 0 {
		at = s.m.RV()
	}
	if opts.ResourceVersion == "0" && at < s.m.RV() {
		s.reachLocked(`LIST at "0" from a stale cache`)
	}
	if opts.ResourceVersion == "0" && at < s.served {
		s.reachLocked(`LIST at "0" older than an earlier answer`)
	}
	s.served = max(s.served, at)
}

// pagedFrom names the version a paged list's first page asked for.
func pagedFrom(rv string) string {
	switch rv {
	case "0", "":
		return strconv.Quote(rv)
	}
	return "a version"
}

// eventKind names a delivered event's kind by its stream's phase: a
// watch-list's initial events (before its end bookmark) or a watch.
func (st *stream) eventKind(e watch.Event) string {
	where := "in a watch"
	if st.watchList && !st.synced {
		where = "among a watch-list's initial events"
	}
	switch {
	case e.Type == watch.Error:
		if status, ok := e.Object.(*metav1.Status); ok {
			return fmt.Sprintf("ERROR %s %s", answer(&apierrors.StatusError{ErrStatus: *status}), where)
		}
		return "ERROR without a status " + where
	case isEndBookmark(e):
		return "initial-events-end BOOKMARK"
	case e.Type == watch.Bookmark:
		return "BOOKMARK " + where
	}
	return "event " + where
}
