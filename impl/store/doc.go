// Package store is the informer's cache in its simplest form: a
// mutex-guarded map from key to object (client-go's cache over a
// threadSafeMap, tools/cache/store.go, without indexes or transactions).
//
// A Store is a delta.Store, so delta.Process writes it, and a
// delta.KeyListerGetter, so a FIFO can use it as its known objects. It
// also keeps the last resource version it saw (Bookmark, Replace, and the
// metadata of objects added, updated or deleted), as client-go's
// threadSafeMap does.
//
// Decisions:
//   - An object whose key cannot be computed, or a nil or typed-nil
//     object, is a delta.KeyError and changes nothing; the key function is
//     never called with a nil.
//   - Replace is all or nothing: every key is computed before the content
//     is swapped (client-go does the same, store.go:369-388).
//   - List and ListKeys return map order: no order is promised. Callers
//     that need one sort.
//   - Objects are stored as given; the store never copies or mutates them.
package store
