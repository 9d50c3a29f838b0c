//go:build clientgo_before_v0_36 && !clientgo_before_v0_24 && !((clientgo_before_v0_24_13 && !clientgo_before_v0_24) || (clientgo_before_v0_25_9 && !clientgo_before_v0_25) || (clientgo_before_v0_26_4 && !clientgo_before_v0_26))

package upstream

import (
	"reflect"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/kverify/kverify/props/checkkit"
	pfifo "github.com/kverify/kverify/props/fifo"
	"github.com/kverify/kverify/subjects/suite"
	"github.com/kverify/kverify/traces"
	"k8s.io/client-go/tools/cache"
)

// DeltaFIFO returns client-go's cache.DeltaFIFO (v0.24 to v0.35) as a
// subject, made with NewDeltaFIFOWithOptions (DeltaFIFOOptions.Transformer
// is first in v0.27.0, backported to v0.24.13, v0.25.9 and v0.26.4:
// before_v0_24.go has the releases without it) and MetaNamespaceKeyFunc. Before v0.36 the FIFO has
// no Done channel: oldDeltaFIFO keeps one, closed when it sees the FIFO
// synced (see oldDeltaFIFO). Pop's process func takes isInInitialList
// from v0.27 (fifo_pop_v0_27.go); before, the adapter works it out
// (fifo_pop_v0_24.go).
func DeltaFIFO() pfifo.Subject {
	return pfifo.Subject{New: func(o pfifo.Options) (pfifo.FIFO, error) {
		opts := cache.DeltaFIFOOptions{EmitDeltaTypeReplaced: o.EmitReplaced}
		if o.Known != nil {
			opts.KnownObjects = o.Known
		}
		if t := o.Transform; t != nil {
			// Before v0.36 the FIFO passes tombstones to the transformer
			// too, which "should be able to correctly handle the tombstone
			// of type cache.DeletedFinalStateUnknown" and "can likely
			// safely ignore such objects (i.e., just return the input
			// object)" (delta_fifo.go, TransformFunc): the suite's
			// transformer knows only its objects, so tombstones pass.
			opts.Transformer = func(obj any) (any, error) {
				if _, ok := obj.(cache.DeletedFinalStateUnknown); ok {
					return obj, nil
				}
				return t(obj)
			}
		}
		c := &oldDeltaFIFO{synced: make(chan struct{}), listed: map[any]int{}}
		// The key function is MetaNamespaceKeyFunc, watched: the FIFO calls
		// it under its lock, and a Replace first keys every listed object,
		// before it marks the FIFO populated (see populatedByReplace).
		opts.KeyFunction = c.keyOf
		c.f = cache.NewDeltaFIFOWithOptions(opts)
		return c, nil
	}}
}

// keyOf is MetaNamespaceKeyFunc. Called by a Replace for one of its listed
// objects while the FIFO is not yet populated (under the FIFO's lock, so
// ordered with every pop), it records that this Replace populates the
// FIFO: its listed objects are the initial population.
func (c *oldDeltaFIFO) keyOf(obj any) (string, error) {
	if c.isListed(obj) {
		if populated, _ := c.state(); !populated {
			c.populatedByReplace = true
		}
	}
	return cache.MetaNamespaceKeyFunc(obj)
}

// isListed reports whether obj is an object of a Replace in progress.
func (c *oldDeltaFIFO) isListed(obj any) (listed bool) {
	defer func() {
		if recover() != nil { // an unhashable object: never listed here
			listed = false
		}
	}()
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.listed[obj] > 0
}

// list registers (n = 1) or unregisters (n = -1) the objects of a Replace.
func (c *oldDeltaFIFO) list(objs []any, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, o := range objs {
		func() {
			defer func() { _ = recover() }() // unhashable: not registered
			if c.listed[o] += n; c.listed[o] <= 0 {
				delete(c.listed, o)
			}
		}()
	}
}

// oldDeltaFIFO is a DeltaFIFO without Done. Its synced channel is closed
// where v0.36's DeltaFIFO closes its own (checkSynced_locked): in Pop,
// once the pop that ends the initial population has been counted and
// before its process func runs (read there, under the FIFO's lock, from
// the fields HasSynced reads: populated, initialPopulationCount), and
// when a producer call (or Replace) returns with the FIFO synced.
type oldDeltaFIFO struct {
	f *cache.DeltaFIFO

	mu     sync.Mutex
	synced chan struct{}
	closed bool

	// listed counts, per object, the Replaces in progress that list it.
	listed map[any]int
	// populatedByReplace: a Replace populated the FIFO (keyOf saw it key
	// a listed object while the FIFO was not populated). Only touched
	// under the FIFO's lock.
	populatedByReplace bool
	// emptyReplaceBegun is set before a Replace of an empty list is
	// called: such a Replace keys nothing, so keyOf cannot see it apply.
	emptyReplaceBegun atomic.Bool
	// lastPopulated and lastCount are the FIFO's populated and
	// initialPopulationCount as the last process func found them: only
	// touched under the FIFO's lock, inside Pop.
	lastPopulated bool
	lastCount     int
}

func (c *oldDeltaFIFO) Add(obj any) error    { return c.check(c.f.Add(obj)) }
func (c *oldDeltaFIFO) Update(obj any) error { return c.check(c.f.Update(obj)) }
func (c *oldDeltaFIFO) Delete(obj any) error { return c.check(c.f.Delete(obj)) }
func (c *oldDeltaFIFO) Replace(list []any, rv string) error {
	if len(list) == 0 {
		c.emptyReplaceBegun.Store(true)
	}
	c.list(list, 1)
	defer c.list(list, -1)
	return c.check(c.f.Replace(list, rv))
}
func (c *oldDeltaFIFO) Resync() error  { return c.check(c.f.Resync()) }
func (c *oldDeltaFIFO) Close()         { c.f.Close() }
func (c *oldDeltaFIFO) IsClosed() bool { return c.f.IsClosed() }
func (c *oldDeltaFIFO) HasSynced() bool {
	ok := c.f.HasSynced()
	if ok {
		c.markSynced()
	}
	return ok
}

func (c *oldDeltaFIFO) Done() <-chan struct{} { return c.synced }

// check closes the synced channel if the FIFO is synced, and returns err.
func (c *oldDeltaFIFO) check(err error) error {
	c.HasSynced()
	return err
}

func (c *oldDeltaFIFO) markSynced() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.closed {
		c.closed = true
		close(c.synced)
	}
}

func (c *oldDeltaFIFO) isSynced() bool {
	select {
	case <-c.synced:
		return true
	default:
		return false
	}
}

// state reads populated and initialPopulationCount; only under the
// FIFO's lock (from a process func).
func (c *oldDeltaFIFO) state() (populated bool, count int) {
	v := reflect.ValueOf(c.f).Elem()
	return v.FieldByName("populated").Bool(), int(v.FieldByName("initialPopulationCount").Int())
}

// popped runs first in every process func, under the FIFO's lock, after
// Pop counted the item off the initial population. It returns whether
// the FIFO was unsynced when the pop began (v0.27's isInInitialList:
// !(populated && initialPopulationCount == 0) before the count) and
// closes the synced channel if the FIFO is synced now.
//
// The count changes only by pops, and by the first Replace while the FIFO
// is not populated; so after a pop that found the FIFO populated, the
// next pop began with the count that pop left. The first pop that finds
// it populated with the count at 0 began either with one initial item
// left (populated by a Replace that listed objects) or synced (an empty
// Replace, or populated by Add, Update or Delete): the synced channel,
// closed when such a call returned synced, tells them apart, and failing
// that whether a Replace with objects populated it (populatedByReplace,
// recorded under the FIFO's lock, so in order with this pop: a Replace
// merely begun, as this read until kverify 47, is not one that applied,
// and a pop racing a Replace and an Update was told initial when the
// Update had populated the FIFO), or an empty Replace has begun (it keys
// nothing, so only its beginning shows: the guess that remains).
func (c *oldDeltaFIFO) popped() (initial bool) {
	populated, count := c.state()
	switch {
	case !populated || count > 0:
		initial = true
	case c.lastPopulated:
		initial = c.lastCount > 0
	case c.isSynced():
		initial = false
	default:
		initial = c.populatedByReplace || c.emptyReplaceBegun.Load()
	}
	c.lastPopulated, c.lastCount = populated, count
	if populated && count == 0 {
		c.markSynced()
	}
	return initial
}

func (c *oldDeltaFIFO) Pop(process func([]pfifo.Delta, bool) error) ([]pfifo.Delta, error) {
	item, err := c.pop(func(obj any, initial bool) error {
		return process(fromOldDeltas(obj.(cache.Deltas)), initial)
	})
	if ds, ok := item.(cache.Deltas); ok {
		return fromOldDeltas(ds), err
	}
	return nil, err
}

func fromOldDeltas(ds []cache.Delta) []pfifo.Delta {
	out := make([]pfifo.Delta, len(ds))
	for i, d := range ds {
		obj := d.Object
		if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = pfifo.Tombstone{Key: t.Key, Obj: t.Obj}
		}
		out[i] = pfifo.Delta{Type: string(d.Type), Object: obj}
	}
	return out
}

// fifoEntries binds DeltaFIFO (v0.24 to v0.35); RealFIFO is not offered.
func fifoEntries() []suite.Entry {
	return append([]suite.Entry{
		entry(pfifo.DeltaComponent, func() []checkkit.Check { return pfifo.Checks(DeltaFIFO()) }, DeltaFIFODivergences,
			func(_ *testing.T, tr *traces.Trace) error { return pfifo.Replay(DeltaFIFO(), tr) }),
	}, absentEntries("the adapter takes RealFIFO's options and PopBatch and the FIFO's Done channel, first in v0.36.0", pfifo.RealComponent)...)
}
