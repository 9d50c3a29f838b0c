package store

import (
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/kverify/kverify/impl/delta"
)

// Store is a map from key to object, safe for concurrent use. It is a
// delta.Store, a delta.KeyListerGetter and has Bookmark, so it can serve an
// informer both as the cache Process writes and as a FIFO's known objects.
// The zero value is not usable; call New.
type Store struct {
	key delta.KeyFunc

	mu    sync.RWMutex
	items map[string]any
	rv    string
}

var (
	_ delta.Store           = (*Store)(nil)
	_ delta.KeyListerGetter = (*Store)(nil)
)

// New returns an empty store keyed by key (delta.DeletionHandlingKey if
// nil).
func New(key delta.KeyFunc) *Store {
	if key == nil {
		key = delta.DeletionHandlingKey
	}
	return &Store{key: key, items: map[string]any{}}
}

// keyOf is the store's key of obj, or a delta.KeyError. A nil or typed-nil
// object is an error without calling the key function.
func (s *Store) keyOf(obj any) (string, error) {
	if delta.IsNil(obj) {
		return "", delta.KeyError{Obj: obj, Err: delta.ErrNil}
	}
	k, err := s.key(obj)
	if err != nil {
		return "", delta.KeyError{Obj: obj, Err: err}
	}
	return k, nil
}

// Add stores obj under its key, replacing what was there. If obj has
// metadata, its resource version becomes the store's last one.
func (s *Store) Add(obj any) error { return s.Update(obj) }

// Update is Add.
func (s *Store) Update(obj any) error {
	k, err := s.keyOf(obj)
	if err != nil {
		return err
	}
	rv, hasRV := resourceVersion(obj)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.items[k] = obj
	if hasRV {
		s.rv = rv
	}
	return nil
}

// Delete removes the object under obj's key (a DeletedFinalStateUnknown is
// keyed by its Key with the default key function). Deleting a key that is
// not stored is not an error. If obj has metadata, its resource version
// becomes the store's last one.
func (s *Store) Delete(obj any) error {
	k, err := s.keyOf(obj)
	if err != nil {
		return err
	}
	rv, hasRV := resourceVersion(obj)
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.items, k)
	if hasRV {
		s.rv = rv
	}
	return nil
}

// Get returns the object stored under obj's key.
func (s *Store) Get(obj any) (item any, exists bool, err error) {
	k, err := s.keyOf(obj)
	if err != nil {
		return nil, false, err
	}
	return s.GetByKey(k)
}

// GetByKey returns the object stored under key. Its error is always nil.
func (s *Store) GetByKey(key string) (item any, exists bool, err error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	item, exists = s.items[key]
	return item, exists, nil
}

// List returns the stored objects, in no particular order (map order).
func (s *Store) List() []any {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]any, 0, len(s.items))
	for _, obj := range s.items {
		out = append(out, obj)
	}
	return out
}

// ListKeys returns the stored keys, in no particular order (map order).
func (s *Store) ListKeys() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]string, 0, len(s.items))
	for k := range s.items {
		out = append(out, k)
	}
	return out
}

// Len returns the number of stored objects.
func (s *Store) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.items)
}

// Replace makes list the store's whole content and resourceVersion its
// last resource version. Every key is computed first: if one fails, Replace
// returns its delta.KeyError and the store is unchanged. Of listed objects
// sharing a key, the last one is kept. The store keeps list's objects, not
// list itself.
func (s *Store) Replace(list []any, resourceVersion string) error {
	items := make(map[string]any, len(list))
	for _, obj := range list {
		k, err := s.keyOf(obj)
		if err != nil {
			return err
		}
		items[k] = obj
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.items = items
	s.rv = resourceVersion
	return nil
}

// Bookmark records resourceVersion as the store's last resource version.
func (s *Store) Bookmark(resourceVersion string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rv = resourceVersion
}

// LastResourceVersion returns the last resource version the store saw:
// from Replace, Bookmark, or the metadata of the last object added,
// updated or deleted (client-go's LastStoreSyncResourceVersion, without
// its feature gate).
func (s *Store) LastResourceVersion() string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.rv
}

// resourceVersion reads obj's resource version, if it has metadata. A
// DeletedFinalStateUnknown has none.
func resourceVersion(obj any) (string, bool) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return "", false
	}
	return m.GetResourceVersion(), true
}
