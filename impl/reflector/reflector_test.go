package reflector

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kverify/kverify/impl/backoff"
	"github.com/kverify/kverify/impl/delta"
	"github.com/kverify/kverify/impl/store"
	"go.uber.org/goleak"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// TestMain fails the package's tests if any goroutine outlives them.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeLW lists one object at version 5 and hands out watch.FakeWatchers.
type fakeLW struct {
	watches chan *watch.FakeWatcher
}

func obj(name, rv string) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: rv}}
}

func (f *fakeLW) ListWithContext(context.Context, metav1.ListOptions) (runtime.Object, error) {
	return &metav1.PartialObjectMetadataList{ListMeta: metav1.ListMeta{ResourceVersion: "5"},
		Items: []metav1.PartialObjectMetadata{*obj("a", "5")}}, nil
}

func (f *fakeLW) WatchWithContext(context.Context, metav1.ListOptions) (watch.Interface, error) {
	w := watch.NewFake()
	f.watches <- w
	return w, nil
}

type storeWithResync struct{ *store.Store }

func (storeWithResync) Resync() error { return nil }

func TestListWatchCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lw := &fakeLW{watches: make(chan *watch.FakeWatcher, 4)}
		st := storeWithResync{store.New(delta.DeletionHandlingKey)}
		r, err := New(lw, st, Options{WatchList: WatchListOff, ExpectedType: &metav1.PartialObjectMetadata{}})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			r.Run(ctx)
		}()
		w := <-lw.watches
		w.Modify(obj("a", "7"))
		w.Add(obj("b", "8"))
		synctest.Wait()
		if got := r.LastSyncResourceVersion(); got != "8" {
			t.Fatalf("published %q, want 8", got)
		}
		if got := len(st.List()); got != 2 {
			t.Fatalf("%d objects stored, want 2", got)
		}
		w.Add(nil) // malformed: ends the watch, nothing stored
		synctest.Wait()
		if got := len(st.List()); got != 2 {
			t.Fatalf("%d objects stored after a nil object, want 2", got)
		}
		time.Sleep(time.Minute) // the backoff; then a relist and a new watch
		<-lw.watches
		cancel()
		synctest.Wait()
		select {
		case <-done:
		default:
			t.Fatal("Run did not return after cancel")
		}
	})
}

func TestNewRejectsBadOptions(t *testing.T) {
	lw := &fakeLW{}
	st := storeWithResync{store.New(delta.DeletionHandlingKey)}
	for name, o := range map[string]Options{
		"negative resync":  {ResyncPeriod: -1},
		"negative page":    {WatchListPageSize: -1},
		"negative bound":   {InitialEventsTimeout: -1},
		"negative reset":   {BackoffReset: -1},
		"unknown mode":     {WatchList: 7},
		"negative backoff": {Backoff: &backoffNegative},
	} {
		if _, err := New(lw, st, o); !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("%s: got %v, want ErrInvalidOptions", name, err)
		}
	}
	if _, err := New(nil, st, Options{}); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("nil ListerWatcher: got %v", err)
	}
	if _, err := New(lw, nil, Options{}); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("nil store: got %v", err)
	}
}

var backoffNegative = backoff.Backoff{Duration: -1}
