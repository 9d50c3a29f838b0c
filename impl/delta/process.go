package delta

import (
	"errors"
	"fmt"
)

// Store is the informer's cache as Process writes it: client-go's Store
// without the key-only and resync methods. Objects are keyed by the store's
// own key function, which must accept a DeletedFinalStateUnknown (Deleted
// deltas carry them).
//
// A Store that also has a Bookmark(resourceVersion string) method is told
// of Bookmark deltas; one that is also a KeyListerGetter is listed by key
// when a ReplacedAll delta is reconciled (see Process).
type Store interface {
	Add(obj any) error
	Update(obj any) error
	Delete(obj any) error
	Get(obj any) (item any, exists bool, err error)
	List() []any
	Replace(list []any, resourceVersion string) error
}

// Handler receives the notifications Process derives from deltas:
// client-go's ResourceEventHandler.
type Handler interface {
	OnAdd(obj any, isInInitialList bool)
	OnUpdate(oldObj, newObj any)
	OnDelete(obj any)
}

// bookmarker is the optional Store method a Bookmark delta calls.
type bookmarker interface {
	Bookmark(resourceVersion string)
}

// Process applies ds, oldest first, to s and notifies h of each change:
// client-go's processDeltas (tools/cache/controller.go:823-881).
//
//   - Sync, Replaced, Added, Updated: if s has an object under the delta
//     object's key (Get succeeds and finds one), s.Update and
//     h.OnUpdate(stored, new); otherwise s.Add and h.OnAdd(new,
//     isInInitialList).
//   - Deleted: s.Delete and h.OnDelete(obj); obj may be a
//     DeletedFinalStateUnknown and is passed on as it is.
//   - ReplacedAll: see below.
//   - SyncAll: h.OnUpdate(o, o) for every object s.List returns.
//   - Bookmark: s.Bookmark(rv) if s has that method; nothing otherwise.
//
// ReplacedAll (client-go's processReplacedAllInfo, controller.go:972-1016)
// reconciles a whole relist against s. First, without touching s: the key
// of every listed object (with key; DeletionHandlingKey if nil) and every
// stored key (s.ListKeys if s is a KeyListerGetter, else key applied to
// each object of s.List); a stored key not listed becomes a deletion
// DeletedFinalStateUnknown{key, stored object} (the object is nil if
// GetByKey fails), in stored-key order; each listed object, in list order,
// is paired with the object s.Get finds for it, if any. Then s.Replace(list,
// rv); then every h.OnDelete; then, in list order, h.OnUpdate(stored, new)
// for a listed object that had one and h.OnAdd(new, isInInitialList) for
// one that had not. A key error, or a Replace error, returns before any
// notification.
//
// Process stops at the first error; the deltas before it stay applied and
// notified, as in client-go. A ReplacedAll, SyncAll or Bookmark delta whose
// object is not a ReplacedAllInfo, SyncAllInfo or BookmarkInfo is an error
// that leaves s untouched. Two differences from client-go: a SyncAll delta
// goes on with the deltas after it (client-go returns at once,
// controller.go:845-854, which no FIFO makes observable: RealFIFO pops one
// delta at a time), and a delta of an unknown type is an error (client-go
// skips it: its switch, controller.go:836-878, has no default case).
func Process(h Handler, s Store, ds Deltas, isInInitialList bool, key KeyFunc) error {
	if key == nil {
		key = DeletionHandlingKey
	}
	for _, d := range ds {
		obj := d.Object
		switch d.Type {
		case Sync, Replaced, Added, Updated:
			if old, exists, err := s.Get(obj); err == nil && exists {
				if err := s.Update(obj); err != nil {
					return err
				}
				h.OnUpdate(old, obj)
			} else {
				if err := s.Add(obj); err != nil {
					return err
				}
				h.OnAdd(obj, isInInitialList)
			}
		case Deleted:
			if err := s.Delete(obj); err != nil {
				return err
			}
			h.OnDelete(obj)
		case ReplacedAll:
			info, ok := obj.(ReplacedAllInfo)
			if !ok {
				return fmt.Errorf("ReplacedAll delta did not contain a ReplacedAllInfo: %T", obj)
			}
			if err := processReplacedAll(h, s, info, isInInitialList, key); err != nil {
				return err
			}
		case SyncAll:
			if _, ok := obj.(SyncAllInfo); !ok {
				return fmt.Errorf("SyncAll delta did not contain a SyncAllInfo: %T", obj)
			}
			for _, o := range s.List() {
				h.OnUpdate(o, o)
			}
		case Bookmark:
			info, ok := obj.(BookmarkInfo)
			if !ok {
				return fmt.Errorf("a Bookmark delta did not contain a BookmarkInfo: %T", obj)
			}
			if b, ok := s.(bookmarker); ok {
				b.Bookmark(info.ResourceVersion)
			}
		default:
			return fmt.Errorf("unknown delta type %q", d.Type)
		}
	}
	return nil
}

// ProcessBatch is Process for each delta of ds on its own, in order: every
// delta is attempted, and the errors are joined. It is client-go's
// processDeltasInBatch for a store without transactions
// (controller.go:892-915); stores here have none.
func ProcessBatch(h Handler, s Store, ds []Delta, isInInitialList bool, key KeyFunc) error {
	var errs []error
	for _, d := range ds {
		if err := Process(h, s, Deltas{d}, isInInitialList, key); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("unexpected error when handling deltas: %w", errors.Join(errs...))
	}
	return nil
}

// replacement is a listed object of a ReplacedAll and what s held for it.
type replacement struct {
	old, new any
	existed  bool
}

func processReplacedAll(h Handler, s Store, info ReplacedAllInfo, isInInitialList bool, key KeyFunc) error {
	listed := make(map[string]struct{}, len(info.Objects))
	for _, obj := range info.Objects {
		k, err := key(obj)
		if err != nil {
			return KeyError{obj, err}
		}
		listed[k] = struct{}{}
	}

	var deletions []DeletedFinalStateUnknown
	if kg, ok := s.(KeyListerGetter); ok {
		for _, k := range kg.ListKeys() {
			if _, ok := listed[k]; ok {
				continue
			}
			obj, exists, err := kg.GetByKey(k)
			if err != nil || !exists {
				obj = nil
			}
			deletions = append(deletions, DeletedFinalStateUnknown{Key: k, Obj: obj})
		}
	} else {
		for _, obj := range s.List() {
			k, err := key(obj)
			if err != nil {
				return KeyError{obj, err}
			}
			if _, ok := listed[k]; !ok {
				deletions = append(deletions, DeletedFinalStateUnknown{Key: k, Obj: obj})
			}
		}
	}

	replacements := make([]replacement, len(info.Objects))
	for i, obj := range info.Objects {
		r := replacement{new: obj}
		if old, exists, err := s.Get(obj); err == nil && exists {
			r.old, r.existed = old, true
		}
		replacements[i] = r
	}

	// The store first, so that it reflects what the handler is told.
	if err := s.Replace(info.Objects, info.ResourceVersion); err != nil {
		return err
	}
	for _, d := range deletions {
		h.OnDelete(d)
	}
	for _, r := range replacements {
		if r.existed {
			h.OnUpdate(r.old, r.new)
		} else {
			h.OnAdd(r.new, isInInitialList)
		}
	}
	return nil
}
