package deltafifo

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	"github.com/kverify/kverify/impl/delta"
)

// SlowDepth and SlowTook are the thresholds of the slow-process warning, as in
// client-go (delta_fifo.go:591-602): a pop that leaves strictly more than
// SlowDepth keys queued and whose process func takes strictly longer than
// SlowTook.
const (
	SlowDepth = 10
	SlowTook  = 100 * time.Millisecond
)

// Options configure a FIFO. The zero value is valid.
type Options struct {
	// KeyFunc keys objects; delta.MetaNamespaceKey if nil. KeyOf wraps it:
	// it is never called with a Deltas, a DeletedFinalStateUnknown, a nil
	// or a typed nil.
	KeyFunc delta.KeyFunc
	// Known is what the consumer knows (the informer's store). It changes
	// Delete (a delete of a known key is queued), Replace (known keys not
	// listed get tombstones) and Resync (nil: Resync does nothing).
	Known delta.KeyListerGetter
	// EmitReplaced makes Replace queue Replaced deltas instead of Sync.
	EmitReplaced bool
	// Transform, if set, is applied once to every object given to Add,
	// Update, Delete and Replace, before it is queued; never to the known
	// objects Resync queues nor to tombstones.
	Transform delta.TransformFunc
	// SlowProcess, if set, is called after a pop whose process func
	// returned after more than SlowTook with more than SlowDepth keys left
	// queued, with the popped key, that depth and the time process took. It
	// is called after the FIFO's lock is released, by the goroutine that
	// called Pop. If nil, such a pop is traced with k8s.io/utils/trace as in
	// client-go (logged by klog at verbosity 2), with delta.TraceSlowPop.
	SlowProcess func(key string, depth int, took time.Duration)
}

// FIFO is client-go's DeltaFIFO: a queue of keys, each with the deltas
// accumulated for it since it was last popped. See the package doc.
type FIFO struct {
	keyFunc      delta.KeyFunc
	known        delta.KeyListerGetter
	emitReplaced bool
	transform    delta.TransformFunc
	slowProcess  func(key string, depth int, took time.Duration)

	mu   sync.Mutex
	cond sync.Cond // on mu; broadcast when a key is queued or on Close

	// items maps each queued key to its deltas (at least one); queue holds
	// the same keys in first-touch order.
	items     map[string]delta.Deltas
	itemsPeak int // most keys items held since it was last made
	queue     keyQueue

	initial delta.InitialSync // the initial population and the synced signal

	closed atomic.Bool // written under mu
}

// New returns an empty FIFO.
func New(opts Options) *FIFO {
	if opts.KeyFunc == nil {
		opts.KeyFunc = delta.MetaNamespaceKey
	}
	f := &FIFO{
		keyFunc:      opts.KeyFunc,
		known:        opts.Known,
		emitReplaced: opts.EmitReplaced,
		transform:    opts.Transform,
		slowProcess:  opts.SlowProcess,
		items:        map[string]delta.Deltas{},
		initial:      delta.NewInitialSync(),
	}
	if f.slowProcess == nil {
		f.slowProcess = traceSlowPop
	}
	f.cond.L = &f.mu
	return f
}

// traceSlowPop is the SlowProcess of a FIFO made without one.
func traceSlowPop(key string, depth int, took time.Duration) {
	delta.TraceSlowPop("DeltaFIFO Pop Process", key, depth, took)
}

// KeyOf is the key of obj: of its newest object for a delta.Deltas (an
// empty one is an error), the Key of a DeletedFinalStateUnknown, else
// Options.KeyFunc's. A nil or typed-nil object is an error.
func (f *FIFO) KeyOf(obj any) (string, error) { return delta.KeyOf(f.keyFunc, obj) }

// transformed applies Options.Transform to obj, unless obj is a tombstone
// or internal is Sync (the object came from Known and was transformed
// when it was first queued).
func (f *FIFO) transformed(internal delta.Type, obj any) (any, error) {
	if internal == delta.Sync {
		return obj, nil
	}
	return delta.Transformed(f.transform, obj)
}

// HasSynced reports whether Add, Update or Delete was called before the
// first Replace, or every item of the first Replace has been popped and
// processed. It takes no lock, so a process func may call it.
func (f *FIFO) HasSynced() bool { return f.initial.HasSynced() }

// Done is closed when HasSynced becomes true.
func (f *FIFO) Done() <-chan struct{} { return f.initial.Done() }

// Close closes the FIFO: Pop returns the remaining items, then
// delta.ErrClosed. Add, Update, Delete, Replace and Resync still work.
// Closing twice is harmless.
func (f *FIFO) Close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed.Store(true)
	f.cond.Broadcast()
}

// IsClosed reports whether Close was called. It takes no lock.
func (f *FIFO) IsClosed() bool { return f.closed.Load() }

// Add queues an Added delta for obj. Like Update and Delete, it marks the
// FIFO populated (synced if no Replace is pending), even if obj is
// rejected, as client-go does.
func (f *FIFO) Add(obj any) error { return f.addOrUpdate(delta.Added, obj) }

// Update queues an Updated delta for obj.
func (f *FIFO) Update(obj any) error { return f.addOrUpdate(delta.Updated, obj) }

func (f *FIFO) addOrUpdate(t delta.Type, obj any) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.initial.Populated()
	id, err := f.KeyOf(obj)
	if err != nil {
		return delta.KeyError{Obj: obj, Err: err}
	}
	obj, err = f.transformed(t, obj)
	if err != nil {
		return err
	}
	f.appendLocked(id, delta.Delta{Type: t, Object: obj})
	return nil
}

// Delete queues a Deleted delta for obj, unless the deletion is presumed
// already reported: without Known, when obj's key has nothing queued; with
// Known, when Known does not have the key (and the lookup succeeded) and
// nothing is queued. A Deleted after a queued Deleted is coalesced (see
// the package doc). A key error leaves the FIFO unchanged (not even
// populated).
func (f *FIFO) Delete(obj any) error {
	id, err := f.KeyOf(obj)
	if err != nil {
		return delta.KeyError{Obj: obj, Err: err}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.initial.Populated()
	_, queued := f.items[id]
	if f.known == nil {
		if !queued {
			return nil
		}
	} else {
		_, exists, err := f.known.GetByKey(id)
		if err == nil && !exists && !queued {
			return nil
		}
	}
	obj, err = f.transformed(delta.Deleted, obj)
	if err != nil {
		return err
	}
	f.appendLocked(id, delta.Delta{Type: delta.Deleted, Object: obj})
	return nil
}

// appendLocked appends d to id's deltas, coalesces the last two if both
// are deletions, and queues id if it was not queued.
func (f *FIFO) appendLocked(id string, d delta.Delta) {
	old, queued := f.items[id]
	f.items[id] = dedup(append(old, d))
	if !queued {
		f.queue.push(id)
		if n := len(f.items); n > f.itemsPeak {
			f.itemsPeak = n
		}
	}
	f.cond.Broadcast()
}

// dedup coalesces the two newest deltas of ds if both are deletions,
// keeping the newer one if the older is a tombstone and the older one
// otherwise (client-go's isDeletionDup). No other sequence is coalesced.
func dedup(ds delta.Deltas) delta.Deltas {
	n := len(ds)
	if n < 2 {
		return ds
	}
	a, b := ds[n-1], ds[n-2]
	if a.Type != delta.Deleted || b.Type != delta.Deleted {
		return ds
	}
	if _, ok := b.Object.(delta.DeletedFinalStateUnknown); ok {
		ds[n-2] = a
	}
	ds[n-1] = delta.Delta{} // no retention past len
	return ds[:n-1]
}

// Pop waits until a key is queued (or the FIFO is closed and empty:
// delta.ErrClosed), removes the oldest-queued key with all its deltas and
// calls process with them (a delta.Deltas, oldest first) and whether they
// belong to the initial population, that is whether the FIFO had not
// synced when the pop began. It returns the deltas and process's error;
// nothing is requeued. process runs with the FIFO locked: it may call
// HasSynced, Done and IsClosed, and must not call the other methods.
//
// If process panics, the key is already removed, the initial population
// counted down and the lock released when the panic reaches Pop's caller.
func (f *FIFO) Pop(process delta.PopProcessFunc) (any, error) {
	var slow func()
	item, err := f.pop(process, &slow)
	if slow != nil {
		slow()
	}
	return item, err
}

func (f *FIFO) pop(process delta.PopProcessFunc, slow *func()) (any, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for f.queue.len() == 0 {
		if f.closed.Load() {
			return nil, delta.ErrClosed
		}
		f.cond.Wait()
	}
	isInInitialList := !f.initial.Synced()
	id := f.queue.pop()
	depth := f.queue.len()
	item := f.items[id]
	delete(f.items, id)
	if len(f.items) == 0 && f.itemsPeak > shrinkItemsAbove {
		// A map never shrinks: give back the buckets of a burst.
		f.items, f.itemsPeak = map[string]delta.Deltas{}, 0
	}
	// Counted after process returns (or panics): see the package doc.
	counted := min(1, f.initial.Pending())
	defer f.initial.Processed(counted)

	if depth <= SlowDepth {
		return item, process(item, isInInitialList)
	}
	start := time.Now()
	err := process(item, isInInitialList)
	if took := time.Since(start); took > SlowTook {
		*slow = func() { f.slowProcess(id, depth, took) }
	}
	return item, err
}

// shrinkItemsAbove is the peak key count above which the map of queued
// keys is made anew when it empties.
const shrinkItemsAbove = 1024

// Replace queues a relist: for each object of list, in order, a Sync delta
// (Replaced with Options.EmitReplaced); then a Deleted tombstone
// (delta.DeletedFinalStateUnknown) for every key that is queued but not
// listed, in queue order, whose Obj is the key's newest queued object
// (unwrapped if it is itself a tombstone); then one for every key of Known
// that is neither listed nor queued, whose Obj is Known's object (nil if
// the lookup fails). The first Replace of a FIFO not yet populated makes
// its distinct listed keys plus its tombstones the initial population.
//
// Replace is all or nothing: every key is computed and every object
// transformed before anything is queued; on a key or transform error it
// returns the error and the FIFO is unchanged. resourceVersion is unused.
func (f *FIFO) Replace(list []any, resourceVersion string) error {
	f.mu.Lock()
	defer f.mu.Unlock()

	action := delta.Sync
	if f.emitReplaced {
		action = delta.Replaced
	}
	// Validate first: nothing is queued unless every object has a key
	// and transforms.
	ids := make([]string, len(list))
	objs := list
	if f.transform != nil {
		objs = make([]any, len(list))
	}
	keys := make(map[string]struct{}, len(list)) // the listed keys
	for i, item := range list {
		id, err := f.KeyOf(item)
		if err != nil {
			return delta.KeyError{Obj: item, Err: err}
		}
		if f.transform != nil {
			obj, err := f.transformed(delta.Replaced, item)
			if err != nil {
				return fmt.Errorf("couldn't enqueue object: %w", err)
			}
			objs[i] = obj
		}
		ids[i] = id
		keys[id] = struct{}{}
	}

	// Tombstones for queued keys not listed: they go onto keys already
	// queued, so they can come first without changing the queue's order.
	tombstones := 0
	for _, k := range f.queue.all() {
		if _, ok := keys[k]; ok {
			continue
		}
		var obj any
		if n := f.items[k].Newest(); n != nil {
			obj = n.Object
			if d, ok := obj.(delta.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
		}
		f.appendLocked(k, delta.Delta{Type: delta.Deleted, Object: delta.DeletedFinalStateUnknown{Key: k, Obj: obj}})
		tombstones++
	}
	for i, id := range ids {
		f.appendLocked(id, delta.Delta{Type: action, Object: objs[i]})
	}
	// Then tombstones for known keys neither listed nor queued, after the
	// listed keys in the queue.
	if f.known != nil {
		for _, k := range f.known.ListKeys() {
			if _, ok := keys[k]; ok {
				continue
			}
			if _, queued := f.items[k]; queued {
				continue
			}
			obj, exists, err := f.known.GetByKey(k)
			if err != nil {
				obj = nil
				utilruntime.HandleErrorWithContext(context.Background(), err,
					"Unexpected error during lookup, placing DeletedFinalStateUnknown marker without object", "key", k)
			} else if !exists {
				obj = nil
			}
			f.appendLocked(k, delta.Delta{Type: delta.Deleted, Object: delta.DeletedFinalStateUnknown{Key: k, Obj: obj}})
			tombstones++
		}
	}
	f.initial.Replaced(len(keys) + tombstones)
	return nil
}

// Resync queues a Sync delta with Known's object for every key of Known
// that has nothing queued (so a resync never races a queued change with a
// stale object). The objects are not transformed. A key whose lookup fails
// or finds nothing is skipped; an object whose key cannot be computed
// stops Resync with a delta.KeyError, the syncs queued before it staying,
// as in client-go. Without Known, Resync does nothing.
func (f *FIFO) Resync() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.known == nil {
		return nil
	}
	for _, k := range f.known.ListKeys() {
		obj, exists, err := f.known.GetByKey(k)
		if err != nil {
			utilruntime.HandleErrorWithContext(context.Background(), err,
				"Unexpected error during lookup, unable to queue object for sync", "key", k)
			continue
		}
		if !exists {
			continue
		}
		id, err := f.KeyOf(obj)
		if err != nil {
			return delta.KeyError{Obj: obj, Err: err}
		}
		if len(f.items[id]) > 0 {
			continue
		}
		f.appendLocked(id, delta.Delta{Type: delta.Sync, Object: obj})
	}
	return nil
}

// List returns the newest queued object of each queued key, in queue
// order.
func (f *FIFO) List() []any {
	f.mu.Lock()
	defer f.mu.Unlock()
	keys := f.queue.all()
	out := make([]any, 0, len(keys))
	for _, k := range keys {
		out = append(out, f.items[k].Newest().Object)
	}
	return out
}

// ListKeys returns the queued keys, in queue order (the order Pop takes
// them).
func (f *FIFO) ListKeys() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.queue.all()...)
}

// Get returns a copy of the deltas queued for obj's key.
func (f *FIFO) Get(obj any) (delta.Deltas, bool, error) {
	id, err := f.KeyOf(obj)
	if err != nil {
		return nil, false, delta.KeyError{Obj: obj, Err: err}
	}
	return f.GetByKey(id)
}

// GetByKey returns a copy of the deltas queued for key. Its error is
// always nil.
func (f *FIFO) GetByKey(key string) (delta.Deltas, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ds, ok := f.items[key]
	if !ok {
		return nil, false, nil
	}
	return append(delta.Deltas(nil), ds...), true, nil
}
