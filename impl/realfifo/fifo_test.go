package realfifo

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
	"weak"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kverify/kverify/impl/delta"
	"github.com/kverify/kverify/impl/delta/deltatest"
)

func queued(f *FIFO) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, d := range f.items.all() {
		out = append(out, deltatest.DescribeDeltas([]delta.Delta{d}))
	}
	return out
}

func length(f *FIFO) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.items.len()
}

// popAll pops single deltas until the FIFO is empty; "(initial)" marks
// initial ones.
func popAll(t *testing.T, f *FIFO) []string {
	t.Helper()
	var out []string
	for length(f) > 0 {
		var got string
		item, err := f.Pop(func(o any, initial bool) error {
			got = deltatest.DescribeDeltas(o.(delta.Deltas))
			if initial {
				got += " (initial)"
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if ds := item.(delta.Deltas); len(ds) != 1 {
			t.Fatalf("Pop returned %d deltas", len(ds))
		}
		out = append(out, got)
	}
	return out
}

// popBatches pops with PopBatch until the FIFO is empty; a single delta is
// "single:", a batch "batch:".
func popBatches(t *testing.T, f *FIFO) []string {
	t.Helper()
	var out []string
	for length(f) > 0 {
		err := f.PopBatch(func(ds []delta.Delta, initial bool) error {
			if len(ds) < 2 {
				t.Errorf("batch of %d", len(ds))
			}
			out = append(out, fmt.Sprintf("batch:%s%s", deltatest.DescribeDeltas(ds), mark(initial)))
			return nil
		}, func(o any, initial bool) error {
			out = append(out, fmt.Sprintf("single:%s%s", deltatest.DescribeDeltas(o.(delta.Deltas)), mark(initial)))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func mark(initial bool) string {
	if initial {
		return " (initial)"
	}
	return ""
}

func atomicFIFO(t *testing.T, opts Options) *FIFO {
	t.Helper()
	opts.Atomic = true
	f, err := New(opts)
	deltatest.Must(t, err)
	return f
}

func TestNewRejectsInvalidOptions(t *testing.T) {
	k := deltatest.Known{}
	for _, opts := range []Options{
		{Atomic: true, Known: k},
		{Known: k, UnlockWhileProcessing: true},
		{},
		{Known: k, Bookmarks: true},
		{Atomic: true, BatchSize: -1},
	} {
		if f, err := New(opts); f != nil || !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("New(%+v) = %v, %v", opts, f, err)
		}
	}
	for _, opts := range []Options{
		{Known: k},
		{Atomic: true, UnlockWhileProcessing: true, Bookmarks: true},
	} {
		if _, err := New(opts); err != nil {
			t.Errorf("New(%+v): %v", opts, err)
		}
	}
}

func TestOneDeltaPerCallInOrder(t *testing.T) {
	f := atomicFIFO(t, Options{})
	deltatest.Must(t, f.Delete(deltatest.Obj("never-seen", "1"))) // never dropped
	deltatest.Must(t, f.Add(deltatest.Obj("a", "1")))
	deltatest.Must(t, f.Update(deltatest.Obj("a", "2")))
	deltatest.Must(t, f.Update(deltatest.Obj("a", "2")))
	deltatest.Must(t, f.Delete(deltatest.Obj("a", "3")))
	deltatest.Must(t, f.Delete(deltatest.Obj("a", "3")))
	deltatest.Check(t, popAll(t, f), []string{
		"Deleted:never-seen@1", "Added:a@1", "Updated:a@2", "Updated:a@2", "Deleted:a@3", "Deleted:a@3",
	})
}

func TestAtomicReplaceResyncBookmark(t *testing.T) {
	calls := 0
	f := atomicFIFO(t, Options{Transform: func(o any) (any, error) {
		calls++
		c := o.(*metav1.PartialObjectMetadata).DeepCopy()
		c.ResourceVersion += "t"
		return c, nil
	}})
	deltatest.Must(t, f.Bookmark("0")) // Bookmarks off: nothing
	deltatest.Must(t, f.Replace([]any{deltatest.Obj("a", "1"), deltatest.Obj("b", "1")}, "5"))
	deltatest.Must(t, f.Resync())
	deltatest.Must(t, f.Add(deltatest.Obj("c", "1")))
	deltatest.Check(t, popAll(t, f), []string{"ReplacedAll:5[a@1t,b@1t] (initial)", "SyncAll:all", "Added:c@1t"})
	if calls != 3 {
		t.Errorf("transform called %d times", calls)
	}

	f = atomicFIFO(t, Options{Bookmarks: true})
	deltatest.Must(t, f.Bookmark("7"))
	deltatest.Check(t, popAll(t, f), []string{"Bookmark:7 (initial)"})
	if f.HasSynced() {
		t.Error("a Bookmark marked the FIFO populated")
	}
}

func TestNonAtomicReplace(t *testing.T) {
	k := deltatest.Known{"ns/k1": deltatest.Obj("k1", "1"), "ns/k2": deltatest.Obj("k2", "1"), "ns/k3": nil, "ns/x": deltatest.Obj("x", "0")}
	f, err := New(Options{Known: k})
	deltatest.Must(t, err)
	deltatest.Must(t, f.Add(deltatest.Obj("z", "1")))
	deltatest.Must(t, f.Add(deltatest.Obj("x", "1")))
	deltatest.Must(t, f.Add(deltatest.Obj("y", "1")))
	deltatest.Must(t, f.Delete(deltatest.Obj("y", "2")))
	deltatest.Must(t, f.Update(deltatest.Obj("z", "2")))
	deltatest.Must(t, f.Add(deltatest.Obj("a", "1")))
	deltatest.Must(t, f.Replace([]any{deltatest.Obj("k1", "5"), deltatest.Obj("a", "5")}, "5"))
	deltatest.Check(t, popAll(t, f), []string{
		"Added:z@1", "Added:x@1", "Added:y@1", "Deleted:y@2", "Updated:z@2", "Added:a@1",
		"Deleted:dfsu(z,z@2)", // queued keys in first-queued order, last queued object
		"Deleted:dfsu(x,x@1)", // (y's last delta is a Deleted: no tombstone)
		"Deleted:dfsu(k2,k2@1)",
		"Deleted:dfsu(k3,nil)",
		"Replaced:k1@5", "Replaced:a@5",
	})
}

func TestInitialPopulation(t *testing.T) {
	f, err := New(Options{Known: deltatest.Known{"ns/k": deltatest.Obj("k", "1")}, BatchSize: 10})
	deltatest.Must(t, err)
	deltatest.Must(t, f.Replace([]any{deltatest.Obj("a", "1"), deltatest.Obj("b", "1")}, "1"))
	deltatest.Must(t, f.Add(deltatest.Obj("c", "1")))
	if f.HasSynced() {
		t.Fatal("synced before the pops")
	}
	var doneDuringLast bool
	for i := 0; i < 3; i++ {
		_, err := f.Pop(func(_ any, initial bool) error {
			if !initial {
				t.Errorf("pop %d not initial", i)
			}
			doneDuringLast = deltatest.IsClosed(f.Done()) || f.HasSynced()
			return nil
		})
		deltatest.Must(t, err)
	}
	if doneDuringLast || !f.HasSynced() {
		t.Errorf("synced during the last initial process %v; after it %v", doneDuringLast, f.HasSynced())
	}
	deltatest.Check(t, popAll(t, f), []string{"Added:c@1"})
}

func TestPopBatchRules(t *testing.T) {
	failing := atomic.Value{}
	failing.Store("")
	keyFunc := func(o any) (string, error) {
		m := o.(*metav1.PartialObjectMetadata)
		if m.Name == failing.Load() {
			return "", errors.New("cannot key")
		}
		return m.Name, nil
	}
	f := atomicFIFO(t, Options{KeyFunc: keyFunc, BatchSize: 3, Bookmarks: true})
	deltatest.Must(t, f.Replace([]any{deltatest.Obj("i1", "1"), deltatest.Obj("i2", "1")}, "1"))
	deltatest.Must(t, f.Add(deltatest.Obj("x", "1")))
	deltatest.Must(t, f.Replace([]any{deltatest.Obj("i1", "1"), deltatest.Obj("i2", "1")}, "1"))
	for _, n := range []string{"a", "b", "c", "d"} {
		deltatest.Must(t, f.Add(deltatest.Obj(n, "1")))
	}
	deltatest.Must(t, f.Update(deltatest.Obj("d", "2")))
	deltatest.Must(t, f.Add(deltatest.Obj("e", "1")))
	deltatest.Must(t, f.Bookmark("9"))
	deltatest.Must(t, f.Add(deltatest.Obj("bad", "1")))
	deltatest.Must(t, f.Add(deltatest.Obj("f", "1")))
	deltatest.Must(t, f.Add(deltatest.Obj("g", "1")))
	failing.Store("bad")
	deltatest.Check(t, popBatches(t, f), []string{
		"single:ReplacedAll:1[i1@1,i2@1] (initial)", // initial population: 1 delta, not batchable anyway
		"single:Added:x@1",                          // the ReplacedAll after it is not batchable
		"single:ReplacedAll:1[i1@1,i2@1]",           // alone: not batchable
		"batch:Added:a@1 Added:b@1 Added:c@1",       // BatchSize
		"single:Added:d@1",                          // stops before a second delta of d
		"batch:Updated:d@2 Added:e@1",               // stops at the Bookmark
		"single:Bookmark:9",
		"single:Added:bad@1", // a key error: included, ends the batch
		"batch:Added:f@1 Added:g@1",
	})
}

func TestPopBatchKeyErrorEndsBatch(t *testing.T) {
	failing := atomic.Value{}
	failing.Store("")
	f := atomicFIFO(t, Options{KeyFunc: func(o any) (string, error) {
		m := o.(*metav1.PartialObjectMetadata)
		if m.Name == failing.Load() {
			return "", errors.New("cannot key")
		}
		return m.Name, nil
	}})
	for _, n := range []string{"a", "bad", "b", "c"} {
		deltatest.Must(t, f.Add(deltatest.Obj(n, "1")))
	}
	failing.Store("bad")
	deltatest.Check(t, popBatches(t, f), []string{"batch:Added:a@1 Added:bad@1", "batch:Added:b@1 Added:c@1"})
}

func TestPopBatchInitialBoundary(t *testing.T) {
	f, err := New(Options{Known: deltatest.Known{"ns/k": deltatest.Obj("k", "1")}})
	deltatest.Must(t, err)
	deltatest.Must(t, f.Replace([]any{deltatest.Obj("a", "1"), deltatest.Obj("b", "1")}, "1"))
	deltatest.Must(t, f.Add(deltatest.Obj("c", "1")))
	deltatest.Must(t, f.Add(deltatest.Obj("d", "1")))
	deltatest.Check(t, popBatches(t, f), []string{
		"batch:Deleted:dfsu(k,k@1) Replaced:a@1 Replaced:b@1 (initial)",
		"batch:Added:c@1 Added:d@1",
	})
	if !f.HasSynced() {
		t.Error("not synced")
	}
}

func TestReplaceAllOrNothing(t *testing.T) {
	bad := errors.New("bad transform")
	transform := func(o any) (any, error) {
		if o.(*metav1.PartialObjectMetadata).Name == "t" {
			return nil, bad
		}
		return o, nil
	}
	var typedNil *metav1.PartialObjectMetadata
	nonAtomic, err := New(Options{Known: deltatest.Known{"ns/k": deltatest.Obj("k", "1")}, Transform: transform})
	deltatest.Must(t, err)
	for name, f := range map[string]*FIFO{"atomic": atomicFIFO(t, Options{Transform: transform}), "non-atomic": nonAtomic} {
		var ke delta.KeyError
		if err := f.Replace([]any{deltatest.Obj("a", "1"), typedNil}, "1"); !errors.As(err, &ke) {
			t.Errorf("%s: Replace with a typed nil = %v", name, err)
		}
		if err := f.Replace([]any{deltatest.Obj("a", "1"), deltatest.Obj("t", "1")}, "1"); !errors.Is(err, bad) {
			t.Errorf("%s: Replace with a failing transform = %v", name, err)
		}
		if length(f) != 0 || f.HasSynced() {
			t.Errorf("%s: failed Replaces changed the FIFO: %v", name, queued(f))
		}
	}
}

func TestNilObjectsAreKeyErrors(t *testing.T) {
	f := atomicFIFO(t, Options{KeyFunc: func(o any) (string, error) {
		return o.(*metav1.PartialObjectMetadata).Name, nil // panics on nil
	}})
	var typedNil *metav1.PartialObjectMetadata
	for _, o := range []any{nil, typedNil} {
		for name, op := range map[string]func(any) error{"Add": f.Add, "Update": f.Update, "Delete": f.Delete} {
			var ke delta.KeyError
			if err := op(o); !errors.As(err, &ke) {
				t.Errorf("%s(%#v) = %v", name, o, err)
			}
		}
	}
	if _, err := f.KeyOf(delta.Deltas{}); !errors.Is(err, delta.ErrZeroLengthDeltas) {
		t.Errorf("KeyOf(empty Deltas) = %v", err)
	}
	if k, err := f.KeyOf(delta.Delta{Object: delta.DeletedFinalStateUnknown{Key: "t"}}); k != "t" || err != nil {
		t.Errorf("KeyOf(Delta) = %q, %v", k, err)
	}
	if length(f) != 0 {
		t.Errorf("queued %v", queued(f))
	}
}

func TestNonAtomicResync(t *testing.T) {
	calls := 0
	k := deltatest.Known{"ns/a": deltatest.Obj("a", "1"), "ns/b": deltatest.Obj("b", "1"), "ns/broken": nil}
	f, err := New(Options{Known: k, Transform: func(o any) (any, error) { calls++; return o, nil }})
	deltatest.Must(t, err)
	deltatest.Must(t, f.Update(deltatest.Obj("a", "2")))
	deltatest.Must(t, f.Resync())
	deltatest.Check(t, popAll(t, f), []string{"Updated:a@2", "Sync:b@1"})
	if calls != 1 {
		t.Errorf("transform called %d times, want only for the Update", calls)
	}

	// The error of a known object that cannot be keyed is reported.
	var typedNil *metav1.PartialObjectMetadata
	f, err = New(Options{Known: deltatest.Known{"ns/a": deltatest.Obj("a", "1"), "ns/b": typedNil}})
	deltatest.Must(t, err)
	err = f.Resync()
	var ke delta.KeyError
	if !errors.As(err, &ke) || !strings.Contains(err.Error(), "nil object") {
		t.Errorf("Resync = %v, want the KeyError", err)
	}
	deltatest.Check(t, queued(f), []string{"Sync:a@1"})
}

func TestUnlockWhileProcessing(t *testing.T) {
	f := atomicFIFO(t, Options{UnlockWhileProcessing: true, BatchSize: 1})
	deltatest.Must(t, f.Add(deltatest.Obj("a", "1")))
	deltatest.Must(t, f.Add(deltatest.Obj("b", "1")))
	deltatest.Must(t, f.Add(deltatest.Obj("c", "1")))
	lockedDuring := func() (locked bool) {
		_, err := f.Pop(func(any, bool) error {
			if f.mu.TryLock() {
				f.mu.Unlock()
				return nil
			}
			locked = true
			return nil
		})
		deltatest.Must(t, err)
		return locked
	}
	if !lockedDuring() { // 2 left: not fewer than 2*BatchSize
		t.Error("unlocked with 2*BatchSize deltas queued")
	}
	if lockedDuring() { // 1 left
		t.Error("locked with fewer than 2*BatchSize deltas queued")
	}
	// Unlocked, process may produce.
	_, err := f.Pop(func(any, bool) error { return f.Add(deltatest.Obj("d", "1")) })
	deltatest.Must(t, err)
	deltatest.Check(t, popAll(t, f), []string{"Added:d@1"})
}

// A Replace that lands while a delta queued before it is being processed
// (unlocked) does not count that delta as one of its own.
func TestCountDecidedAtPop(t *testing.T) {
	f := atomicFIFO(t, Options{UnlockWhileProcessing: true, Bookmarks: true})
	deltatest.Must(t, f.Bookmark("1"))
	_, err := f.Pop(func(any, bool) error {
		return f.Replace([]any{deltatest.Obj("a", "1")}, "2")
	})
	deltatest.Must(t, err)
	if f.HasSynced() {
		t.Fatal("synced before the ReplacedAll was processed")
	}
	deltatest.Check(t, popAll(t, f), []string{"ReplacedAll:2[a@1] (initial)"})
	if !f.HasSynced() {
		t.Error("not synced")
	}
}

func TestProcessPanicKeepsFIFOConsistent(t *testing.T) {
	for _, unlock := range []bool{false, true} {
		f := atomicFIFO(t, Options{UnlockWhileProcessing: unlock})
		deltatest.Must(t, f.Replace([]any{deltatest.Obj("a", "1")}, "1"))
		deltatest.Must(t, f.Add(deltatest.Obj("b", "1")))
		deltatest.Must(t, f.Add(deltatest.Obj("c", "1")))
		deltatest.Must(t, f.Add(deltatest.Obj("d", "1")))
		recovered := func(pop func()) (r any) {
			defer func() { r = recover() }()
			pop()
			return nil
		}
		r := recovered(func() { _, _ = f.Pop(func(any, bool) error { panic("bug") }) })
		if r != "bug" || !f.HasSynced() {
			t.Errorf("unlock=%v: recovered %v, synced %v", unlock, r, f.HasSynced())
		}
		r = recovered(func() {
			_ = f.PopBatch(func([]delta.Delta, bool) error { panic("batch bug") }, nil)
		})
		if r != "batch bug" {
			t.Errorf("unlock=%v: recovered %v", unlock, r)
		}
		deltatest.Must(t, f.Add(deltatest.Obj("e", "1"))) // the lock was released
		deltatest.Check(t, popAll(t, f), []string{"Added:e@1"})
	}
}

func TestPoppedDeltasNotRetained(t *testing.T) {
	f := atomicFIFO(t, Options{})
	o := deltatest.Obj("a", "1")
	w := weak.Make(o)
	deltatest.Must(t, f.Add(o))
	deltatest.Must(t, f.Add(deltatest.Obj("b", "1")))
	o = nil
	_, err := f.Pop(func(any, bool) error { return nil })
	deltatest.Must(t, err)
	runtime.GC()
	if w.Value() != nil {
		t.Error("a popped object is still reachable")
	}
	deltatest.Must(t, f.PopBatch(nil, func(any, bool) error { return nil }))

	const n = 5000
	for i := range n {
		deltatest.Must(t, f.Add(deltatest.Obj(fmt.Sprint(i), "1")))
	}
	for i := 0; length(f) > 0; i++ {
		pop := func(any, bool) error { return nil }
		if i%2 == 0 {
			_, err = f.Pop(pop)
		} else {
			err = f.PopBatch(func([]delta.Delta, bool) error { return nil }, pop)
		}
		deltatest.Must(t, err)
		f.mu.Lock()
		for _, d := range f.items.items[:f.items.head] {
			if d != (delta.Delta{}) {
				t.Fatalf("a popped delta is still referenced: %v", d)
			}
		}
		f.mu.Unlock()
	}
	if cap(f.items.items) > keepCap {
		t.Errorf("after the burst: array cap %d", cap(f.items.items))
	}
}

func TestPopBlocksAndClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := atomicFIFO(t, Options{})
		errs := make(chan error, 2)
		go func() {
			_, err := f.Pop(func(any, bool) error { return nil })
			errs <- err
			errs <- f.PopBatch(nil, nil)
		}()
		synctest.Wait()
		if len(errs) != 0 {
			t.Fatal("Pop returned on an empty FIFO")
		}
		deltatest.Must(t, f.Add(deltatest.Obj("a", "1")))
		synctest.Wait()
		deltatest.Must(t, <-errs)
		f.Close()
		f.Close()
		if err := <-errs; !errors.Is(err, delta.ErrClosed) {
			t.Errorf("blocked PopBatch after Close: %v", err)
		}
		deltatest.Must(t, f.Add(deltatest.Obj("b", "1")))
		deltatest.Check(t, popAll(t, f), []string{"Added:b@1"})
		if _, err := f.Pop(nil); !errors.Is(err, delta.ErrClosed) || !f.IsClosed() {
			t.Errorf("Pop on closed and empty: %v", err)
		}
	})
}

// Producers and one unlocked batch consumer, under the race detector.
func TestConcurrent(t *testing.T) {
	f := atomicFIFO(t, Options{UnlockWhileProcessing: true, BatchSize: 4, Bookmarks: true})
	var wg sync.WaitGroup
	for p := range 3 {
		wg.Go(func() {
			for i := range 300 {
				o := deltatest.Obj(fmt.Sprint(p, "-", i%20), fmt.Sprint(i))
				switch i % 5 {
				case 0:
					_ = f.Add(o)
				case 1:
					_ = f.Update(o)
				case 2:
					_ = f.Delete(o)
				case 3:
					_ = f.Bookmark(fmt.Sprint(i))
				default:
					_ = f.Resync()
					_ = f.Replace([]any{o}, "x")
				}
			}
		})
	}
	var n atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			err := f.PopBatch(func(ds []delta.Delta, _ bool) error {
				n.Add(int64(len(ds)))
				return nil
			}, func(any, bool) error {
				n.Add(1)
				return nil
			})
			if err != nil {
				return
			}
		}
	}()
	wg.Wait()
	f.Close()
	<-done
	if n.Load() != 3*360 { // 4 calls of 5 queue one delta, the fifth two
		t.Errorf("popped %d deltas, want %d", n.Load(), 3*360)
	}
}

// Without SlowProcess a slow Pop or PopBatch is logged as client-go's
// trace, and only a slow one: the trace is made after the pop.
func TestSlowPopTracedByDefault(t *testing.T) {
	k := deltatest.CaptureKlog(t)
	synctest.Test(t, func(t *testing.T) {
		f := atomicFIFO(t, Options{BatchSize: 2})
		for i := range 16 {
			deltatest.Must(t, f.Add(deltatest.Obj(fmt.Sprint(i), "1")))
		}
		sleep := func(d time.Duration) func(any, bool) error {
			return func(any, bool) error { time.Sleep(d); return nil }
		}
		_, err := f.Pop(sleep(150 * time.Millisecond)) // depth 15
		deltatest.Must(t, err)
		_, err = f.Pop(sleep(100 * time.Millisecond)) // not longer than 100 ms
		deltatest.Must(t, err)
		batch := func(d time.Duration) error {
			return f.PopBatch(func([]delta.Delta, bool) error { time.Sleep(d); return nil }, sleep(d))
		}
		deltatest.Must(t, batch(250*time.Millisecond)) // 2 deltas, depth 12: over 200 ms
		deltatest.Must(t, batch(200*time.Millisecond)) // not longer than 2 × 100 ms
	})
	got := k.String()
	for _, want := range []string{
		`"RealFIFO Pop Process" ID:ns/0,Depth:15,Reason:slow event handlers blocking the queue,Took:150ms `,
		`"RealFIFO PopBatch Process" ID:ns/2,Depth:12,Reason:slow event handlers blocking the queue,BatchSize:2,Took:250ms `,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("klog got %q, want it to contain %q", got, want)
		}
	}
	if n := strings.Count(got, "Trace["); n != 2*2 { // a trace is a header and an END line
		t.Errorf("klog got %q: %d trace lines, want 4", got, n)
	}
}
