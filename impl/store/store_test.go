package store

import (
	"errors"
	"slices"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kverify/kverify/impl/delta"
	"github.com/kverify/kverify/impl/delta/deltatest"
)

func keys(s *Store) []string {
	k := s.ListKeys()
	slices.Sort(k)
	return k
}

func TestCRUD(t *testing.T) {
	s := New(nil)
	a1, a2, b := deltatest.Obj("a", "1"), deltatest.Obj("a", "2"), deltatest.Obj("b", "3")
	for _, o := range []any{a1, b} {
		if err := s.Add(o); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Update(a2); err != nil {
		t.Fatal(err)
	}
	if got, ok, err := s.Get(deltatest.Obj("a", "")); got != a2 || !ok || err != nil {
		t.Errorf("Get a = %v, %v, %v", got, ok, err)
	}
	if got, ok, _ := s.GetByKey("ns/b"); got != b || !ok {
		t.Errorf("GetByKey b = %v, %v", got, ok)
	}
	if rv := s.LastResourceVersion(); rv != "2" {
		t.Errorf("rv after update %q", rv)
	}
	// A tombstone deletes by its key and leaves the resource version.
	if err := s.Delete(delta.DeletedFinalStateUnknown{Key: "ns/b", Obj: b}); err != nil {
		t.Fatal(err)
	}
	if got := keys(s); !slices.Equal(got, []string{"ns/a"}) || s.Len() != 1 {
		t.Errorf("keys %v", got)
	}
	if rv := s.LastResourceVersion(); rv != "2" {
		t.Errorf("rv after tombstone delete %q", rv)
	}
	if err := s.Delete(deltatest.Obj("zzz", "5")); err != nil {
		t.Errorf("delete of a missing key: %v", err)
	}
	if rv := s.LastResourceVersion(); rv != "5" {
		t.Errorf("rv after delete %q", rv)
	}
	if list := s.List(); len(list) != 1 || list[0] != a2 {
		t.Errorf("List %v", list)
	}
	s.Bookmark("42")
	if rv := s.LastResourceVersion(); rv != "42" {
		t.Errorf("rv after bookmark %q", rv)
	}
}

func TestBadObjectsChangeNothing(t *testing.T) {
	called := false
	s := New(func(o any) (string, error) {
		called = true
		return delta.MetaNamespaceKey(o)
	})
	_ = s.Add(deltatest.Obj("a", "1"))
	called = false
	var typedNil *metav1.PartialObjectMetadata
	for _, o := range []any{nil, typedNil} {
		for name, op := range map[string]func(any) error{"Add": s.Add, "Update": s.Update, "Delete": s.Delete} {
			var ke delta.KeyError
			if err := op(o); !errors.As(err, &ke) {
				t.Errorf("%s(%#v) = %v, want KeyError", name, o, err)
			}
		}
		if _, _, err := s.Get(o); err == nil {
			t.Errorf("Get(%#v): no error", o)
		}
	}
	if called {
		t.Error("key func called with a nil")
	}
	var ke delta.KeyError
	if err := s.Add("no metadata"); !errors.As(err, &ke) {
		t.Errorf("Add(string) = %v", err)
	}
	if got := keys(s); !slices.Equal(got, []string{"ns/a"}) || s.LastResourceVersion() != "1" {
		t.Errorf("keys %v, rv %q", got, s.LastResourceVersion())
	}
}

func TestReplaceAllOrNothing(t *testing.T) {
	s := New(nil)
	_ = s.Add(deltatest.Obj("a", "1"))
	var ke delta.KeyError
	if err := s.Replace([]any{deltatest.Obj("b", "2"), "bad", deltatest.Obj("c", "3")}, "9"); !errors.As(err, &ke) {
		t.Fatalf("Replace = %v, want KeyError", err)
	}
	if got := keys(s); !slices.Equal(got, []string{"ns/a"}) || s.LastResourceVersion() != "1" {
		t.Errorf("after failed Replace: keys %v, rv %q", got, s.LastResourceVersion())
	}
	b1, b2 := deltatest.Obj("b", "1"), deltatest.Obj("b", "2")
	if err := s.Replace([]any{b1, deltatest.Obj("c", "3"), b2}, "9"); err != nil {
		t.Fatal(err)
	}
	if got := keys(s); !slices.Equal(got, []string{"ns/b", "ns/c"}) || s.LastResourceVersion() != "9" {
		t.Errorf("keys %v, rv %q", got, s.LastResourceVersion())
	}
	if got, _, _ := s.GetByKey("ns/b"); got != b2 {
		t.Errorf("duplicate key kept %v, want the last", got)
	}
}

func TestConcurrentUse(t *testing.T) {
	s := New(nil)
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			for j := range 200 {
				o := deltatest.Obj(string(rune('a'+i)), "1")
				_ = s.Add(o)
				_, _, _ = s.Get(o)
				_ = s.List()
				_ = s.ListKeys()
				if j%3 == 0 {
					_ = s.Delete(o)
				}
				if j%50 == 0 {
					_ = s.Replace([]any{o}, "x")
				}
			}
		})
	}
	wg.Wait()
}
