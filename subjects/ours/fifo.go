package ours

import (
	"github.com/kverify/kverify/impl/delta"
	"github.com/kverify/kverify/impl/deltafifo"
	"github.com/kverify/kverify/impl/realfifo"
	pfifo "github.com/kverify/kverify/props/fifo"
)

// DeltaFIFO is impl/deltafifo as a subject, with impl/delta.Process as
// its processing path.
func DeltaFIFO() pfifo.Subject {
	return pfifo.Subject{
		New: func(o pfifo.Options) (pfifo.FIFO, error) {
			opts := deltafifo.Options{EmitReplaced: o.EmitReplaced, SlowProcess: o.OnSlow}
			if o.Known != nil {
				opts.Known = o.Known
			}
			if o.Transform != nil {
				opts.Transform = o.Transform
			}
			f := deltafifo.New(opts)
			return oursFIFO{f, f.Pop}, nil
		},
		Process:     oursProcess,
		ReportsSlow: true,
	}
}

// RealFIFO is impl/realfifo as a subject, with impl/delta.Process as
// its processing path.
func RealFIFO() pfifo.Subject {
	return pfifo.Subject{
		Real: true,
		New: func(o pfifo.Options) (pfifo.FIFO, error) {
			opts := realfifo.Options{Atomic: o.Atomic, UnlockWhileProcessing: o.Unlock, Bookmarks: o.Bookmarks, SlowProcess: o.OnSlow}
			if o.Known != nil {
				opts.Known = o.Known
			}
			if o.Transform != nil {
				opts.Transform = o.Transform
			}
			f, err := realfifo.New(opts)
			if err != nil {
				return nil, err
			}
			return oursReal{oursFIFO{f, f.Pop}, f}, nil
		},
		Process:     oursProcess,
		ReportsSlow: true,
	}
}

// producer is what both of our FIFOs offer besides Pop.
type producer interface {
	Add(obj any) error
	Update(obj any) error
	Delete(obj any) error
	Replace(list []any, rv string) error
	Resync() error
	Close()
	IsClosed() bool
	HasSynced() bool
	Done() <-chan struct{}
}

type oursFIFO struct {
	producer
	pop func(delta.PopProcessFunc) (any, error)
}

func (f oursFIFO) Pop(process func([]pfifo.Delta, bool) error) ([]pfifo.Delta, error) {
	item, err := f.pop(func(obj any, initial bool) error {
		return process(fromOurDeltas(obj.(delta.Deltas)), initial)
	})
	if ds, ok := item.(delta.Deltas); ok {
		return fromOurDeltas(ds), err
	}
	return nil, err
}

type oursReal struct {
	oursFIFO
	r *realfifo.FIFO
}

func (r oursReal) PopBatch(batch, single func([]pfifo.Delta, bool) error) error {
	return r.r.PopBatch(
		func(ds []delta.Delta, initial bool) error { return batch(fromOurDeltas(ds), initial) },
		func(obj any, initial bool) error { return single(fromOurDeltas(obj.(delta.Deltas)), initial) })
}

func (r oursReal) Bookmark(rv string) error { return r.r.Bookmark(rv) }

func fromOurDeltas(ds []delta.Delta) []pfifo.Delta {
	out := make([]pfifo.Delta, len(ds))
	for i, d := range ds {
		out[i] = pfifo.Delta{Type: string(d.Type), Object: fromOurObject(d.Object)}
	}
	return out
}

func fromOurObject(obj any) any {
	switch o := obj.(type) {
	case delta.DeletedFinalStateUnknown:
		return pfifo.Tombstone{Key: o.Key, Obj: o.Obj}
	case delta.ReplacedAllInfo:
		return pfifo.ReplacedAll{ResourceVersion: o.ResourceVersion, Objects: o.Objects}
	case delta.SyncAllInfo:
		return pfifo.SyncAll{}
	case delta.BookmarkInfo:
		return pfifo.Bookmark{ResourceVersion: o.ResourceVersion}
	}
	return obj
}

func toOurObject(obj any) any {
	switch o := obj.(type) {
	case pfifo.Tombstone:
		return delta.DeletedFinalStateUnknown{Key: o.Key, Obj: o.Obj}
	case pfifo.ReplacedAll:
		return delta.ReplacedAllInfo{ResourceVersion: o.ResourceVersion, Objects: o.Objects}
	case pfifo.SyncAll:
		return delta.SyncAllInfo{}
	case pfifo.Bookmark:
		return delta.BookmarkInfo{ResourceVersion: o.ResourceVersion}
	}
	return obj
}

// oursProcess runs impl/delta.Process on the suite's deltas, store and
// handler, translating tombstones both ways.
func oursProcess(h pfifo.Handler, s pfifo.Store, ds []pfifo.Delta, initial bool) error {
	our := make(delta.Deltas, len(ds))
	for i, d := range ds {
		our[i] = delta.Delta{Type: delta.Type(d.Type), Object: toOurObject(d.Object)}
	}
	return delta.Process(suiteHandler{h}, suiteStore{s}, our, initial, ourStoreKey)
}

// ourStoreKey keys objects as the suite's store does, our tombstones too.
func ourStoreKey(obj any) (string, error) { return pfifo.StoreKey(fromOurObject(obj)) }

// suiteHandler hands our notifications to the suite's handler.
type suiteHandler struct{ h pfifo.Handler }

func (s suiteHandler) OnAdd(obj any, initial bool) { s.h.OnAdd(fromOurObject(obj), initial) }
func (s suiteHandler) OnUpdate(old, obj any)       { s.h.OnUpdate(fromOurObject(old), fromOurObject(obj)) }
func (s suiteHandler) OnDelete(obj any)            { s.h.OnDelete(fromOurObject(obj)) }

// suiteStore is the suite's store behind our delta.Store (and
// KeyListerGetter, which Process's ReplacedAll reconciliation uses).
type suiteStore struct{ s pfifo.Store }

func (s suiteStore) Add(obj any) error    { return s.s.Add(fromOurObject(obj)) }
func (s suiteStore) Update(obj any) error { return s.s.Update(fromOurObject(obj)) }
func (s suiteStore) Delete(obj any) error { return s.s.Delete(fromOurObject(obj)) }
func (s suiteStore) Get(obj any) (any, bool, error) {
	return s.s.Get(fromOurObject(obj))
}
func (s suiteStore) List() []any { return s.s.List() }
func (s suiteStore) Replace(list []any, rv string) error {
	return s.s.Replace(list, rv)
}
func (s suiteStore) ListKeys() []string                     { return s.s.ListKeys() }
func (s suiteStore) GetByKey(key string) (any, bool, error) { return s.s.GetByKey(key) }
func (s suiteStore) Bookmark(rv string) {
	if b, ok := s.s.(interface{ Bookmark(string) }); ok {
		b.Bookmark(rv)
	}
}

// FIFOImpl returns the FIFO of ours behind f (a *deltafifo.FIFO or a
// *realfifo.FIFO), or f itself when f is not one of ours: what a vector
// replay reads Len or ListKeys from, which the suite's FIFO interface
// leaves out (client-go's FIFOs export no length).
func FIFOImpl(f pfifo.FIFO) any {
	switch o := f.(type) {
	case oursFIFO:
		return o.producer
	case oursReal:
		return o.producer
	}
	return f
}
