// Package apiserver is the reference model of the server side of LIST and
// WATCH for one resource: a kube-apiserver over etcd3 with its watch cache,
// as metav1.ListOptions documents it and as the real stack was observed to
// behave (../shared/reference/real-apiserver.md §4-5, upstream-behaviour.md §5).
//
// The model is pure: no goroutines, no clock, no randomness. Every choice a
// real server makes on its own is an input: the snapshot a request for "any"
// version is served from (ListChoice.At, WatchChoice.At), the order of the
// synthetic initial ADDED events (WatchChoice.Order), when bookmarks are due
// (Server.Bookmark), and every fault (refusals, early closes, ERROR events,
// a missing end bookmark, malformed events). A Server is not safe for
// concurrent use; an adapter that serves it to a reflector holds a lock.
//
// Resource versions are int64, one per write, strictly increasing. The
// server starts at RV 1 with nothing stored. Progress advances the RV
// without an event for this resource (a write to another resource in the
// same etcd), so a list's RV may be newer than every object in it.
//
// Compaction is a rule for new requests: a replay from, an exact read at or
// a continue token for an RV below the compaction point is Expired (410).
// The model keeps its whole history, so watches opened before a compaction
// keep receiving their events and Snapshot answers for any RV (oracle
// access, not a request).
//
// Objects are *metav1.PartialObjectMetadata with a name, an optional
// namespace and a resource version; keys are client-go's
// MetaNamespaceKeyFunc keys ("ns/name", or "name" without a namespace), and
// lists and initial events are in key order, which is the storage order.
package apiserver

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// Config is the fixed configuration of a server.
type Config struct {
	// NoWatchList models a server whose WatchList feature gate is off:
	// watch requests are not defaulted to sendInitialEvents, and a request
	// that sets sendInitialEvents is refused with the 400 Invalid error of
	// apimachinery's ListOptions validation ("sendInitialEvents is forbidden
	// for watch unless the WatchList feature gate is enabled").
	NoWatchList bool
}

// Object is one stored state of an object: its key and the resource
// version of the write that produced it.
type Object struct {
	Key string
	RV  int64
}

func (o Object) String() string { return fmt.Sprintf("%s@%d", o.Key, o.RV) }

// Meta returns the object as the server serves it: a fresh
// *metav1.PartialObjectMetadata with the key's namespace and name and the
// resource version.
func (o Object) Meta() *metav1.PartialObjectMetadata {
	return newMeta(o.Key, o.RV)
}

// ErrInvalidKey is returned by writes whose key is not "name" or
// "namespace/name" with non-empty parts.
var ErrInvalidKey = errors.New("apiserver: invalid key")

// ErrConflict is returned by a Create of a stored key, and an Update or
// Delete of a key that is not stored.
var ErrConflict = errors.New("apiserver: conflict")

// ErrBadChoice is returned when a choice given with a request is not one
// the semantics allow (for example a stale snapshot for a consistent read,
// or a snapshot RV outside [1, current]). It is a test bug, not a server
// answer; the request is still recorded.
var ErrBadChoice = errors.New("apiserver: choice not allowed for this request")

// ErrUnsupported is returned for label or field selectors, which the model
// does not implement.
var ErrUnsupported = errors.New("apiserver: label and field selectors are not supported")

// entry is one element of the history: a write (Added, Modified, Deleted
// with the object's key) or a bookmark opportunity (Bookmark, no key).
type entry struct {
	typ watch.EventType
	key string
	rv  int64
}

// Server is the model server. Create it with New.
type Server struct {
	cfg       Config
	rv        int64              // current resource version
	compacted int64              // RVs below this are forgotten for requests
	objects   map[string]int64   // current state: key -> RV
	log       []entry            // every write and bookmark opportunity, RV order
	creates   map[string][]int64 // every create's RV, by key, in order
	calls     []Call
	watches   int // watches opened so far; the last one's ID

	memoRV int64    // RV of memo, 0 if none
	memo   []Object // the state at memoRV, key order
}

// New returns an empty server at RV 1.
func New(cfg Config) *Server {
	return &Server{cfg: cfg, rv: 1, objects: map[string]int64{}, creates: map[string][]int64{}}
}

// RV returns the current resource version.
func (s *Server) RV() int64 { return s.rv }

// Compacted returns the compaction point (0 if never compacted).
func (s *Server) Compacted() int64 { return s.compacted }

// Create stores a new object at key and returns the new RV.
func (s *Server) Create(key string) (int64, error) {
	if err := checkKey(key); err != nil {
		return 0, err
	}
	if _, ok := s.objects[key]; ok {
		return 0, fmt.Errorf("%w: create %q: exists", ErrConflict, key)
	}
	return s.write(watch.Added, key), nil
}

// Update writes a new state of the object at key and returns the new RV.
func (s *Server) Update(key string) (int64, error) {
	if _, ok := s.objects[key]; !ok {
		return 0, fmt.Errorf("%w: update %q: not found", ErrConflict, key)
	}
	return s.write(watch.Modified, key), nil
}

// Delete removes the object at key and returns the new RV, which the
// DELETED event's object carries (as etcd3's watcher sets it).
func (s *Server) Delete(key string) (int64, error) {
	if _, ok := s.objects[key]; !ok {
		return 0, fmt.Errorf("%w: delete %q: not found", ErrConflict, key)
	}
	return s.write(watch.Deleted, key), nil
}

func (s *Server) write(t watch.EventType, key string) int64 {
	s.rv++
	switch t {
	case watch.Deleted:
		delete(s.objects, key)
	case watch.Added:
		s.creates[key] = append(s.creates[key], s.rv)
		fallthrough
	default:
		s.objects[key] = s.rv
	}
	s.log = append(s.log, entry{typ: t, key: key, rv: s.rv})
	return s.rv
}

// Created returns the version at which the object at key was created
// whose state (or whose deletion) has version rv: the last create of key
// at or below rv, 0 if there is none. An object's identity (a UID) is its
// key and its creation: deleted and created again, it is another object.
func (s *Server) Created(key string, rv int64) int64 {
	cs := s.creates[key]
	i := sort.Search(len(cs), func(i int) bool { return cs[i] > rv })
	if i == 0 {
		return 0
	}
	return cs[i-1]
}

// Progress advances the RV by one without an event for this resource (a
// write to another resource) and returns the new RV.
func (s *Server) Progress() int64 {
	s.rv++
	return s.rv
}

// Bookmark makes a bookmark due at the current RV: every watch open now
// that allows bookmarks and started before this RV (its snapshot or
// requested RV is lower) receives a BOOKMARK event at it, in history order.
// This is the watch cache's rule (cache_watcher.go: a bookmark is sent when
// its RV is newer than the watcher's starting RV), so a bookmark may repeat
// the RV of the event just before it. Watches opened later never see it.
func (s *Server) Bookmark() {
	s.log = append(s.log, entry{typ: watch.Bookmark, rv: s.rv})
}

// Compact forgets the history at or below rv for new requests: a replay
// from, an exact read at or a continue token for an RV below rv is Expired.
// rv must be between the current compaction point and the current RV.
func (s *Server) Compact(rv int64) error {
	if rv < s.compacted || rv > s.rv {
		return fmt.Errorf("apiserver: compact to %d outside [%d, %d]", rv, s.compacted, s.rv)
	}
	s.compacted = rv
	return nil
}

// Snapshot returns the stored objects at rv in key order, whatever the
// compaction point (oracle access, not recorded). rv must be in [1, RV()].
func (s *Server) Snapshot(rv int64) ([]Object, error) {
	if rv < 1 || rv > s.rv {
		return nil, fmt.Errorf("apiserver: snapshot at %d outside [1, %d]", rv, s.rv)
	}
	return slices.Clone(s.snapshot(rv)), nil
}

// snapshot returns the state at rv, in key order. The result is shared:
// the state at an RV never changes once the server has reached it.
func (s *Server) snapshot(rv int64) []Object {
	if s.memoRV == rv {
		return s.memo
	}
	state := s.objects
	if rv != s.rv {
		state = map[string]int64{}
		for _, e := range s.log[:s.after(rv)] {
			switch e.typ {
			case watch.Added, watch.Modified:
				state[e.key] = e.rv
			case watch.Deleted:
				delete(state, e.key)
			}
		}
	}
	objs := make([]Object, 0, len(state))
	for k, v := range state {
		objs = append(objs, Object{Key: k, RV: v})
	}
	slices.SortFunc(objs, func(a, b Object) int { return strings.Compare(a.Key, b.Key) })
	s.memoRV, s.memo = rv, objs
	return objs
}

// after returns the index of the first history entry with an RV above rv.
func (s *Server) after(rv int64) int {
	return sort.Search(len(s.log), func(i int) bool { return s.log[i].rv > rv })
}

// choose returns the RV a request is served at: the current RV if at is 0,
// else at, which must lie in [max(min, 1), RV()].
func (s *Server) choose(at, min int64) (int64, error) {
	if at == 0 {
		return s.rv, nil
	}
	if at < max(min, 1) || at > s.rv {
		return 0, fmt.Errorf("%w: snapshot at %d outside [%d, %d]", ErrBadChoice, at, max(min, 1), s.rv)
	}
	return at, nil
}

func checkKey(key string) error {
	ns, name, found := strings.Cut(key, "/")
	if !found {
		ns, name = "", key
	}
	if name == "" || (found && ns == "") || strings.Contains(name, "/") {
		return fmt.Errorf("%w: %q", ErrInvalidKey, key)
	}
	return nil
}

func newMeta(key string, rv int64) *metav1.PartialObjectMetadata {
	ns, name, found := strings.Cut(key, "/")
	if !found {
		ns, name = "", key
	}
	return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
		Namespace:       ns,
		Name:            name,
		ResourceVersion: strconv.FormatInt(rv, 10),
	}}
}

// CallKind names a recorded call.
type CallKind uint8

// The recorded calls.
const (
	ListCall CallKind = iota
	WatchCall
	StopCall
)

func (k CallKind) String() string {
	switch k {
	case ListCall:
		return "List"
	case WatchCall:
		return "Watch"
	case StopCall:
		return "Stop"
	}
	return fmt.Sprintf("CallKind(%d)", k)
}

// Call is one recorded call: a List or Watch request with its options as
// the client sent them (a deep copy, before any server defaulting) and the
// error it returned, or a Stop of a watch. Watch is the watch's ID for a
// successful Watch and for a Stop, else 0.
type Call struct {
	Kind    CallKind
	Options metav1.ListOptions
	Watch   int
	Err     error
}

// Calls returns every call so far, in order. Every List and Watch is
// recorded, including refused and invalid ones; every Stop is recorded,
// including repeated ones.
func (s *Server) Calls() []Call { return slices.Clone(s.calls) }

func (s *Server) record(k CallKind, opts *metav1.ListOptions, id int, err error) {
	c := Call{Kind: k, Watch: id, Err: err}
	if opts != nil {
		c.Options = *opts.DeepCopy()
	}
	s.calls = append(s.calls, c)
}
