package deltafifo

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
	"weak"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kverify/kverify/impl/delta"
	"github.com/kverify/kverify/impl/delta/deltatest"
)

// pop pops one key without blocking (the FIFO must not be empty) and
// describes its deltas and isInInitialList.
func pop(t *testing.T, f *FIFO) string {
	t.Helper()
	if len(f.ListKeys()) == 0 {
		t.Fatal("pop from an empty FIFO")
	}
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
	if deltatest.DescribeDeltas(item.(delta.Deltas)) != strings.TrimSuffix(got, " (initial)") {
		t.Fatalf("Pop returned %v, process got %v", item, got)
	}
	return got
}

func popAll(t *testing.T, f *FIFO) []string {
	t.Helper()
	var out []string
	for len(f.ListKeys()) > 0 {
		out = append(out, pop(t, f))
	}
	return out
}

// Per-key accumulation in first-touch order (client-go's DeltaFIFO doc).
func TestAccumulationFirstTouchOrder(t *testing.T) {
	f := New(Options{})
	deltatest.Must(t, f.Add(deltatest.Obj("a", "1")))
	deltatest.Must(t, f.Add(deltatest.Obj("b", "1")))
	deltatest.Must(t, f.Update(deltatest.Obj("a", "2")))
	deltatest.Must(t, f.Update(deltatest.Obj("a", "2")))
	deltatest.Must(t, f.Delete(deltatest.Obj("b", "2")))
	deltatest.Check(t, f.ListKeys(), []string{"ns/a", "ns/b"})
	deltatest.Check(t, popAll(t, f), []string{
		"Added:a@1 Updated:a@2 Updated:a@2",
		"Added:b@1 Deleted:b@2",
	})
	// A popped key queued again goes to the tail.
	deltatest.Must(t, f.Add(deltatest.Obj("a", "3")))
	deltatest.Must(t, f.Add(deltatest.Obj("c", "1")))
	deltatest.Must(t, f.Update(deltatest.Obj("a", "4")))
	deltatest.Check(t, popAll(t, f), []string{"Added:a@3 Updated:a@4", "Added:c@1"})
}

func TestDeletionDedup(t *testing.T) {
	f := New(Options{})
	a, b := deltatest.Obj("a", "1"), deltatest.Obj("b", "1")
	deltatest.Must(t, f.Add(a))
	deltatest.Must(t, f.Delete(deltatest.Obj("a", "2")))
	deltatest.Must(t, f.Delete(delta.DeletedFinalStateUnknown{Key: "ns/a", Obj: a}))
	deltatest.Must(t, f.Add(b))
	deltatest.Must(t, f.Delete(delta.DeletedFinalStateUnknown{Key: "ns/b", Obj: b}))
	deltatest.Must(t, f.Delete(deltatest.Obj("b", "3")))
	deltatest.Must(t, f.Add(deltatest.Obj("c", "1")))
	deltatest.Must(t, f.Delete(deltatest.Obj("c", "2")))
	deltatest.Must(t, f.Delete(deltatest.Obj("c", "3")))
	deltatest.Check(t, popAll(t, f), []string{
		"Added:a@1 Deleted:a@2", // older real deletion kept
		"Added:b@1 Deleted:b@3", // older tombstone replaced
		"Added:c@1 Deleted:c@2", // older kept
	})
}

func TestDeleteSuppression(t *testing.T) {
	f := New(Options{})
	deltatest.Must(t, f.Delete(deltatest.Obj("a", "1")))
	if len(f.ListKeys()) != 0 {
		t.Error("Delete of an unqueued key without Known was queued")
	}
	if !f.HasSynced() {
		t.Error("Delete did not mark the FIFO populated")
	}

	k := deltatest.Known{"ns/known": deltatest.Obj("known", "1"), "ns/broken": nil}
	f = New(Options{Known: k})
	deltatest.Must(t, f.Delete(deltatest.Obj("gone", "1")))   // not known, not queued: dropped
	deltatest.Must(t, f.Delete(deltatest.Obj("known", "2")))  // known
	deltatest.Must(t, f.Delete(deltatest.Obj("broken", "2"))) // lookup error: queued
	deltatest.Must(t, f.Add(deltatest.Obj("q", "1")))
	deltatest.Must(t, f.Delete(deltatest.Obj("q", "2"))) // queued
	deltatest.Check(t, popAll(t, f), []string{"Deleted:known@2", "Deleted:broken@2", "Added:q@1 Deleted:q@2"})
}

func TestReplaceTombstones(t *testing.T) {
	k := deltatest.Known{"ns/k1": deltatest.Obj("k1", "1"), "ns/k2": deltatest.Obj("k2", "1"), "ns/k3": nil, "ns/x": deltatest.Obj("x", "0")}
	f := New(Options{Known: k})
	deltatest.Must(t, f.Add(deltatest.Obj("z", "1")))
	deltatest.Must(t, f.Add(deltatest.Obj("x", "1")))
	deltatest.Must(t, f.Delete(delta.DeletedFinalStateUnknown{Key: "ns/y", Obj: deltatest.Obj("y", "1")})) // dropped: not known
	deltatest.Must(t, f.Add(deltatest.Obj("y", "1")))
	deltatest.Must(t, f.Delete(delta.DeletedFinalStateUnknown{Key: "ns/y", Obj: deltatest.Obj("y", "1")}))
	deltatest.Must(t, f.Replace([]any{deltatest.Obj("a", "5"), deltatest.Obj("k1", "5")}, "5"))
	deltatest.Check(t, f.ListKeys(), []string{"ns/z", "ns/x", "ns/y", "ns/a", "ns/k1", "ns/k2", "ns/k3"})
	deltatest.Check(t, popAll(t, f), []string{
		"Added:z@1 Deleted:dfsu(z,z@1)", // queued keys in queue order
		"Added:x@1 Deleted:dfsu(x,x@1)", // newest queued object, not the known one
		"Added:y@1 Deleted:dfsu(y,y@1)", // a tombstone's object, unwrapped; coalesced
		"Sync:a@5",
		"Sync:k1@5",
		"Deleted:dfsu(k2,k2@1)", // known, not queued: the known object
		"Deleted:dfsu(k3,nil)",  // lookup failed
	})

	f = New(Options{EmitReplaced: true})
	deltatest.Must(t, f.Add(deltatest.Obj("a", "1")))
	deltatest.Must(t, f.Replace([]any{deltatest.Obj("a", "2"), deltatest.Obj("b", "2")}, "2"))
	deltatest.Check(t, popAll(t, f), []string{"Added:a@1 Replaced:a@2", "Replaced:b@2"})
}

func TestInitialPopulation(t *testing.T) {
	k := deltatest.Known{"ns/k": deltatest.Obj("k", "1")}
	f := New(Options{Known: k})
	if f.HasSynced() {
		t.Fatal("synced before anything")
	}
	// Distinct listed keys (2) plus tombstones (1).
	deltatest.Must(t, f.Replace([]any{deltatest.Obj("a", "1"), deltatest.Obj("b", "1"), deltatest.Obj("a", "2")}, "1"))
	if f.HasSynced() {
		t.Fatal("synced before the pops")
	}
	deltatest.Must(t, f.Replace([]any{deltatest.Obj("c", "1")}, "2")) // not the first: no new count
	var doneInLast bool
	for i := 0; i < 3; i++ {
		_, err := f.Pop(func(o any, initial bool) error {
			if !initial {
				t.Errorf("pop %d not initial", i)
			}
			doneInLast = deltatest.IsClosed(f.Done()) || f.HasSynced()
			return nil
		})
		deltatest.Must(t, err)
	}
	if doneInLast {
		t.Error("synced while the last initial item was processed")
	}
	if !f.HasSynced() || !deltatest.IsClosed(f.Done()) {
		t.Fatal("not synced after the initial items")
	}
	if got := pop(t, f); strings.HasSuffix(got, "(initial)") {
		t.Errorf("pop after sync: %s", got)
	}
}

func TestAddBeforeReplaceSyncs(t *testing.T) {
	f := New(Options{})
	_ = f.Add(nil) // rejected, but marks the FIFO populated, as client-go
	if !f.HasSynced() {
		t.Fatal("Add did not mark the FIFO populated")
	}
	deltatest.Must(t, f.Replace([]any{deltatest.Obj("a", "1")}, "1"))
	if got := pop(t, f); got != "Sync:a@1" {
		t.Errorf("got %s", got)
	}
}

func TestReplaceAllOrNothing(t *testing.T) {
	k := deltatest.Known{"ns/k": deltatest.Obj("k", "1")}
	bad := errors.New("bad transform")
	f := New(Options{Known: k, Transform: func(o any) (any, error) {
		if o.(*metav1.PartialObjectMetadata).Name == "t" {
			return nil, bad
		}
		return o, nil
	}})
	var typedNil *metav1.PartialObjectMetadata
	var ke delta.KeyError
	if err := f.Replace([]any{deltatest.Obj("a", "1"), typedNil, deltatest.Obj("b", "1")}, "1"); !errors.As(err, &ke) {
		t.Fatalf("Replace with a typed nil = %v, want KeyError", err)
	}
	if err := f.Replace([]any{deltatest.Obj("a", "1"), deltatest.Obj("t", "1")}, "1"); !errors.Is(err, bad) {
		t.Fatalf("Replace with a failing transform = %v", err)
	}
	if len(f.ListKeys()) != 0 || f.HasSynced() {
		t.Fatalf("failed Replaces changed the FIFO: %v, synced %v", f.ListKeys(), f.HasSynced())
	}
	deltatest.Must(t, f.Replace([]any{deltatest.Obj("a", "1")}, "1"))
	deltatest.Check(t, popAll(t, f), []string{"Sync:a@1 (initial)", "Deleted:dfsu(k,k@1) (initial)"})
	if !f.HasSynced() {
		t.Error("not synced")
	}
}

func TestTransformOnce(t *testing.T) {
	calls := map[string]int{}
	k := deltatest.Known{"ns/k": deltatest.Obj("k", "1"), "ns/gone": deltatest.Obj("gone", "1")}
	f := New(Options{Known: k, Transform: func(o any) (any, error) {
		m := o.(*metav1.PartialObjectMetadata)
		calls[m.Name]++
		c := m.DeepCopy()
		c.ResourceVersion += "t"
		return c, nil
	}})
	deltatest.Must(t, f.Add(deltatest.Obj("a", "1")))
	deltatest.Must(t, f.Update(deltatest.Obj("a", "2")))
	deltatest.Must(t, f.Delete(deltatest.Obj("a", "3")))
	deltatest.Must(t, f.Delete(deltatest.Obj("unknown", "1"))) // dropped: not transformed
	deltatest.Must(t, f.Replace([]any{deltatest.Obj("b", "1")}, "1"))
	deltatest.Must(t, f.Resync())
	deltatest.Check(t, popAll(t, f), []string{
		"Added:a@1t Updated:a@2t Deleted:a@3t", // the tombstone coalesced away
		"Sync:b@1t",
		"Deleted:dfsu(gone,gone@1)",
		"Deleted:dfsu(k,k@1)",
	})
	deltatest.Must(t, f.Resync())
	deltatest.Check(t, popAll(t, f), []string{"Sync:gone@1", "Sync:k@1"})
	if want := map[string]int{"a": 3, "b": 1}; fmt.Sprint(calls) != fmt.Sprint(want) {
		t.Errorf("transform calls %v, want %v", calls, want)
	}
}

func TestResync(t *testing.T) {
	if err := New(Options{}).Resync(); err != nil {
		t.Errorf("Resync without Known: %v", err)
	}
	k := deltatest.Known{"ns/a": deltatest.Obj("a", "1"), "ns/b": deltatest.Obj("b", "1"), "ns/broken": nil}
	f := New(Options{Known: k})
	deltatest.Must(t, f.Update(deltatest.Obj("a", "2")))
	deltatest.Must(t, f.Resync())
	deltatest.Check(t, popAll(t, f), []string{"Updated:a@2", "Sync:b@1"})

	var typedNil *metav1.PartialObjectMetadata
	f = New(Options{Known: deltatest.Known{"ns/a": deltatest.Obj("a", "1"), "ns/b": typedNil}})
	var ke delta.KeyError
	if err := f.Resync(); !errors.As(err, &ke) {
		t.Errorf("Resync of a typed nil = %v", err)
	}
	deltatest.Check(t, f.ListKeys(), []string{"ns/a"}) // as client-go: the syncs before stay
}

func TestNilObjectsAreKeyErrors(t *testing.T) {
	f := New(Options{KeyFunc: func(o any) (string, error) {
		return o.(*metav1.PartialObjectMetadata).Name, nil // panics on nil
	}})
	var typedNil *metav1.PartialObjectMetadata
	for _, o := range []any{nil, typedNil} {
		var ke delta.KeyError
		for name, op := range map[string]func(any) error{"Add": f.Add, "Update": f.Update, "Delete": f.Delete} {
			if err := op(o); !errors.As(err, &ke) {
				t.Errorf("%s(%#v) = %v", name, o, err)
			}
		}
		if err := f.Replace([]any{o}, ""); !errors.As(err, &ke) {
			t.Errorf("Replace(%#v) = %v", o, err)
		}
		if _, _, err := f.Get(o); !errors.As(err, &ke) {
			t.Errorf("Get(%#v) = %v", o, err)
		}
		if _, err := f.KeyOf(delta.Deltas{{Type: delta.Added, Object: o}}); err == nil {
			t.Errorf("KeyOf(Deltas{%#v}): no error", o)
		}
	}
	if _, err := f.KeyOf(delta.Deltas{}); !errors.Is(err, delta.ErrZeroLengthDeltas) {
		t.Errorf("KeyOf(empty Deltas) = %v", err)
	}
	if k, err := f.KeyOf(delta.Deltas{{Object: deltatest.Obj("x", "1")}, {Object: delta.DeletedFinalStateUnknown{Key: "t"}}}); k != "t" || err != nil {
		t.Errorf("KeyOf(Deltas ending in a tombstone) = %q, %v", k, err)
	}
	if len(f.ListKeys()) != 0 {
		t.Errorf("queued %v", f.ListKeys())
	}
}

func TestProcessErrorNotRequeued(t *testing.T) {
	f := New(Options{})
	deltatest.Must(t, f.Add(deltatest.Obj("a", "1")))
	boom := errors.New("boom")
	item, err := f.Pop(func(any, bool) error { return boom })
	if !errors.Is(err, boom) || deltatest.DescribeDeltas(item.(delta.Deltas)) != "Added:a@1" {
		t.Errorf("Pop = %v, %v", item, err)
	}
	if len(f.ListKeys()) != 0 {
		t.Error("requeued")
	}
}

func TestProcessPanicKeepsFIFOConsistent(t *testing.T) {
	f := New(Options{})
	deltatest.Must(t, f.Replace([]any{deltatest.Obj("a", "1"), deltatest.Obj("b", "1")}, "1"))
	popPanicking := func() (r any) {
		defer func() { r = recover() }()
		_, _ = f.Pop(func(any, bool) error { panic("handler bug") })
		return nil
	}
	if r := popPanicking(); r != "handler bug" {
		t.Fatalf("recovered %v", r)
	}
	deltatest.Check(t, f.ListKeys(), []string{"ns/b"})
	if f.HasSynced() {
		t.Fatal("synced with an initial item left")
	}
	if r := popPanicking(); r != "handler bug" {
		t.Fatalf("recovered %v", r)
	}
	if !f.HasSynced() {
		t.Error("the last initial item panicked and the FIFO is not synced")
	}
	deltatest.Must(t, f.Add(deltatest.Obj("c", "1"))) // the lock was released
	deltatest.Check(t, popAll(t, f), []string{"Added:c@1"})
}

func TestPoppedItemsNotRetained(t *testing.T) {
	f := New(Options{})
	o := deltatest.Obj("a", "1")
	w := weak.Make(o)
	deltatest.Must(t, f.Add(o))
	deltatest.Must(t, f.Update(o))
	o = nil
	_, err := f.Pop(func(any, bool) error { return nil })
	deltatest.Must(t, err)
	runtime.GC()
	if w.Value() != nil {
		t.Error("a popped object is still reachable")
	}

	// A burst: popped keys' slots are cleared, the key array is dropped
	// when the queue empties, and the map is made anew.

	const n = 5000
	for i := range n {
		deltatest.Must(t, f.Add(deltatest.Obj(fmt.Sprint(i), "1")))
	}
	for i := range n {
		_, err := f.Pop(func(any, bool) error { return nil })
		deltatest.Must(t, err)
		for _, k := range f.queue.keys[:f.queue.head] {
			if k != "" {
				t.Fatalf("after %d pops a popped key %q is still referenced", i+1, k)
			}
		}
	}
	if f.queue.len() != 0 || cap(f.queue.keys) > keepCap || f.itemsPeak != 0 {
		t.Errorf("after the burst: key array cap %d, items peak %d", cap(f.queue.keys), f.itemsPeak)
	}
}

func TestReadersReturnCopies(t *testing.T) {
	f := New(Options{})
	deltatest.Must(t, f.Add(deltatest.Obj("a", "1")))
	deltatest.Must(t, f.Update(deltatest.Obj("a", "2")))
	deltatest.Must(t, f.Add(deltatest.Obj("b", "1")))
	ds, ok, err := f.Get(deltatest.Obj("a", ""))
	if !ok || err != nil || deltatest.DescribeDeltas(ds) != "Added:a@1 Updated:a@2" {
		t.Fatalf("Get = %v, %v, %v", ds, ok, err)
	}
	ds[0] = delta.Delta{}
	if _, ok, _ := f.GetByKey("ns/zzz"); ok {
		t.Error("GetByKey of an unqueued key found it")
	}
	var list []string
	for _, o := range f.List() {
		list = append(list, deltatest.Describe(o))
	}
	deltatest.Check(t, list, []string{"a@2", "b@1"})
	deltatest.Check(t, popAll(t, f), []string{"Added:a@1 Updated:a@2", "Added:b@1"})
}

func TestPopBlocksAndClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := New(Options{})
		got := make(chan string, 2)
		go func() {
			for {
				item, err := f.Pop(func(o any, _ bool) error {
					// Lock-free methods may be called while processing.
					_, _ = f.HasSynced(), f.IsClosed()
					return nil
				})
				if err != nil {
					got <- err.Error()
					return
				}
				got <- deltatest.DescribeDeltas(item.(delta.Deltas))
			}
		}()
		synctest.Wait()
		if len(got) != 0 {
			t.Fatal("Pop returned on an empty FIFO")
		}
		deltatest.Must(t, f.Add(deltatest.Obj("a", "1")))
		synctest.Wait()
		if g := <-got; g != "Added:a@1" {
			t.Errorf("got %s", g)
		}
		f.Close()
		f.Close()
		if g := <-got; g != delta.ErrClosed.Error() {
			t.Errorf("blocked Pop after Close: %s", g)
		}
		// Closed: producers still work, items still pop, then ErrClosed.
		deltatest.Must(t, f.Add(deltatest.Obj("b", "1")))
		if !f.IsClosed() {
			t.Error("not closed")
		}
		deltatest.Check(t, popAll(t, f), []string{"Added:b@1"})
		if _, err := f.Pop(func(any, bool) error { return nil }); !errors.Is(err, delta.ErrClosed) {
			t.Errorf("Pop on closed and empty: %v", err)
		}
	})
}

func TestSlowProcess(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		type report struct {
			key   string
			depth int
			took  time.Duration
		}
		var reports []report
		var f *FIFO
		f = New(Options{SlowProcess: func(key string, depth int, took time.Duration) {
			_ = f.ListKeys() // the lock is released
			reports = append(reports, report{key, depth, took})
		}})
		for i := range 13 {
			deltatest.Must(t, f.Add(deltatest.Obj(fmt.Sprint(i), "1")))
		}
		popSleeping := func(d time.Duration) {
			_, err := f.Pop(func(any, bool) error { time.Sleep(d); return nil })
			deltatest.Must(t, err)
		}
		popSleeping(150 * time.Millisecond) // depth 12
		popSleeping(100 * time.Millisecond) // depth 11, not longer than 100 ms
		popSleeping(101 * time.Millisecond) // depth 10: not deeper than 10
		want := []report{{"ns/0", 12, 150 * time.Millisecond}}
		if fmt.Sprint(reports) != fmt.Sprint(want) {
			t.Errorf("reports %v, want %v", reports, want)
		}
	})
}

// Producers and one consumer, under the race detector.
func TestConcurrent(t *testing.T) {
	f := New(Options{Known: deltatest.Known{}})
	var wg sync.WaitGroup
	for p := range 3 {
		wg.Go(func() {
			for i := range 300 {
				o := deltatest.Obj(fmt.Sprint(p, "-", i%20), fmt.Sprint(i))
				switch i % 4 {
				case 0:
					_ = f.Add(o)
				case 1:
					_ = f.Update(o)
				case 2:
					_ = f.Delete(o)
				default:
					_ = f.Resync()
					_ = f.List()
				}
			}
			if p == 0 {
				_ = f.Replace([]any{deltatest.Obj("r", "1")}, "1")
			}
		})
	}
	done := make(chan int)
	go func() {
		n := 0
		for {
			if _, err := f.Pop(func(any, bool) error { return nil }); err != nil {
				done <- n
				return
			}
			n++
		}
	}()
	wg.Wait()
	f.Close()
	if n := <-done; n == 0 {
		t.Error("nothing popped")
	}
}

// Without SlowProcess a slow pop is logged as client-go's trace, and only a
// slow one: the trace is made after the pop.
func TestSlowPopTracedByDefault(t *testing.T) {
	k := deltatest.CaptureKlog(t)
	synctest.Test(t, func(t *testing.T) {
		f := New(Options{})
		for i := range 13 {
			deltatest.Must(t, f.Add(deltatest.Obj(fmt.Sprint(i), "1")))
		}
		for _, d := range []time.Duration{150 * time.Millisecond, 100 * time.Millisecond, 101 * time.Millisecond} {
			_, err := f.Pop(func(any, bool) error { time.Sleep(d); return nil })
			deltatest.Must(t, err)
		}
	})
	got := k.String()
	want := `"DeltaFIFO Pop Process" ID:ns/0,Depth:12,Reason:slow event handlers blocking the queue,Took:150ms `
	if !strings.Contains(got, want) || strings.Count(got, "DeltaFIFO Pop Process") != 1 {
		t.Errorf("klog got %q, want one trace containing %q", got, want)
	}
}
