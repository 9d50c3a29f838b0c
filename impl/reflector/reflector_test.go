package reflector

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
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
		"negative resync":      {ResyncPeriod: -1},
		"negative page":        {WatchListPageSize: -1},
		"negative bound":       {InitialEventsTimeout: -1},
		"negative reset":       {BackoffReset: -1},
		"unknown mode":         {WatchList: 7},
		"unknown paging":       {Paging: 7},
		"page size, no paging": {Paging: PagingOff, WatchListPageSize: 2},
		"negative backoff":     {Backoff: &backoffNegative},
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

// pagingLW serves n objects at version 9, in pages of the request's limit
// (a continue token names the next offset); cont, if set, is sent with
// every answer, limited or not (a server that pages regardless).
type pagingLW struct {
	n     int
	cont  string
	lists []metav1.ListOptions
}

func (p *pagingLW) ListWithContext(_ context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	p.lists = append(p.lists, opts)
	from := 0
	if opts.Continue != "" {
		if _, err := fmt.Sscan(opts.Continue, &from); err != nil {
			return nil, err
		}
	}
	to := p.n
	if opts.Limit > 0 {
		to = min(p.n, from+int(opts.Limit))
	}
	list := &metav1.PartialObjectMetadataList{ListMeta: metav1.ListMeta{ResourceVersion: "9", Continue: p.cont}}
	if to < p.n {
		list.Continue = fmt.Sprint(to)
	}
	for i := from; i < to; i++ {
		list.Items = append(list.Items, *obj(fmt.Sprintf("o%04d", i), "9"))
	}
	return list, nil
}

func (p *pagingLW) WatchWithContext(context.Context, metav1.ListOptions) (watch.Interface, error) {
	return watch.NewFake(), nil
}

// With paging off, a list asks for everything in one request (no limit,
// no continue) where client-go's rules ask for pages of 500; a server that
// pages it anyway fails the list and the store is not replaced.
func TestPagingOff(t *testing.T) {
	for _, c := range []struct {
		paging PagingMode
		want   []metav1.ListOptions
	}{
		{PagingAuto, []metav1.ListOptions{{ResourceVersion: "0", Limit: 500}, {Limit: 500, Continue: "500"}}},
		{PagingOff, []metav1.ListOptions{{ResourceVersion: "0"}}},
	} {
		lw := &pagingLW{n: 501}
		st := storeWithResync{store.New(delta.DeletionHandlingKey)}
		r, err := New(lw, st, Options{WatchList: WatchListOff, Paging: c.paging})
		if err != nil {
			t.Fatal(err)
		}
		if err := r.list(context.Background()); err != nil {
			t.Fatalf("paging mode %d: list: %v", c.paging, err)
		}
		if !reflect.DeepEqual(lw.lists, c.want) {
			t.Errorf("paging mode %d: lists %+v, want %+v", c.paging, lw.lists, c.want)
		}
		if got := len(st.List()); got != 501 || r.LastSyncResourceVersion() != "9" {
			t.Errorf("paging mode %d: %d objects stored at %q, want 501 at 9", c.paging, got, r.LastSyncResourceVersion())
		}
	}
	lw := &pagingLW{n: 3, cont: "1"}
	st := storeWithResync{store.New(delta.DeletionHandlingKey)}
	r, err := New(lw, st, Options{WatchList: WatchListOff, Paging: PagingOff})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.list(context.Background()); err == nil || !strings.Contains(err.Error(), "paging is off") {
		t.Errorf("a list without a limit answered with a continue token: got %v, want an error", err)
	}
	if len(lw.lists) != 1 || len(st.List()) != 0 || r.LastSyncResourceVersion() != "" {
		t.Errorf("after the paged answer: %d lists, %d objects stored, published %q; want 1, 0, \"\"", len(lw.lists), len(st.List()), r.LastSyncResourceVersion())
	}
}
