package upstream

import (
	"github.com/kverify/kverify/props/checkkit"
	pfifo "github.com/kverify/kverify/props/fifo"
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

// DeltaFIFODivergences are cache.DeltaFIFO's known differences from the
// FIFO contract.
var DeltaFIFODivergences = []checkkit.Divergence{
	{
		Check:      pfifo.DeltaComponent + "/" + pfifo.CheckSynced,
		Guarantees: []string{pfifo.GSynced},
		Shape:      `^HasSynced: while the process func of \[[^\]]*\] ran, the FIFO was synced=true, want false`,
		Reason:     "Pop counts an initial item as done before calling its process func, so the FIFO (and an informer's HasSynced) reports synced while the last initial object is still being processed; we count it once process returns",
		Upstream:   Version + "/tools/cache/delta_fifo.go:580-583",
	},
	{
		Check:      pfifo.DeltaComponent + "/" + pfifo.CheckBadInput,
		Guarantees: []string{pfifo.GBadInput},
		Shape:      `^Bad input rejected: New\([^)]*\): ((Add|Update|Delete|Replace) of no name returned no error|(Add|Update|Delete|Replace) of typed nil panicked: runtime error: invalid memory address or nil pointer dereference|Replace of (nil|int) returned "couldn\'t create key for object [^"]*" but changed the FIFO)`,
		Reason:     "Replace queues the listed objects one by one and returns at the first one without a key, leaving the earlier ones queued (a partial relist); MetaNamespaceKeyFunc also accepts an object without a name (key \"\") and panics on a typed nil; we validate the whole list first and reject both",
		Upstream:   Version + "/tools/cache/delta_fifo.go:631-639, store.go:154-181",
	},
	{
		Check:      pfifo.DeltaComponent + "/" + pfifo.CheckErrorPaths,
		Shape:      `^Failed call: popped \[[^\]]*\], want key \w+\'s deltas \[[^\]]*\] .*\(after Replace\(`,
		Guarantees: []string{pfifo.GFailedCall},
		Reason:     "a Replace whose list holds an object the key function or the transformer rejects returns the error after queueing the objects listed before it (a partial relist, not counted as the initial population); we key and transform the whole list before queueing anything",
		Upstream:   Version + "/tools/cache/delta_fifo.go:631-640, 491-516",
	},
	{
		Check:      pfifo.DeltaComponent + "/" + pfifo.CheckRetention,
		Guarantees: []string{pfifo.GRetention},
		Shape:      `^No retention: New\([^)]*\): a popped object\'s key is still referenced by the FIFO`,
		Reason:     "Pop reslices its key queue (f.queue = f.queue[1:]), so the backing array keeps every popped key until an append reallocates it",
		Upstream:   Version + "/tools/cache/delta_fifo.go:578",
	},
}

// RealFIFODivergences are cache.RealFIFO's known differences from the
// FIFO contract.
var RealFIFODivergences = []checkkit.Divergence{
	{
		Check:      pfifo.RealComponent + "/" + pfifo.CheckBadInput,
		Guarantees: []string{pfifo.GBadInput},
		Shape:      `^Bad input rejected: New\([^)]*\): ((Add|Update|Delete|Replace) of no name returned no error|(Add|Update|Delete|Replace) of typed nil panicked: runtime error: invalid memory address or nil pointer dereference)|^Bad input rejected: New\(atomic[^)]*\): Replace of (nil|int|typed nil) returned no error`,
		Reason:     "in atomic mode Replace wraps the list in one ReplacedAll without computing any key, so objects without a key are accepted and fail later, in processing; MetaNamespaceKeyFunc also accepts an object without a name (key \"\"); we reject both",
		Upstream:   Version + "/tools/cache/the_real_fifo.go:295-322, store.go:154-181",
	},
	{
		Check:      pfifo.RealComponent + "/" + pfifo.CheckErrorPaths,
		Shape:      `^Failed call: (Replace\([^)]*nokey[^)]*\) returned no error, want one|popped \[[^\]]*\], want .*\(after Replace\()`,
		Guarantees: []string{pfifo.GFailedCall},
		Reason:     "an atomic Replace keys none of its objects, so a relist holding one without a key is accepted (and fails later, in processing); a non-atomic Replace queues its tombstones and the objects listed before one the transformer rejects, then returns the error (a partial relist); we key and transform the whole list before queueing anything",
		Upstream:   Version + "/tools/cache/the_real_fifo.go:295-322, 604-621, 674-732",
	},
	{
		Check:      pfifo.RealComponent + "/" + pfifo.CheckOptions,
		Guarantees: []string{pfifo.GOptions},
		Shape:      `^Bad options rejected: New \([^)]*\) panicked: coding error: `,
		Reason:     "NewRealFIFOWithOptions panics (\"coding error: ...\") on an invalid combination of options; ours returns an error",
		Upstream:   Version + "/tools/cache/the_real_fifo.go:813-830",
	},
}
