package fifo

import "fmt"

// Event is a handler notification: OnAdd(New, Initial), OnUpdate(Old, New)
// or OnDelete(New), where a deletion's object may be a tombstone.
type Event struct {
	Kind      string // "add", "update", "delete"
	Old, New  Obj
	Tombstone bool // delete of a tombstone
	HasObj    bool // for a tombstone: it carries an object
	Initial   bool // add: isInInitialList
}

func (e Event) String() string {
	switch e.Kind {
	case "add":
		return fmt.Sprintf("add(%s,%t)", e.New, e.Initial)
	case "update":
		return fmt.Sprintf("update(%s->%s)", e.Old, e.New)
	}
	if e.Tombstone && !e.HasObj {
		return fmt.Sprintf("delete(DFSU %s <nil>)", e.New.Key)
	}
	if e.Tombstone {
		return fmt.Sprintf("delete(DFSU %s)", e.New)
	}
	return fmt.Sprintf("delete(%s)", e.New)
}

// Store is the model of an informer's store (the indexer) and the
// processing of popped deltas into it (processDeltas): Sync, Replaced,
// Added and Updated store the object and notify an update of the stored
// object if there was one, else an add; Deleted removes the key and
// notifies the delete with the delta's object; ReplacedAll replaces the
// whole store and notifies deletes (tombstones carrying the stored object,
// in sorted key order) for stored keys not listed, then an add or update per
// listed object in list order; SyncAll notifies update(o, o) for every
// stored object (sorted); Bookmark records its resource version.
type Store struct {
	Objects Known
	RV      string
}

// NewStore returns an empty store.
func NewStore() *Store { return &Store{Objects: Known{}} }

// Process applies ds and returns the notifications, in order.
func (s *Store) Process(ds []Delta, initial bool) []Event {
	var out []Event
	for _, d := range ds {
		switch d.Type {
		case ReplacedAll:
			listed := map[string]bool{}
			for _, o := range d.Objects {
				listed[o.Key] = true
			}
			var ups []Event
			for _, o := range d.Objects {
				if old, ok := s.Objects[o.Key]; ok {
					ups = append(ups, Event{Kind: "update", Old: old, New: o})
				} else {
					ups = append(ups, Event{Kind: "add", New: o, Initial: initial})
				}
			}
			for _, k := range s.Objects.Keys() {
				if !listed[k] {
					o := s.Objects[k]
					out = append(out, Event{Kind: "delete", New: o, Tombstone: true, HasObj: true})
				}
			}
			s.Objects = Known{}
			for _, o := range d.Objects {
				s.Objects[o.Key] = o
			}
			s.RV = d.RV
			out = append(out, ups...)
		case SyncAll:
			for _, k := range s.Objects.Keys() {
				o := s.Objects[k]
				out = append(out, Event{Kind: "update", Old: o, New: o})
			}
		case Bookmark:
			s.RV = d.RV
		case Deleted:
			delete(s.Objects, d.Key())
			out = append(out, Event{Kind: "delete", New: d.Obj, Tombstone: d.Tombstone, HasObj: d.HasObj})
		default:
			if old, ok := s.Objects[d.Key()]; ok {
				out = append(out, Event{Kind: "update", Old: old, New: d.Obj})
			} else {
				out = append(out, Event{Kind: "add", New: d.Obj, Initial: initial})
			}
			s.Objects[d.Key()] = d.Obj
		}
	}
	return out
}
