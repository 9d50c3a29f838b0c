package delta_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kverify/kverify/impl/delta"
	"github.com/kverify/kverify/impl/delta/deltatest"
	"github.com/kverify/kverify/impl/store"
)

// describe names an object for comparisons: ns/name@rv, a tombstone as
// dfsu(key,obj).
func describe(o any) string {
	switch o := o.(type) {
	case *metav1.PartialObjectMetadata:
		return o.Namespace + "/" + o.Name + "@" + o.ResourceVersion
	case delta.DeletedFinalStateUnknown:
		if o.Obj == nil {
			return "dfsu(" + o.Key + ",nil)"
		}
		return "dfsu(" + o.Key + "," + describe(o.Obj) + ")"
	}
	return fmt.Sprintf("%T", o)
}

type recorder struct{ got []string }

func (r *recorder) OnAdd(o any, initial bool) {
	r.got = append(r.got, fmt.Sprintf("add(%s,%v)", describe(o), initial))
}
func (r *recorder) OnUpdate(o, n any) {
	r.got = append(r.got, fmt.Sprintf("update(%s>%s)", describe(o), describe(n)))
}
func (r *recorder) OnDelete(o any) { r.got = append(r.got, "delete("+describe(o)+")") }

func contents(s *store.Store) []string {
	var out []string
	for _, o := range s.List() {
		out = append(out, describe(o))
	}
	slices.Sort(out)
	return out
}

func TestProcessAddUpdateDelete(t *testing.T) {
	s, h := store.New(nil), &recorder{}
	ds := delta.Deltas{
		{Type: delta.Added, Object: deltatest.Obj("a", "1")},
		{Type: delta.Updated, Object: deltatest.Obj("a", "2")},
		{Type: delta.Sync, Object: deltatest.Obj("b", "3")},
		{Type: delta.Replaced, Object: deltatest.Obj("b", "3")},
		{Type: delta.Deleted, Object: delta.DeletedFinalStateUnknown{Key: "ns/a", Obj: deltatest.Obj("a", "2")}},
	}
	if err := delta.Process(h, s, ds, true, nil); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"add(ns/a@1,true)",
		"update(ns/a@1>ns/a@2)",
		"add(ns/b@3,true)",
		"update(ns/b@3>ns/b@3)",
		"delete(dfsu(ns/a,ns/a@2))",
	}
	if !slices.Equal(h.got, want) {
		t.Errorf("got %v\nwant %v", h.got, want)
	}
	if got := contents(s); !slices.Equal(got, []string{"ns/b@3"}) {
		t.Errorf("store %v", got)
	}
}

// sortedStore lists its keys sorted, so ReplacedAll's deletion order is
// deterministic.
type sortedStore struct{ *store.Store }

func (s sortedStore) ListKeys() []string {
	k := s.Store.ListKeys()
	slices.Sort(k)
	return k
}

func TestProcessReplacedAll(t *testing.T) {
	s := store.New(nil)
	for _, o := range []any{deltatest.Obj("c", "1"), deltatest.Obj("a", "1"), deltatest.Obj("b", "1")} {
		if err := s.Add(o); err != nil {
			t.Fatal(err)
		}
	}
	h := &recorder{}
	ds := delta.Deltas{{Type: delta.ReplacedAll, Object: delta.ReplacedAllInfo{
		ResourceVersion: "9",
		Objects:         []any{deltatest.Obj("d", "5"), deltatest.Obj("b", "4")},
	}}}
	if err := delta.Process(h, sortedStore{s}, ds, false, nil); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"delete(dfsu(ns/a,ns/a@1))",
		"delete(dfsu(ns/c,ns/c@1))",
		"add(ns/d@5,false)",
		"update(ns/b@1>ns/b@4)",
	}
	if !slices.Equal(h.got, want) {
		t.Errorf("got %v\nwant %v", h.got, want)
	}
	if got := contents(s); !slices.Equal(got, []string{"ns/b@4", "ns/d@5"}) {
		t.Errorf("store %v", got)
	}
	if rv := s.LastResourceVersion(); rv != "9" {
		t.Errorf("rv %q", rv)
	}
}

// listOnly hides the store's ListKeys and GetByKey: ReplacedAll then keys
// s.List with the key func.
type listOnly struct{ delta.Store }

func TestProcessReplacedAllListOnlyStore(t *testing.T) {
	s := store.New(nil)
	_ = s.Add(deltatest.Obj("a", "1"))
	_ = s.Add(deltatest.Obj("b", "1"))
	h := &recorder{}
	ds := delta.Deltas{{Type: delta.ReplacedAll, Object: delta.ReplacedAllInfo{Objects: []any{deltatest.Obj("b", "2")}}}}
	if err := delta.Process(h, listOnly{s}, ds, true, delta.DeletionHandlingKey); err != nil {
		t.Fatal(err)
	}
	want := []string{"delete(dfsu(ns/a,ns/a@1))", "update(ns/b@1>ns/b@2)"}
	if !slices.Equal(h.got, want) {
		t.Errorf("got %v, want %v", h.got, want)
	}
}

func TestProcessReplacedAllKeyErrorLeavesStore(t *testing.T) {
	s := store.New(nil)
	_ = s.Add(deltatest.Obj("a", "1"))
	h := &recorder{}
	var typedNil *metav1.PartialObjectMetadata
	ds := delta.Deltas{{Type: delta.ReplacedAll, Object: delta.ReplacedAllInfo{Objects: []any{deltatest.Obj("b", "2"), typedNil}}}}
	err := delta.Process(h, s, ds, false, nil)
	var ke delta.KeyError
	if !errors.As(err, &ke) {
		t.Fatalf("err %v, want a KeyError", err)
	}
	if len(h.got) != 0 || !slices.Equal(contents(s), []string{"ns/a@1"}) {
		t.Errorf("notified %v, store %v", h.got, contents(s))
	}
}

func TestProcessWrongInfoType(t *testing.T) {
	for _, typ := range []delta.Type{delta.ReplacedAll, delta.SyncAll, delta.Bookmark, "Bogus"} {
		s := store.New(nil)
		_ = s.Add(deltatest.Obj("a", "1"))
		h := &recorder{}
		err := delta.Process(h, s, delta.Deltas{{Type: typ, Object: "not an info"}}, false, nil)
		if err == nil || !strings.Contains(err.Error(), string(typ)) {
			t.Errorf("%s: err %v", typ, err)
		}
		if len(h.got) != 0 || !slices.Equal(contents(s), []string{"ns/a@1"}) || s.LastResourceVersion() != "1" {
			t.Errorf("%s: notified %v, store %v", typ, h.got, contents(s))
		}
	}
}

func TestProcessSyncAllGoesOn(t *testing.T) {
	s := store.New(nil)
	_ = s.Add(deltatest.Obj("a", "1"))
	h := &recorder{}
	ds := delta.Deltas{
		{Type: delta.SyncAll, Object: delta.SyncAllInfo{}},
		{Type: delta.Added, Object: deltatest.Obj("b", "2")},
		{Type: delta.Bookmark, Object: delta.BookmarkInfo{ResourceVersion: "7"}},
	}
	if err := delta.Process(h, s, ds, false, nil); err != nil {
		t.Fatal(err)
	}
	want := []string{"update(ns/a@1>ns/a@1)", "add(ns/b@2,false)"}
	if !slices.Equal(h.got, want) {
		t.Errorf("got %v, want %v", h.got, want)
	}
	if rv := s.LastResourceVersion(); rv != "7" {
		t.Errorf("bookmark rv %q", rv)
	}
}

func TestProcessStopsAtFirstError(t *testing.T) {
	s, h := store.New(nil), &recorder{}
	ds := delta.Deltas{
		{Type: delta.Added, Object: deltatest.Obj("a", "1")},
		{Type: delta.Added, Object: nil},
		{Type: delta.Added, Object: deltatest.Obj("b", "1")},
	}
	if err := delta.Process(h, s, ds, false, nil); err == nil {
		t.Fatal("no error")
	}
	if want := []string{"add(ns/a@1,false)"}; !slices.Equal(h.got, want) {
		t.Errorf("got %v, want %v", h.got, want)
	}
}

func TestProcessBatchAttemptsAll(t *testing.T) {
	s, h := store.New(nil), &recorder{}
	ds := []delta.Delta{
		{Type: delta.Added, Object: deltatest.Obj("a", "1")},
		{Type: delta.Added, Object: nil},
		{Type: delta.Deleted, Object: deltatest.Obj("a", "2")},
		{Type: delta.SyncAll, Object: 3},
		{Type: delta.Updated, Object: deltatest.Obj("b", "1")},
	}
	err := delta.ProcessBatch(h, s, ds, true, nil)
	var ke delta.KeyError
	if err == nil || !errors.As(err, &ke) || !strings.Contains(err.Error(), "SyncAll") {
		t.Errorf("err %v", err)
	}
	want := []string{"add(ns/a@1,true)", "delete(ns/a@2)", "add(ns/b@1,true)"}
	if !slices.Equal(h.got, want) {
		t.Errorf("got %v, want %v", h.got, want)
	}
	if err := delta.ProcessBatch(h, s, nil, false, nil); err != nil {
		t.Errorf("empty batch: %v", err)
	}
}

func TestIsNilAndKeys(t *testing.T) {
	var p *metav1.PartialObjectMetadata
	var m map[string]int
	for _, o := range []any{nil, p, m, []int(nil)} {
		if !delta.IsNil(o) {
			t.Errorf("IsNil(%#v) false", o)
		}
		if _, err := delta.DeletionHandlingKey(o); err == nil {
			t.Errorf("key of %#v: no error", o)
		}
	}
	for _, o := range []any{0, "", deltatest.Obj("a", "1"), delta.DeletedFinalStateUnknown{}} {
		if delta.IsNil(o) {
			t.Errorf("IsNil(%#v) true", o)
		}
	}
	if k, err := delta.DeletionHandlingKey(delta.DeletedFinalStateUnknown{Key: "x/y"}); k != "x/y" || err != nil {
		t.Errorf("tombstone key %q, %v", k, err)
	}
}
