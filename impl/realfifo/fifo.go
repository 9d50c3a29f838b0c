package realfifo

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	utiltrace "k8s.io/utils/trace"

	"github.com/kverify/kverify/impl/delta"
)

// DefaultBatchSize is the most deltas PopBatch hands over at once when
// Options.BatchSize is 0 (client-go's defaultBatchSize,
// the_real_fifo.go:83).
const DefaultBatchSize = 1000

// Options configure a FIFO. The zero value is invalid (see New); the
// informer's configuration is Atomic with UnlockWhileProcessing.
type Options struct {
	// KeyFunc keys objects; delta.MetaNamespaceKey if nil. KeyOf wraps it:
	// it is never called with a Deltas, a Delta, a DeletedFinalStateUnknown,
	// a nil or a typed nil.
	KeyFunc delta.KeyFunc
	// Known is what the consumer knows (the informer's store). Required
	// unless Atomic, forbidden with Atomic; used by Replace and Resync.
	Known delta.KeyListerGetter
	// Transform, if set, is applied once to every object given to Add,
	// Update, Delete and Replace, before it is queued; never to the known
	// objects Resync queues nor to tombstones.
	Transform delta.TransformFunc
	// Atomic makes Replace queue one ReplacedAll delta and Resync one
	// SyncAll delta, instead of one delta per object.
	Atomic bool
	// UnlockWhileProcessing releases the FIFO's lock while a process func
	// runs, if fewer than 2*BatchSize deltas are queued. Requires Atomic.
	// The consumer must then be a single goroutine.
	UnlockWhileProcessing bool
	// Bookmarks makes Bookmark queue Bookmark deltas (otherwise it does
	// nothing). Requires Atomic.
	Bookmarks bool
	// BatchSize is the most deltas PopBatch hands over at once;
	// DefaultBatchSize if 0. Negative is invalid.
	BatchSize int
	// SlowProcess, if set, is called after a Pop whose process func
	// returned after more than SlowTook with more than SlowDepth deltas
	// left queued (a PopBatch of n deltas: after more than
	// min(n*SlowTook, 1s)), with the popped key (a delta type for a
	// ReplacedAll, SyncAll or Bookmark), that depth and the time process
	// took. It is called after the FIFO's lock is released, by the
	// goroutine that popped, and not after a process func that panicked.
	// If nil, such a pop is traced with k8s.io/utils/trace as in client-go
	// (logged by klog at verbosity 2), with delta.TraceSlowPop.
	SlowProcess func(key string, depth int, took time.Duration)
}

// ErrInvalidOptions is wrapped by New's error for a combination of options
// client-go's constructor panics on.
var ErrInvalidOptions = errors.New("realfifo: invalid options")

// FIFO is client-go's RealFIFO: every change is queued as one delta, in
// arrival order, and handed out in that order. See the package doc.
type FIFO struct {
	keyFunc   delta.KeyFunc
	known     delta.KeyListerGetter
	transform delta.TransformFunc
	atomic    bool
	unlock    bool
	bookmarks bool
	batchSize int

	mu    sync.Mutex
	cond  sync.Cond // on mu; broadcast when a delta is queued or on Close
	items deltaQueue

	initial delta.InitialSync // the initial population and the synced signal

	closed      atomic.Bool // written under mu
	slowProcess func(key string, depth int, took time.Duration)
}

// New returns an empty FIFO, or an error wrapping ErrInvalidOptions for
// the combinations client-go panics on (the_real_fifo.go:813-830): Atomic
// with Known; without Atomic, UnlockWhileProcessing, Bookmarks or a nil
// Known; and a negative BatchSize.
func New(opts Options) (*FIFO, error) {
	if opts.Atomic {
		if opts.Known != nil {
			return nil, fmt.Errorf("%w: Known must be nil when Atomic is set", ErrInvalidOptions)
		}
	} else {
		if opts.UnlockWhileProcessing {
			return nil, fmt.Errorf("%w: UnlockWhileProcessing requires Atomic", ErrInvalidOptions)
		}
		if opts.Known == nil {
			return nil, fmt.Errorf("%w: Known is required when Atomic is not set", ErrInvalidOptions)
		}
		if opts.Bookmarks {
			return nil, fmt.Errorf("%w: Bookmarks requires Atomic", ErrInvalidOptions)
		}
	}
	if opts.BatchSize < 0 {
		return nil, fmt.Errorf("%w: negative BatchSize %d", ErrInvalidOptions, opts.BatchSize)
	}
	if opts.BatchSize == 0 {
		opts.BatchSize = DefaultBatchSize
	}
	if opts.KeyFunc == nil {
		opts.KeyFunc = delta.MetaNamespaceKey
	}
	f := &FIFO{
		keyFunc:     opts.KeyFunc,
		known:       opts.Known,
		transform:   opts.Transform,
		atomic:      opts.Atomic,
		unlock:      opts.UnlockWhileProcessing,
		bookmarks:   opts.Bookmarks,
		slowProcess: opts.SlowProcess,
		batchSize:   opts.BatchSize,
		initial:     delta.NewInitialSync(),
	}
	f.cond.L = &f.mu
	return f, nil
}

// KeyOf is the key of obj: of its newest object for a delta.Deltas (an
// empty one is an error), of its object for a delta.Delta, the Key of a
// DeletedFinalStateUnknown, else Options.KeyFunc's. A nil or typed-nil
// object is an error.
func (f *FIFO) KeyOf(obj any) (string, error) { return delta.KeyOf(f.keyFunc, obj) }

// transformed applies Options.Transform to obj unless it is a tombstone.
func (f *FIFO) transformed(obj any) (any, error) { return delta.Transformed(f.transform, obj) }

// HasSynced reports whether Add, Update or Delete was called before the
// first Replace, or every delta the first Replace queued has been popped
// and processed. It takes no lock, so a process func may call it.
func (f *FIFO) HasSynced() bool { return f.initial.HasSynced() }

// Done is closed when HasSynced becomes true.
func (f *FIFO) Done() <-chan struct{} { return f.initial.Done() }

// Close closes the FIFO: Pop and PopBatch return the remaining deltas,
// then delta.ErrClosed. Producers are not rejected. Closing twice is
// harmless.
func (f *FIFO) Close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed.Store(true)
	f.cond.Broadcast()
}

// IsClosed reports whether Close was called. It takes no lock.
func (f *FIFO) IsClosed() bool { return f.closed.Load() }

// Add queues an Added delta. Like Update and Delete it marks the FIFO
// populated (synced if no Replace is pending), even if obj is rejected,
// as client-go does.
func (f *FIFO) Add(obj any) error { return f.produce(delta.Added, obj) }

// Update queues an Updated delta.
func (f *FIFO) Update(obj any) error { return f.produce(delta.Updated, obj) }

// Delete queues a Deleted delta, whether or not the object is known or
// queued (unlike DeltaFIFO, a RealFIFO never drops a delete).
func (f *FIFO) Delete(obj any) error { return f.produce(delta.Deleted, obj) }

func (f *FIFO) produce(t delta.Type, obj any) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.initial.Populated()
	return f.addLocked(t, false, obj)
}

// addLocked queues one delta for obj, transformed unless skipTransform.
func (f *FIFO) addLocked(t delta.Type, skipTransform bool, obj any) error {
	if _, err := f.KeyOf(obj); err != nil {
		return delta.KeyError{Obj: obj, Err: err}
	}
	if !skipTransform {
		var err error
		if obj, err = f.transformed(obj); err != nil {
			return err
		}
	}
	f.pushLocked(delta.Delta{Type: t, Object: obj})
	return nil
}

func (f *FIFO) pushLocked(d delta.Delta) {
	f.items.push(d)
	f.cond.Broadcast()
}

// Bookmark queues a Bookmark delta carrying resourceVersion if
// Options.Bookmarks is set, and does nothing otherwise. It does not mark
// the FIFO populated.
func (f *FIFO) Bookmark(resourceVersion string) error {
	if !f.bookmarks {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pushLocked(delta.Delta{Type: delta.Bookmark, Object: delta.BookmarkInfo{ResourceVersion: resourceVersion}})
	return nil
}

// Replace queues a relist.
//
// Atomic: one ReplacedAll delta whose delta.ReplacedAllInfo holds
// resourceVersion and the listed objects, transformed (without Transform,
// the FIFO keeps list itself: the caller gives it up, as with client-go's
// Store.Replace).
//
// Otherwise (client-go's reconcileReplacement, the_real_fifo.go:636-735):
// for each key queued but not listed, in first-queued order, whose last
// queued delta is not a Deleted, a Deleted tombstone
// (delta.DeletedFinalStateUnknown) holding that delta's object; then for
// each key of Known neither listed nor queued, a tombstone holding Known's
// object (nil if the lookup fails); then a Replaced delta for each listed
// object, in list order.
//
// The first Replace of a FIFO not yet populated makes every delta then
// queued the initial population. Replace is all or nothing: every listed
// object's key is computed and every object transformed before anything is
// queued; on an error Replace returns it and the FIFO is unchanged.
func (f *FIFO) Replace(list []any, resourceVersion string) error {
	f.mu.Lock()
	defer f.mu.Unlock()

	newKeys := make(map[string]struct{}, len(list))
	for _, obj := range list {
		k, err := f.KeyOf(obj)
		if err != nil {
			return delta.KeyError{Obj: obj, Err: err}
		}
		newKeys[k] = struct{}{}
	}
	objs := list
	if f.transform != nil {
		objs = make([]any, len(list))
		for i, obj := range list {
			t, err := f.transformed(obj)
			if err != nil {
				if f.atomic {
					return err
				}
				return fmt.Errorf("couldn't enqueue object: %w", err)
			}
			objs[i] = t
		}
	}

	if f.atomic {
		f.pushLocked(delta.Delta{Type: delta.ReplacedAll, Object: delta.ReplacedAllInfo{
			ResourceVersion: resourceVersion,
			Objects:         objs,
		}})
	} else {
		f.reconcileLocked(newKeys, objs)
	}

	f.initial.Replaced(f.items.len())
	return nil
}

// reconcileLocked queues a non-atomic Replace of the (already keyed and
// transformed) objs, whose keys are newKeys. It cannot fail: queued deltas
// were keyed when they were queued.
func (f *FIFO) reconcileLocked(newKeys map[string]struct{}, objs []any) {
	var queuedKeys []string
	last := map[string]delta.Delta{}
	for _, d := range f.items.all() {
		k, _ := f.KeyOf(d.Object)
		if _, seen := last[k]; !seen {
			queuedKeys = append(queuedKeys, k)
		}
		last[k] = d
	}
	// Count what will be queued first, so that the queue grows once, to
	// exactly the size the relist needs.
	knownKeys := f.known.ListKeys()
	n := len(objs)
	for _, k := range queuedKeys {
		if _, ok := newKeys[k]; !ok && last[k].Type != delta.Deleted {
			n++
		}
	}
	for _, k := range knownKeys {
		_, listed := newKeys[k]
		_, queued := last[k]
		if !listed && !queued {
			n++
		}
	}
	f.items.grow(n)

	for _, k := range queuedKeys {
		if _, ok := newKeys[k]; ok {
			continue
		}
		if d := last[k]; d.Type != delta.Deleted {
			f.pushLocked(delta.Delta{Type: delta.Deleted, Object: delta.DeletedFinalStateUnknown{Key: k, Obj: d.Object}})
		}
	}
	for _, k := range knownKeys {
		if _, ok := newKeys[k]; ok {
			continue
		}
		if _, queued := last[k]; queued {
			continue
		}
		obj, exists, err := f.known.GetByKey(k)
		if err != nil {
			obj = nil
			utilruntime.HandleErrorWithContext(context.Background(), err,
				"Error during lookup, placing DeletedFinalStateUnknown marker without object", "key", k)
		} else if !exists {
			obj = nil
			utilruntime.HandleErrorWithContext(context.Background(), nil,
				"Key does not exist in known objects store, placing DeletedFinalStateUnknown marker without object", "key", k)
		}
		f.pushLocked(delta.Delta{Type: delta.Deleted, Object: delta.DeletedFinalStateUnknown{Key: k, Obj: obj}})
	}
	for _, obj := range objs {
		f.pushLocked(delta.Delta{Type: delta.Replaced, Object: obj})
	}
}

// Resync asks for a resync. Atomic: one SyncAll delta. Otherwise a Sync
// delta with Known's object for every key of Known that has nothing
// queued, not transformed; a key whose lookup fails or finds nothing is
// skipped, and an object whose key cannot be computed stops Resync with
// its error, the syncs queued before it staying, as in client-go. Resync
// does not mark the FIFO populated.
func (f *FIFO) Resync() error {
	f.mu.Lock()
	defer f.mu.Unlock()

	if f.atomic {
		f.pushLocked(delta.Delta{Type: delta.SyncAll, Object: delta.SyncAllInfo{}})
		return nil
	}
	queued := make(map[string]struct{}, f.items.len())
	for _, d := range f.items.all() {
		k, err := f.KeyOf(d.Object)
		if err != nil {
			return delta.KeyError{Obj: d, Err: err}
		}
		queued[k] = struct{}{}
	}
	for _, k := range f.known.ListKeys() {
		if _, ok := queued[k]; ok {
			continue
		}
		obj, exists, err := f.known.GetByKey(k)
		if err != nil {
			utilruntime.HandleErrorWithContext(context.Background(), err, "Unable to queue object for sync", "key", k)
			continue
		} else if !exists {
			utilruntime.HandleErrorWithContext(context.Background(), nil,
				"Key does not exist in known objects store, unable to queue object for sync", "key", k)
			continue
		}
		if err := f.addLocked(delta.Sync, true, obj); err != nil {
			return fmt.Errorf("couldn't queue object: %w", err)
		}
	}
	return nil
}

// waitLocked waits until a delta is queued; false if the FIFO is closed
// and empty.
func (f *FIFO) waitLocked() bool {
	for f.items.len() == 0 {
		if f.closed.Load() {
			return false
		}
		f.cond.Wait()
	}
	return true
}

// Pop waits until a delta is queued (or the FIFO is closed and empty:
// delta.ErrClosed), removes the oldest and calls process with it as a
// one-delta delta.Deltas and whether it belongs to the initial population
// (the FIFO had not synced when the pop began). It returns that Deltas and
// process's error; nothing is requeued.
//
// process runs with the FIFO locked, except with UnlockWhileProcessing
// when fewer than 2*BatchSize deltas remain. If the delta belongs to the
// initial population, it is counted down after process returns, or panics,
// so Done closes only once the last initial delta has been processed. A
// process func that panics leaves the FIFO consistent: the delta removed,
// the count made, the lock released.
func (f *FIFO) Pop(process delta.PopProcessFunc) (any, error) {
	var slow func() // the SlowProcess call, made once the lock is released
	defer func() {
		if slow != nil {
			slow()
		}
	}()
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.waitLocked() {
		return nil, delta.ErrClosed
	}
	isInInitialList := !f.initial.Synced()
	item := f.items.take(0)
	f.items.drop(1)
	counted := min(1, f.initial.Pending())
	defer f.initial.Processed(counted)

	depth := f.items.len()
	start := f.slowStart(depth)
	err := f.whileProcessingLocked(func() error {
		return process(delta.Deltas{item}, isInInitialList)
	})
	slow = f.slowCall(item, depth, SlowTook, start, 0)
	return delta.Deltas{item}, err
}

// The slow-pop rule (client-go's trace condition, the_real_fifo.go:424-439, 558-572):
// more than SlowDepth deltas left queued and a process func that took more
// than SlowTook (for a batch of n, min(n*SlowTook, 1s)).
const (
	SlowDepth = 10
	SlowTook  = 100 * time.Millisecond
)

// slowStart returns the time a process func starts when the pop that left
// depth deltas queued could be reported slow, and the zero time otherwise:
// a pop that cannot be slow does not read the clock.
func (f *FIFO) slowStart(depth int) time.Time {
	if depth <= SlowDepth {
		return time.Time{}
	}
	return time.Now()
}

// slowCall returns the report of a pop of d (the first of a batch of
// batch, or a Pop's if batch is 0) that left depth deltas queued and whose
// process func started at start, or nil if the pop was not slow. The
// report is the SlowProcess call, or without one a trace as client-go's
// (delta.TraceSlowPop).
func (f *FIFO) slowCall(d delta.Delta, depth int, threshold time.Duration, start time.Time, batch int) func() {
	if start.IsZero() {
		return nil
	}
	took := time.Since(start)
	if took <= threshold {
		return nil
	}
	key := f.traceID(d)
	if f.slowProcess != nil {
		return func() { f.slowProcess(key, depth, took) }
	}
	if batch == 0 {
		return func() { delta.TraceSlowPop("RealFIFO Pop Process", key, depth, took) }
	}
	return func() {
		delta.TraceSlowPop("RealFIFO PopBatch Process", key, depth, took, utiltrace.Field{Key: "BatchSize", Value: batch})
	}
}

// whileProcessingLocked runs process, without the lock if
// UnlockWhileProcessing is set and fewer than 2*BatchSize deltas are
// queued; the lock is held again when it returns or panics.
func (f *FIFO) whileProcessingLocked(process func() error) error {
	if f.unlock && f.items.len() < 2*f.batchSize {
		f.mu.Unlock()
		defer f.mu.Lock()
	}
	return process()
}

// traceID is the ID a trace gives d: its key, or for a delta that carries
// no object (ReplacedAll, SyncAll, Bookmark) its type, so the key function
// never sees an info struct.
func (f *FIFO) traceID(d delta.Delta) string {
	if !batchable(d.Type) {
		return string(d.Type)
	}
	id, _ := f.KeyOf(d)
	return id
}

// batchable reports whether PopBatch may put a delta of type t in a batch.
func batchable(t delta.Type) bool {
	switch t {
	case delta.Sync, delta.Replaced, delta.Added, delta.Updated, delta.Deleted:
		return true
	}
	return false
}

// PopBatch waits until a delta is queued (or the FIFO is closed and empty:
// delta.ErrClosed) and hands over, oldest first, as many deltas as can go
// in one batch: at most BatchSize; never across the end of the initial
// population; never a delta that is not batchable (Sync, Replaced, Added,
// Updated, Deleted are), which, if it is the oldest, goes alone; up to and
// including a delta whose key cannot be computed; and never two deltas of
// one key (the batch ends before the second). A batch of one goes to
// processSingle as a delta.Deltas, a larger one to processBatch. It
// returns the process func's error; nothing is requeued. Locking, the
// initial count and panics are as for Pop.
func (f *FIFO) PopBatch(processBatch func(deltas []delta.Delta, isInInitialList bool) error, processSingle delta.PopProcessFunc) error {
	var slow func() // the SlowProcess call, made once the lock is released
	defer func() {
		if slow != nil {
			slow()
		}
	}()
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.waitLocked() {
		return delta.ErrClosed
	}
	isInInitialList := !f.initial.Synced()
	n := min(f.items.len(), f.batchSize)
	deltas := make([]delta.Delta, 0, n)
	unique := make(map[string]struct{}, n)
	for i := 0; i < n; i++ {
		if f.initial.Pending() > 0 && i >= f.initial.Pending() {
			break
		}
		item := f.items.at(i)
		if !batchable(item.Type) {
			if len(deltas) == 0 {
				deltas = append(deltas, f.items.take(i))
			}
			break
		}
		id, err := f.KeyOf(item)
		if err != nil {
			deltas = append(deltas, f.items.take(i))
			break
		}
		if _, dup := unique[id]; dup {
			break
		}
		unique[id] = struct{}{}
		deltas = append(deltas, f.items.take(i))
	}
	f.items.drop(len(deltas))
	counted := min(len(deltas), f.initial.Pending())
	defer f.initial.Processed(counted)

	depth, took := f.items.len(), min(SlowTook*time.Duration(len(deltas)), time.Second)
	start := f.slowStart(depth)
	var err error
	if len(deltas) == 1 {
		err = f.whileProcessingLocked(func() error {
			return processSingle(delta.Deltas{deltas[0]}, isInInitialList)
		})
	} else {
		err = f.whileProcessingLocked(func() error {
			return processBatch(deltas, isInInitialList)
		})
	}
	slow = f.slowCall(deltas[0], depth, took, start, len(deltas))
	return err
}
