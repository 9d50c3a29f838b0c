//go:build !clientgo_before_v0_36

package upstream

import (
	"testing"

	"github.com/kverify/kverify/props/checkkit"
	pfifo "github.com/kverify/kverify/props/fifo"
	"github.com/kverify/kverify/subjects/suite"
	"github.com/kverify/kverify/traces"
	"k8s.io/client-go/tools/cache"
)

// DeltaFIFO returns client-go's cache.DeltaFIFO as a subject, made with
// NewDeltaFIFOWithOptions and MetaNamespaceKeyFunc. Its deltas are
// translated into the suite's; it offers no processing path (client-go's
// processDeltas is unexported, controller.go:823).
func DeltaFIFO() pfifo.Subject {
	return pfifo.Subject{New: func(o pfifo.Options) (pfifo.FIFO, error) {
		opts := cache.DeltaFIFOOptions{EmitDeltaTypeReplaced: o.EmitReplaced}
		if o.Known != nil {
			opts.KnownObjects = o.Known
		}
		if o.Transform != nil {
			opts.Transformer = o.Transform
		}
		return cacheFIFO{cache.NewDeltaFIFOWithOptions(opts)}, nil
	}}
}

// RealFIFO returns client-go's cache.RealFIFO as a subject, made with
// NewRealFIFOWithOptions as the options say (client-go panics on the
// combinations it rejects; the adapter lets the panic through).
func RealFIFO() pfifo.Subject {
	return pfifo.Subject{Real: true, New: func(o pfifo.Options) (pfifo.FIFO, error) {
		opts := cache.RealFIFOOptions{
			AtomicEvents:          o.Atomic,
			UnlockWhileProcessing: o.Unlock,
			EmitDeltaTypeBookmark: o.Bookmarks,
		}
		if o.Known != nil {
			opts.KnownObjects = o.Known
		}
		if o.Transform != nil {
			opts.Transformer = o.Transform
		}
		f := cache.NewRealFIFOWithOptions(opts)
		return realFIFO{cacheFIFO{f}, f}, nil
	}}
}

// queue is what both client-go FIFOs offer.
type queue interface {
	Add(obj any) error
	Update(obj any) error
	Delete(obj any) error
	Replace(list []any, rv string) error
	Resync() error
	Pop(process cache.PopProcessFunc) (any, error)
	Close()
	IsClosed() bool
	HasSynced() bool
	Done() <-chan struct{}
}

type cacheFIFO struct{ f queue }

func (c cacheFIFO) Add(obj any) error                   { return c.f.Add(obj) }
func (c cacheFIFO) Update(obj any) error                { return c.f.Update(obj) }
func (c cacheFIFO) Delete(obj any) error                { return c.f.Delete(obj) }
func (c cacheFIFO) Replace(list []any, rv string) error { return c.f.Replace(list, rv) }
func (c cacheFIFO) Resync() error                       { return c.f.Resync() }
func (c cacheFIFO) Close()                              { c.f.Close() }
func (c cacheFIFO) IsClosed() bool                      { return c.f.IsClosed() }
func (c cacheFIFO) HasSynced() bool                     { return c.f.HasSynced() }

func (c cacheFIFO) Done() <-chan struct{} { return c.f.Done() }

func (c cacheFIFO) Pop(process func([]pfifo.Delta, bool) error) ([]pfifo.Delta, error) {
	item, err := c.f.Pop(func(obj any, initial bool) error {
		return process(fromDeltas(obj.(cache.Deltas)), initial)
	})
	if ds, ok := item.(cache.Deltas); ok {
		return fromDeltas(ds), err
	}
	return nil, err
}

type realFIFO struct {
	cacheFIFO
	r *cache.RealFIFO
}

func (r realFIFO) PopBatch(batch, single func([]pfifo.Delta, bool) error) error {
	return r.r.PopBatch(
		func(ds []cache.Delta, initial bool) error { return batch(fromDeltas(ds), initial) },
		func(obj any, initial bool) error { return single(fromDeltas(obj.(cache.Deltas)), initial) })
}

func (r realFIFO) Bookmark(rv string) error { return r.r.Bookmark(rv) }

func fromDeltas(ds []cache.Delta) []pfifo.Delta {
	out := make([]pfifo.Delta, len(ds))
	for i, d := range ds {
		out[i] = pfifo.Delta{Type: string(d.Type), Object: fromObject(d.Object)}
	}
	return out
}

func fromObject(obj any) any {
	switch o := obj.(type) {
	case cache.DeletedFinalStateUnknown:
		return pfifo.Tombstone{Key: o.Key, Obj: o.Obj}
	case cache.ReplacedAllInfo:
		return pfifo.ReplacedAll{ResourceVersion: o.ResourceVersion, Objects: o.Objects}
	case cache.SyncAllInfo:
		return pfifo.SyncAll{}
	case cache.BookmarkInfo:
		return pfifo.Bookmark{ResourceVersion: o.ResourceVersion}
	}
	return obj
}

// fifoEntries binds DeltaFIFO and RealFIFO (the queue interface with
// Done, RealFIFO's options: v0.36 and later).
func fifoEntries() []suite.Entry {
	return []suite.Entry{
		entry(pfifo.DeltaComponent, func() []checkkit.Check { return pfifo.Checks(DeltaFIFO()) }, DeltaFIFODivergences,
			func(_ *testing.T, tr *traces.Trace) error { return pfifo.Replay(DeltaFIFO(), tr) }),
		entry(pfifo.RealComponent, func() []checkkit.Check { return pfifo.Checks(RealFIFO()) }, RealFIFODivergences,
			func(_ *testing.T, tr *traces.Trace) error { return pfifo.Replay(RealFIFO(), tr) }),
	}
}
