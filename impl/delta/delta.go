package delta

import (
	"errors"
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/api/meta"
)

// Type is the kind of change a Delta records.
type Type string

// The delta types, spelled as client-go spells them.
const (
	Added   Type = "Added"
	Updated Type = "Updated"
	Deleted Type = "Deleted"
	// Replaced is emitted for an object of a relist when the FIFO is
	// asked to (DeltaFIFO's EmitReplaced, RealFIFO's non-atomic mode).
	Replaced Type = "Replaced"
	// Sync is a periodic resync of a known object, or, in a DeltaFIFO
	// without EmitReplaced, an object of a relist.
	Sync Type = "Sync"
	// ReplacedAll carries a whole relist (ReplacedAllInfo): RealFIFO's
	// atomic mode.
	ReplacedAll Type = "ReplacedAll"
	// SyncAll asks for a resync of every stored object (SyncAllInfo):
	// RealFIFO's atomic mode.
	SyncAll Type = "SyncAll"
	// Bookmark carries a resource version (BookmarkInfo).
	Bookmark Type = "Bookmark"
)

// Delta is one change: its type and the object after the change (for
// Deleted: the last state known, possibly a DeletedFinalStateUnknown).
type Delta struct {
	Type   Type
	Object any
}

// Deltas is the list of changes for one key, oldest first.
type Deltas []Delta

// Oldest is the oldest delta, or nil if there is none.
func (d Deltas) Oldest() *Delta {
	if len(d) > 0 {
		return &d[0]
	}
	return nil
}

// Newest is the newest delta, or nil if there is none.
func (d Deltas) Newest() *Delta {
	if n := len(d); n > 0 {
		return &d[n-1]
	}
	return nil
}

// DeletedFinalStateUnknown is the object of a Deleted delta that a relist
// inferred: the object disappeared while we were not watching, so Obj is the
// last state we knew, which may be stale, or nil if we knew none.
type DeletedFinalStateUnknown struct {
	Key string
	Obj any
}

// ReplacedAllInfo is the object of a ReplacedAll delta.
type ReplacedAllInfo struct {
	ResourceVersion string
	Objects         []any
}

// SyncAllInfo is the object of a SyncAll delta.
type SyncAllInfo struct{}

// BookmarkInfo is the object of a Bookmark delta.
type BookmarkInfo struct {
	ResourceVersion string
}

// KeyFunc computes an object's key.
type KeyFunc func(obj any) (string, error)

// TransformFunc transforms an object before a FIFO stores it.
type TransformFunc func(obj any) (any, error)

// KeyListerGetter is what a FIFO knows about objects it has already handed
// out: the informer's store. Its method set is client-go's, so a client-go
// store can serve as one.
type KeyListerGetter interface {
	ListKeys() []string
	GetByKey(key string) (value any, exists bool, err error)
}

// PopProcessFunc processes the deltas Pop hands out. isInInitialList tells
// whether they belong to the initial population (the first Replace).
type PopProcessFunc func(obj any, isInInitialList bool) error

// ErrClosed is returned by Pop once the FIFO is closed and empty.
var ErrClosed = errors.New("fifo: closed and empty")

// ErrZeroLengthDeltas is the error of a FIFO's KeyOf given an empty Deltas,
// which has no newest object to take the key of.
var ErrZeroLengthDeltas = errors.New("0 length Deltas object; can't get key")

// KeyError is the error of an operation given an object whose key cannot
// be computed. The FIFO is left as it was.
type KeyError struct {
	Obj any
	Err error
}

// Error describes the object and the key function's error.
func (e KeyError) Error() string {
	return fmt.Sprintf("couldn't create key for object %+v: %v", e.Obj, e.Err)
}

// Unwrap returns the key function's error.
func (e KeyError) Unwrap() error { return e.Err }

// MetaNamespaceKey is the default key function: "namespace/name", or
// "name" for an object without a namespace, read through meta.Accessor.
// A nil object, an object without metadata and one without a name are
// errors.
func MetaNamespaceKey(obj any) (string, error) {
	if obj == nil {
		return "", errors.New("nil object")
	}
	if v := reflect.ValueOf(obj); v.Kind() == reflect.Pointer && v.IsNil() {
		// meta.Accessor accepts a nil *T whose methods would panic.
		return "", fmt.Errorf("nil %T", obj)
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return "", fmt.Errorf("object has no meta: %w", err)
	}
	if m.GetName() == "" {
		return "", errors.New("object has no name")
	}
	if ns := m.GetNamespace(); ns != "" {
		return ns + "/" + m.GetName(), nil
	}
	return m.GetName(), nil
}

// IsNil reports whether obj is nil or a typed nil: a nil pointer, map,
// slice, func or channel in an interface. The FIFOs and the store reject
// such an object with a KeyError before any key function sees it, so a key
// function that would dereference it never panics.
func IsNil(obj any) bool {
	if obj == nil {
		return true
	}
	switch v := reflect.ValueOf(obj); v.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.UnsafePointer:
		return v.IsNil()
	}
	return false
}

// DeletionHandlingKey is MetaNamespaceKey that also takes a
// DeletedFinalStateUnknown, whose key is its Key.
func DeletionHandlingKey(obj any) (string, error) {
	if d, ok := obj.(DeletedFinalStateUnknown); ok {
		return d.Key, nil
	}
	return MetaNamespaceKey(obj)
}

// ErrNil is the cause of the KeyError for a nil or typed-nil object.
var ErrNil = errors.New("nil object")

// KeyOf is the key a FIFO files obj under: that of the newest object of a
// Deltas (an empty one is ErrZeroLengthDeltas), of the object of a Delta,
// the Key of a DeletedFinalStateUnknown, else key's. A nil or typed-nil
// object is ErrNil, before key sees it.
func KeyOf(key KeyFunc, obj any) (string, error) {
	if d, ok := obj.(Deltas); ok {
		if len(d) == 0 {
			return "", ErrZeroLengthDeltas
		}
		obj = d.Newest().Object
	}
	if d, ok := obj.(Delta); ok {
		obj = d.Object
	}
	if d, ok := obj.(DeletedFinalStateUnknown); ok {
		return d.Key, nil
	}
	if IsNil(obj) {
		return "", ErrNil
	}
	return key(obj)
}

// Transformed applies transform (if any) to obj, unless obj is a
// DeletedFinalStateUnknown: a tombstone carries a state already transformed.
func Transformed(transform TransformFunc, obj any) (any, error) {
	if transform == nil {
		return obj, nil
	}
	if _, tomb := obj.(DeletedFinalStateUnknown); tomb {
		return obj, nil
	}
	return transform(obj)
}
