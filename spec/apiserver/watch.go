package apiserver

import (
	"fmt"
	"slices"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// WatchChoice holds the server's choices and faults for one Watch.
type WatchChoice struct {
	// At, if not 0, serves a watch that starts at "any" version from the
	// snapshot at this RV instead of the current state (a lagging watch
	// cache): the initial events are the state at At and the writes after
	// At follow as ordinary events. Allowed for RV "0", for a legacy watch
	// from RV "" (the watch cache serves both from its own state), and for
	// sendInitialEvents with RV n (At >= n). At in [1, RV()].
	At int64
	// InitialBookmarks puts an un-annotated BOOKMARK at the snapshot RV
	// after this many initial ADDED events (one per entry; 0 is before the
	// first, entries past the last event come just before the end
	// bookmark) in a watch-list stream (sendInitialEvents=true with
	// bookmarks allowed): the periodic bookmarks a real server may send
	// while it streams the initial events. Only the annotated end bookmark
	// ends them; a bookmark's RV is never above the snapshot's, since
	// the writes after it have not been sent. Ignored for other watches: a
	// legacy watch from "" or "0" has no end bookmark, and a client
	// takes any BOOKMARK there as the end of its initial events.
	InitialBookmarks []int
	// Order is the order of the synthetic initial ADDED events: the listed
	// keys present in the snapshot first, in this order, then the others
	// in key order (the real watch cache's order). Keys not in the
	// snapshot and repeats are ignored.
	Order []string
	// Refuse fails the request with ConnectionRefused.
	Refuse bool
	// Reject, if set, fails the request with this status (e.g. Status(429)).
	Reject *metav1.Status
	// Faults shape the stream.
	Faults Faults
}

// Faults are the faults a watch stream carries. They apply in this order:
// DropEndBookmark filters events, Malform replaces events by their index
// in the filtered stream, End cuts the stream.
type Faults struct {
	// DropEndBookmark: the watch-list stream never sends its
	// initial-events-end bookmark, nor any later bookmark (a real watch
	// cache would annotate the next one as the end).
	DropEndBookmark bool
	// Malform lists events to deliver malformed.
	Malform []Malformed
	// End, if set, ends the stream after End.After events.
	End *End
}

// End ends a stream: after After events (0: at once), the ERROR event
// carrying Status if it is set, then the stream closes. AfterSync ends a
// watch-list stream right after its initial-events-end bookmark instead
// (After is ignored; a stream without one never ends by it).
type End struct {
	After     int
	Status    *metav1.Status
	AfterSync bool
}

// Malformation names a way to deliver an event malformed.
type Malformation uint8

// The malformations. NoRV and BadRV change the object's resourceVersion
// ("" and "not-a-number") and leave an object other than a
// *metav1.PartialObjectMetadata (an ERROR event's Status) as it is.
const (
	NilObject Malformation = iota // the event's Object is nil
	WrongType                     // an *unstructured.Unstructured with the same metadata
	NoRV                          // resourceVersion ""
	BadRV                         // resourceVersion "not-a-number"
)

// Malformed delivers the event at Index (0-based, counting the events
// this stream delivers) malformed.
type Malformed struct {
	Index int
	How   Malformation
}

// Watch is one watch stream. Its events are a function of the request, the
// choices and the server's history: Events returns the finite prefix the
// stream has produced so far, which grows as the server is written to and
// ends when a fault, a server error or Stop ends it.
type Watch struct {
	s         *Server
	id        int
	from      int64 // events with an RV above from are delivered
	start     int   // bookmarks at history index >= start are delivered
	pos       int   // next history index to consume
	stopAt    int   // history length at Stop
	bookmarks bool  // bookmarks allowed (and not dropped)
	faults    Faults
	malform   map[int]Malformation
	events    []watch.Event
	ended     bool // closed by a fault or a server error
	synced    bool // the end bookmark was emitted
	stopped   bool
}

// Watch serves a WATCH request and records it. Options are defaulted and
// validated as kube-apiserver does (with the WatchList gate on, a watch
// from "" or "0" without sendInitialEvents and match becomes
// sendInitialEvents=true, NotOlderThan). Then, by the api-concepts table:
//
//   - sendInitialEvents=true ("get state and start at ..."): synthetic
//     ADDED events for the snapshot in WatchChoice.Order (with
//     WatchChoice.InitialBookmarks among them); if bookmarks are
//     allowed, a BOOKMARK at the snapshot RV annotated
//     k8s.io/initial-events-end=true; then every write after the snapshot.
//     The snapshot is the current state for RV "" (consistent), any
//     (WatchChoice.At) for "0", not older than n for RV n; n above the
//     current RV gives a stream whose only event is an ERROR with TooLarge
//     (the watch cache's answer after waiting for freshness).
//   - sendInitialEvents unset, RV "" or "0" (legacy, only when the gate is
//     off): the same initial ADDED events, never an end bookmark.
//   - sendInitialEvents=false: no initial events; from the current RV for
//     "", from any RV (At) for "0", from n for RV n.
//   - RV n without initial events: every write after n, in RV order; n
//     below the compaction point gives a stream whose only event is an
//     ERROR with TooOld (410 Expired); n above the current RV is not an
//     error (the stream waits for writes above n).
//
// Bookmarks (Server.Bookmark) follow when allowed. Faults, a 400 Invalid
// and the 500 of an RV that is not a number (see badWatchRV) come back
// from the call; Expired and TooLarge come in the
// stream, as the watch cache sends them. Limit and Continue are ignored;
// TimeoutSeconds is the adapter's (the model has no clock).
func (s *Server) Watch(opts metav1.ListOptions, c WatchChoice) (*Watch, error) {
	w, err := s.watch(opts, c)
	id := 0
	if w != nil {
		id = w.id
	}
	s.record(WatchCall, &opts, id, err)
	if err != nil {
		return nil, err
	}
	return w, nil
}

func (s *Server) watch(opts metav1.ListOptions, c WatchChoice) (*Watch, error) {
	if err := refusal(c.Refuse, c.Reject); err != nil {
		return nil, err
	}
	if opts.LabelSelector != "" || opts.FieldSelector != "" {
		return nil, ErrUnsupported
	}
	opts, err := s.validate(opts, true)
	if err != nil {
		return nil, err
	}
	rv := opts.ResourceVersion
	var n int64
	if rv != "" && rv != "0" {
		var bad string
		if n, bad = parseRV(rv); bad != "" {
			return nil, badWatchRV(bad)
		}
	}
	sie := opts.SendInitialEvents
	initial := (sie != nil && *sie) || (sie == nil && (rv == "" || rv == "0"))
	endBookmark := sie != nil && *sie && opts.AllowWatchBookmarks

	w := &Watch{s: s, start: len(s.log), bookmarks: opts.AllowWatchBookmarks, faults: c.Faults}
	w.malform = map[int]Malformation{}
	for _, m := range c.Faults.Malform {
		w.malform[m.Index] = m.How
	}
	var fail error
	switch {
	case rv == "" && initial && sie != nil:
		// a consistent read: never stale
		if c.At != 0 {
			return nil, fmt.Errorf("%w: a watch-list from RV \"\" is a consistent read", ErrBadChoice)
		}
		w.from = s.rv
	case rv == "" && initial, rv == "0":
		w.from, err = s.choose(c.At, 1)
	case rv == "":
		if c.At != 0 {
			return nil, fmt.Errorf("%w: a watch from the most recent RV is never stale", ErrBadChoice)
		}
		w.from = s.rv
	case initial: // RV n, not older than
		if n > s.rv {
			if c.At != 0 {
				return nil, fmt.Errorf("%w: RV %d is ahead of the server", ErrBadChoice, n)
			}
			w.from, fail = n, TooLarge(n, s.rv)
			break
		}
		w.from, err = s.choose(c.At, n)
	default: // RV n, exact start
		if c.At != 0 {
			return nil, fmt.Errorf("%w: a watch from RV %d starts exactly there", ErrBadChoice, n)
		}
		w.from = n
		if n < s.compacted {
			fail = TooOld(n, s.compacted)
		}
	}
	if err != nil {
		return nil, err
	}
	s.watches++
	w.id = s.watches
	w.pos = s.after(w.from)
	w.end()
	switch {
	case fail != nil:
		w.emit(watch.Event{Type: watch.Error, Object: statusOf(fail)})
		w.ended = true
	case initial:
		objs := order(s.snapshot(w.from), c.Order)
		for i := 0; i <= len(objs); i++ {
			if endBookmark {
				for _, at := range c.InitialBookmarks {
					if at == i || (i == len(objs) && at > i) {
						w.emit(bookmark(w.from, false))
					}
				}
			}
			if i < len(objs) {
				w.emit(watch.Event{Type: watch.Added, Object: objs[i].Meta()})
			}
		}
		if endBookmark {
			if c.Faults.DropEndBookmark {
				w.bookmarks = false
			}
			w.synced = w.bookmarks
			w.emit(bookmark(w.from, true))
		}
	}
	return w, nil
}

// ID returns the watch's ID: 1 for the first watch the server opened, and
// so on. Calls refer to watches by it.
func (w *Watch) ID() int { return w.id }

// Events returns the events the stream has produced so far, in order, and
// whether it is closed (a fault or a server error ended it, or it was
// stopped). The result is a prefix of every later result. The objects are
// fresh for each watch; the caller owns them once delivered.
func (w *Watch) Events() ([]watch.Event, bool) {
	limit := len(w.s.log)
	if w.stopped {
		limit = w.stopAt
	}
	for ; w.pos < limit && !w.ended; w.pos++ {
		e := w.s.log[w.pos]
		switch {
		case e.rv <= w.from:
		case e.typ != watch.Bookmark:
			w.emit(watch.Event{Type: e.typ, Object: newMeta(e.key, e.rv)})
		case w.pos >= w.start:
			w.emit(bookmark(e.rv, false))
		}
	}
	return slices.Clip(w.events), w.ended || w.stopped
}

// Stop stops the stream and records the Stop (every call, so a check can
// find double stops). The stream keeps the events the history held at the
// first Stop and produces no more.
func (w *Watch) Stop() {
	if !w.stopped {
		w.stopped, w.stopAt = true, len(w.s.log)
	}
	w.s.record(StopCall, nil, w.id, nil)
}

// emit appends e to the stream through the faults.
func (w *Watch) emit(e watch.Event) {
	if w.ended || (e.Type == watch.Bookmark && !w.bookmarks) {
		return
	}
	if how, ok := w.malform[len(w.events)]; ok {
		e = malform(e, how)
	}
	w.events = append(w.events, e)
	w.end()
}

// end applies the End fault once the stream holds End.After events.
func (w *Watch) end() {
	f := w.faults.End
	if f == nil || w.ended || (f.AfterSync && !w.synced) || (!f.AfterSync && len(w.events) != f.After) {
		return
	}
	if f.Status != nil {
		w.events = append(w.events, watch.Event{Type: watch.Error, Object: f.Status.DeepCopy()})
	}
	w.ended = true
}

func bookmark(rv int64, end bool) watch.Event {
	m := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{ResourceVersion: strconv.FormatInt(rv, 10)}}
	if end {
		m.Annotations = map[string]string{InitialEventsAnnotationKey: "true"}
	}
	return watch.Event{Type: watch.Bookmark, Object: m}
}

func statusOf(err error) runtime.Object {
	st := err.(interface{ Status() metav1.Status }).Status()
	return &st
}

// order returns objs with the keys in first leading, in that order.
func order(objs []Object, first []string) []Object {
	if len(first) == 0 {
		return objs
	}
	idx := make(map[string]int, len(objs))
	for i, o := range objs {
		idx[o.Key] = i
	}
	used := make([]bool, len(objs))
	out := make([]Object, 0, len(objs))
	for _, k := range first {
		if i, ok := idx[k]; ok && !used[i] {
			used[i] = true
			out = append(out, objs[i])
		}
	}
	for i, o := range objs {
		if !used[i] {
			out = append(out, o)
		}
	}
	return out
}

func malform(e watch.Event, how Malformation) watch.Event {
	switch how {
	case NilObject:
		e.Object = nil
	case WrongType:
		if m, ok := e.Object.(*metav1.PartialObjectMetadata); ok {
			u := &unstructured.Unstructured{Object: map[string]any{}}
			u.SetNamespace(m.Namespace)
			u.SetName(m.Name)
			u.SetResourceVersion(m.ResourceVersion)
			u.SetAnnotations(m.Annotations)
			e.Object = u
		}
	case NoRV, BadRV:
		if m, ok := e.Object.(*metav1.PartialObjectMetadata); ok {
			m.ResourceVersion = ""
			if how == BadRV {
				m.ResourceVersion = "not-a-number"
			}
		}
	}
	return e
}

// InitialEventsAnnotationKey marks the bookmark that ends a watch-list
// stream's initial events: metav1.InitialEventsAnnotationKey, spelled out
// because apimachinery names it only from v0.28 and this model is built
// against every release kverify checks (subjects/releases), watch-list
// itself being older (v0.27).
const InitialEventsAnnotationKey = "k8s.io/initial-events-end"
