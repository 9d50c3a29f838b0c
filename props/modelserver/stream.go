package modelserver

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/kverify/kverify/spec/apiserver"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// stream is one watch.Interface over a model watch.
type stream struct {
	srv      *Server
	w        *apiserver.Watch
	f        Fault
	ch       chan watch.Event
	stop     chan struct{}
	stopOnce sync.Once
	done     chan struct{}
	timeout  time.Duration
	// watchList: the request asked for initial events; stopped: the
	// client called Stop (under the server's lock).
	watchList, stopped bool
	synced             bool    // delivered its end bookmark
	from               string  // the request's resource version
	delivered          []Event // under the server's lock
	// How it ended, for the relist model (relistRules), under the
	// server's lock: when it opened; when a watch-list delivered its end
	// bookmark and how many events it had delivered then; whether the
	// server closed it (its end or its timeout) before the reflector
	// stopped it, and when; the status of the last ERROR event; whether
	// a malformed event was delivered.
	openedAt, endedAt, syncedAt time.Time
	syncedAfter                 int
	serverEnded                 bool
	errStatus                   *metav1.Status
	malformed                   bool
}

// Event is a delivered event's type and resource version.
type Event struct {
	Type watch.EventType
	RV   string
}

// Delivered returns, for every watch opened so far in order, the version
// it was requested from and the events it delivered.
func (s *Server) Delivered() (from []string, events [][]Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, st := range s.streams {
		from = append(from, st.from)
		events = append(events, slices.Clone(st.delivered))
	}
	return from, events
}

// ResultChan is the stream's events; it closes when the stream ends.
func (st *stream) ResultChan() <-chan watch.Event { return st.ch }

// Stop records the Stop (every call, so double stops are seen), ends the
// stream and waits for its goroutine, so that whether its last event
// reached the reflector is settled before the reflector's next request
// (the goroutine never waits for the reflector once stopped). Under
// Fault.HoldStop it then waits for Release or Close.
func (st *stream) Stop() {
	st.srv.mu.Lock()
	st.w.Stop()
	st.stopped = true
	st.srv.recordTimesLocked()
	st.srv.mu.Unlock()
	st.kill()
	<-st.done
	if st.f.HoldStop {
		st.srv.mu.Lock()
		_ = st.srv.waitLocked(context.Background()) // Stop takes no context
		st.srv.mu.Unlock()
	}
}

func (st *stream) kill() { st.stopOnce.Do(func() { close(st.stop) }) }

func (st *stream) run() {
	defer close(st.done)
	defer close(st.ch)
	var timeout <-chan time.Time
	if st.timeout > 0 {
		t := time.NewTimer(st.timeout)
		defer t.Stop()
		timeout = t.C
	}
	sent := 0
	for {
		st.srv.mu.Lock()
		evs, closed := st.w.Events()
		changed := st.srv.changed
		st.srv.mu.Unlock()
		for ; sent < len(evs); sent++ {
			if ok, timedOut := st.send(evs[sent], timeout); !ok {
				if timedOut {
					st.endedByServer()
				}
				return
			}
		}
		if closed {
			st.endedByServer()
			return
		}
		select {
		case <-changed:
		case <-st.stop:
			return
		case <-timeout:
			st.endedByServer()
			return
		}
	}
}

func rvOf(e watch.Event) string {
	if m, ok := e.Object.(metav1.Object); ok {
		return m.GetResourceVersion()
	}
	return ""
}

// send delivers one event, after the stream's delay; it reports false when
// the stream was stopped or timed out (timedOut) instead. The checker hears
// of the event before the send (the reflector may act on it before this
// goroutine runs again) and of the outcome after it.
func (st *stream) send(e watch.Event, timeout <-chan time.Time) (ok, timedOut bool) {
	if st.f.Slow > 0 {
		t := time.NewTimer(st.f.Slow)
		defer t.Stop()
		select {
		case <-t.C:
		case <-st.stop:
			return false, false
		case <-timeout:
			return false, true
		}
	}
	rules := st.watchList && !st.synced && st.srv.rules != nil
	if rules {
		st.srv.mu.Lock()
		st.srv.rules.sending(e)
		st.srv.mu.Unlock()
	}
	sent := false
	select {
	case st.ch <- e:
		sent = true
	case <-st.stop:
	case <-timeout:
		timedOut = true
	}
	st.srv.mu.Lock()
	defer st.srv.mu.Unlock()
	if !sent {
		if rules {
			st.srv.rules.aborted()
		}
		return false, timedOut
	}
	st.delivered = append(st.delivered, Event{Type: e.Type, RV: rvOf(e)})
	st.srv.reachLocked(st.eventKind(e))
	switch status, isStatus := e.Object.(*metav1.Status); {
	case e.Type == watch.Error && isStatus:
		st.errStatus = status
	case e.Type == watch.Error:
		st.malformed = true // an ERROR without a status
	default:
		st.malformed = st.malformed || !wellFormed(e)
	}
	if rules {
		st.srv.rules.delivered(e)
	}
	if st.watchList && isEndBookmark(e) {
		st.srv.syncs++
		st.synced = true
		st.syncedAt, st.syncedAfter = time.Now(), len(st.delivered)
	}
	return true, false
}

// wellFormed: an ADDED, MODIFIED, DELETED or BOOKMARK event whose object
// is a *metav1.PartialObjectMetadata with a numeric version.
func wellFormed(e watch.Event) bool {
	m, ok := e.Object.(*metav1.PartialObjectMetadata)
	if !ok || m == nil {
		return false
	}
	_, err := strconv.ParseUint(m.ResourceVersion, 10, 64)
	return err == nil
}

// isEndBookmark: a well-formed initial-events-end bookmark.
func isEndBookmark(e watch.Event) bool {
	m, ok := e.Object.(*metav1.PartialObjectMetadata)
	if e.Type != watch.Bookmark || !ok || m.Annotations[apiserver.InitialEventsAnnotationKey] != "true" {
		return false
	}
	_, err := strconv.ParseUint(m.ResourceVersion, 10, 64)
	return err == nil
}
