// Package fifo is the conformance suite for informer queues: client-go's
// DeltaFIFO (component "deltafifo") and RealFIFO (component "realfifo"),
// and the processing an informer runs on what they pop (processDeltas),
// checked against the models in spec/fifo.
//
// A subject puts its FIFO behind the FIFO interface and translates its own
// delta and tombstone types into this package's (Delta, Tombstone,
// ReplacedAll, Bookmark, SyncAll); objects stay the suite's own
// *metav1.PartialObjectMetadata values. Give Checks a Subject
// (Subject.Real selects RealFIFO's checks) and run the result with
// props.Run:
//
//	props.Run(t, fifo.Checks(subject))
package fifo

import (
	"sort"
	"sync"
	"time"
)

// Components, as kverify names them.
const (
	DeltaComponent = "deltafifo"
	RealComponent  = "realfifo"
)

// Delta is one delta as the suite sees it: Type is client-go's spelling
// ("Added", "Deleted", "ReplacedAll", ...); Object is the suite's object,
// a Tombstone, a ReplacedAll, a Bookmark or a SyncAll.
type Delta struct {
	Type   string
	Object any
}

// Tombstone is a DeletedFinalStateUnknown: Obj is the last state known,
// nil if none.
type Tombstone struct {
	Key string
	Obj any
}

// ReplacedAll is the object of a ReplacedAll delta.
type ReplacedAll struct {
	ResourceVersion string
	Objects         []any
}

// Bookmark is the object of a Bookmark delta.
type Bookmark struct{ ResourceVersion string }

// SyncAll is the object of a SyncAll delta.
type SyncAll struct{}

// Known is what a FIFO consults about the objects it handed out (the
// informer's store): client-go's KeyListerGetter.
type Known interface {
	ListKeys() []string
	GetByKey(key string) (any, bool, error)
}

// Options are the FIFO options a check asks for. A subject maps them to
// its own; New returns an error for a combination it rejects.
type Options struct {
	// Known is the FIFO's known objects; nil for none.
	Known Known
	// EmitReplaced makes a DeltaFIFO's Replace emit Replaced, not Sync.
	EmitReplaced bool
	// Transform, if set, is applied to objects before they are queued.
	Transform func(any) (any, error)
	// Atomic, Unlock and Bookmarks are RealFIFO's AtomicEvents,
	// UnlockWhileProcessing and EmitDeltaTypeBookmark.
	Atomic, Unlock, Bookmarks bool
	// OnSlow, if set, is to be called for each slow pop (see
	// Subject.ReportsSlow) with the popped key, the depth left queued and
	// the time its process func took.
	OnSlow func(key string, depth int, took time.Duration)
}

// FIFO is the method set the suite drives. Pop's process func and its
// result speak the suite's Delta.
type FIFO interface {
	Add(obj any) error
	Update(obj any) error
	Delete(obj any) error
	Replace(list []any, resourceVersion string) error
	Resync() error
	Pop(process func(ds []Delta, isInInitialList bool) error) ([]Delta, error)
	Close()
	IsClosed() bool
	HasSynced() bool
	// Done is closed once the FIFO has synced. The suite reads it from
	// inside process funcs, where a FIFO that processes under its lock
	// cannot be asked HasSynced.
	Done() <-chan struct{}
}

// Batcher is a FIFO with RealFIFO's PopBatch and Bookmark.
type Batcher interface {
	FIFO
	PopBatch(batch func(ds []Delta, isInInitialList bool) error, single func(ds []Delta, isInInitialList bool) error) error
	Bookmark(resourceVersion string) error
}

// Handler receives an informer's notifications.
type Handler interface {
	OnAdd(obj any, isInInitialList bool)
	OnUpdate(oldObj, newObj any)
	OnDelete(obj any)
}

// Store is the informer's store as processing uses it, with the key
// listing and lookup a FIFO's Known uses. The suite's store (NewStore) keys
// objects by name and tombstones by their key.
type Store interface {
	Known
	Add(obj any) error
	Update(obj any) error
	Delete(obj any) error
	Get(obj any) (item any, exists bool, err error)
	List() []any
	Replace(list []any, resourceVersion string) error
}

// Subject is a FIFO implementation under test.
type Subject struct {
	// New returns an empty FIFO with the options, or an error for options
	// it rejects.
	New func(Options) (FIFO, error)
	// Process, if set, is the subject's processDeltas: it applies popped
	// deltas to store and notifies h. The suite's store is also the FIFO's
	// Known, as in an informer. Nil: the pipeline checks are not offered.
	Process func(h Handler, store Store, ds []Delta, isInInitialList bool) error
	// Real says the subject is a RealFIFO (PopBatch, atomic mode).
	Real bool
	// ReportsSlow says the subject calls Options.OnSlow after a pop that
	// left more than 10 keys or deltas queued and whose process func took
	// more than 100 ms (client-go's trace condition). False: the slow check
	// is not applicable.
	ReportsSlow bool
}

// MapStore is the suite's store: a map from key to object, safe for
// concurrent use, listing keys sorted. It serves as a FIFO's Known and as
// the Store a subject's Process writes.
type MapStore struct {
	mu   sync.Mutex
	objs map[string]any
	rv   string
}

// NewStore returns an empty MapStore.
func NewStore() *MapStore { return &MapStore{objs: map[string]any{}} }

// StoreKey is the suite's key function: an object's name, a tombstone's key.
func StoreKey(obj any) (string, error) {
	if t, ok := obj.(Tombstone); ok {
		return t.Key, nil
	}
	return keyOf(obj)
}

// Add stores obj.
func (s *MapStore) Add(obj any) error { return s.Update(obj) }

// Update stores obj.
func (s *MapStore) Update(obj any) error {
	k, err := StoreKey(obj)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.objs[k] = obj
	return nil
}

// Delete removes obj's key.
func (s *MapStore) Delete(obj any) error {
	k, err := StoreKey(obj)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.objs, k)
	return nil
}

// Get returns the object stored under obj's key.
func (s *MapStore) Get(obj any) (any, bool, error) {
	k, err := StoreKey(obj)
	if err != nil {
		return nil, false, err
	}
	return s.GetByKey(k)
}

// GetByKey returns the object stored under key.
func (s *MapStore) GetByKey(key string) (any, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.objs[key]
	return o, ok, nil
}

// ListKeys returns the stored keys, sorted.
func (s *MapStore) ListKeys() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	keys := make([]string, 0, len(s.objs))
	for k := range s.objs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// List returns the stored objects in key order.
func (s *MapStore) List() []any {
	keys := s.ListKeys()
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]any, 0, len(keys))
	for _, k := range keys {
		if o, ok := s.objs[k]; ok {
			out = append(out, o)
		}
	}
	return out
}

// Replace replaces the contents with list.
func (s *MapStore) Replace(list []any, rv string) error {
	objs := make(map[string]any, len(list))
	for _, o := range list {
		k, err := StoreKey(o)
		if err != nil {
			return err
		}
		objs[k] = o
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.objs, s.rv = objs, rv
	return nil
}

// Bookmark records a resource version.
func (s *MapStore) Bookmark(rv string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rv = rv
}

// RV is the last resource version recorded by Replace or Bookmark.
func (s *MapStore) RV() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rv
}

// set replaces the contents without a resource version (the machine's
// copy of the model's store).
func (s *MapStore) set(objs map[string]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.objs = objs
}
