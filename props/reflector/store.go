package reflector

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/kverify/kverify/spec/apiserver"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Store is the recording store a reflector under test writes to: client-go's
// ReflectorStore, ResourceVersionUpdater and ReflectorBookmarkStore. It keeps
// the objects by key with their versions, the versions the reflector
// notified, and every object it was given that is not a well-formed
// *metav1.PartialObjectMetadata with a numeric version.
type Store struct {
	mu        sync.Mutex
	items     map[string]int64
	rv        string   // from the last Replace or UpdateResourceVersion
	notified  []string // every UpdateResourceVersion, in order
	replaces  []string // the version of every Replace call, in order
	bookmarks int
	resyncs   int
	malformed []string
	// FailReplace and FailResync make the next calls fail while they are
	// positive (each failure counts one down).
	FailReplace, FailResync int
	failed                  int // Replace and Resync calls that failed
}

// failures is the number of Replace and Resync calls that failed so far.
func (s *Store) failures() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failed
}

// NewStore returns an empty recording store.
func NewStore() *Store { return &Store{items: map[string]int64{}} }

func (s *Store) key(obj any, op string) (string, int64, bool) {
	// Each malformation is named apart (no object, the wrong type, an
	// empty version, a version that is not a number), so that a declared
	// divergence can excuse exactly the ones a subject stores.
	m, ok := obj.(*metav1.PartialObjectMetadata)
	if !ok {
		if obj == nil {
			s.malformed = append(s.malformed, fmt.Sprintf("%s of no object (nil)", op))
		} else {
			s.malformed = append(s.malformed, fmt.Sprintf("%s of an object of the wrong type %T", op, obj))
		}
		return "", 0, false
	}
	rv, err := strconv.ParseInt(m.ResourceVersion, 10, 64)
	if err != nil {
		if m.ResourceVersion == "" {
			s.malformed = append(s.malformed, fmt.Sprintf("%s of %s with an empty version", op, m.Name))
		} else {
			s.malformed = append(s.malformed, fmt.Sprintf("%s of %s with the non-numeric version %q", op, m.Name, m.ResourceVersion))
		}
		return "", 0, false
	}
	return metaKey(m), rv, true
}

// metaKey is the object's key as the server keys it ("ns/name", or
// "name" without a namespace: client-go's MetaNamespaceKeyFunc).
func metaKey(m *metav1.PartialObjectMetadata) string {
	if m.Namespace == "" {
		return m.Name
	}
	return m.Namespace + "/" + m.Name
}

// Add stores obj.
func (s *Store) Add(obj any) error { return s.put(obj, "Add") }

// Update stores obj.
func (s *Store) Update(obj any) error { return s.put(obj, "Update") }

func (s *Store) put(obj any, op string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if k, rv, ok := s.key(obj, op); ok {
		s.items[k] = rv
	}
	return nil
}

// Delete removes obj's key.
func (s *Store) Delete(obj any) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if k, _, ok := s.key(obj, "Delete"); ok {
		delete(s.items, k)
	}
	return nil
}

// Replace replaces the content and records the version.
func (s *Store) Replace(list []any, rv string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replaces = append(s.replaces, rv) // every attempt, failed or not
	if s.FailReplace > 0 {
		s.FailReplace--
		s.failed++
		return fmt.Errorf("recording store: Replace fails (fault)")
	}
	items := make(map[string]int64, len(list))
	for _, obj := range list {
		if k, v, ok := s.key(obj, "Replace"); ok {
			items[k] = v
		}
	}
	s.items, s.rv = items, rv
	return nil
}

// Resync counts the call.
func (s *Store) Resync() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.resyncs++
	if s.FailResync > 0 {
		s.FailResync--
		s.failed++
		return fmt.Errorf("recording store: Resync fails (fault)")
	}
	return nil
}

// UpdateResourceVersion records a published version.
func (s *Store) UpdateResourceVersion(rv string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rv = rv
	s.notified = append(s.notified, rv)
}

// Bookmark counts a bookmark.
func (s *Store) Bookmark(string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.bookmarks++
	return nil
}

// StoreState is a snapshot of a recording store.
type StoreState struct {
	Items     map[string]int64
	RV        string
	Notified  []string
	Replaces  []string
	Resyncs   int
	Bookmarks int
	Malformed []string
}

// State returns a copy of the store's state.
func (s *Store) State() StoreState {
	s.mu.Lock()
	defer s.mu.Unlock()
	return StoreState{Items: maps.Clone(s.items), RV: s.rv, Notified: slices.Clone(s.notified),
		Replaces: slices.Clone(s.replaces), Resyncs: s.resyncs, Bookmarks: s.bookmarks, Malformed: slices.Clone(s.malformed)}
}

// diff compares the store's items with the server's objects; "" when equal.
func diff(items map[string]int64, objs []apiserver.Object) string {
	var b strings.Builder
	n := 0
	fmt1 := func(format string, args ...any) {
		if n++; n <= 8 {
			fmt.Fprintf(&b, format, args...)
		}
	}
	want := make(map[string]int64, len(objs))
	for _, o := range objs {
		want[o.Key] = o.RV
		got, ok := items[o.Key]
		switch {
		case !ok:
			fmt1(" missing %s@%d;", o.Key, o.RV)
		case got != o.RV:
			fmt1(" stale %s@%d (server %d);", o.Key, got, o.RV)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(items)) {
		if _, ok := want[k]; !ok {
			fmt1(" ghost %s@%d;", k, items[k])
		}
	}
	if n > 8 {
		fmt.Fprintf(&b, " and %d more", n-8)
	}
	return strings.TrimSpace(b.String())
}
