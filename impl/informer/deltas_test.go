package informer

import (
	"fmt"
	"slices"
	"testing"
	"testing/synctest"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kverify/kverify/impl/delta"
	"github.com/kverify/kverify/impl/delta/deltatest"
	"github.com/kverify/kverify/impl/store"
)

// DeltaHandler carries what delta.Process derives to the listeners; an
// update with an unchanged resource version is a sync notification, which
// only listeners in the resync round get.
func TestDeltaHandler(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := NewProcessor(nil)
		h := &recorder{}
		l := NewListener(h, ListenerOptions{})
		if _, err := p.AddListener(l); err != nil {
			t.Fatal(err)
		}
		stop := runProcessor(p)
		defer stop()

		s, dh := store.New(nil), DeltaHandler(p)
		a1, a2 := deltatest.Obj("a", "1"), deltatest.Obj("a", "2")
		tomb := delta.DeletedFinalStateUnknown{Key: "ns/a", Obj: a2}
		steps := []delta.Deltas{
			{{Type: delta.Added, Object: a1}},
			{{Type: delta.Sync, Object: a1}},    // same RV: sync, the listener is in the round
			{{Type: delta.Updated, Object: a2}}, // new RV
			{{Type: delta.Deleted, Object: tomb}},
		}
		for _, ds := range steps {
			if err := delta.Process(dh, s, ds, true, nil); err != nil {
				t.Fatal(err)
			}
		}
		// Out of the resync round (period 0): sync updates are not delivered.
		p.ShouldResync()
		for _, ds := range []delta.Deltas{
			{{Type: delta.Added, Object: a1}},
			{{Type: delta.Sync, Object: a1}},
			{{Type: delta.Replaced, Object: a2}},
		} {
			if err := delta.Process(dh, s, ds, false, nil); err != nil {
				t.Fatal(err)
			}
		}
		synctest.Wait()
		want := []string{
			"init:" + fmtObj(a1),
			"update:" + fmtObj(a1) + ">" + fmtObj(a1),
			"update:" + fmtObj(a1) + ">" + fmtObj(a2),
			"delete:" + fmtObj(tomb),
			"add:" + fmtObj(a1),
			"update:" + fmtObj(a1) + ">" + fmtObj(a2),
		}
		if got := h.received(); !slices.Equal(got, want) {
			t.Errorf("received\n%q\nwant\n%q", got, want)
		}
	})
}

func TestSameResourceVersion(t *testing.T) {
	var typedNil *metav1.PartialObjectMetadata
	for _, c := range []struct {
		a, b any
		want bool
	}{
		{deltatest.Obj("a", "1"), deltatest.Obj("b", "1"), true},
		{deltatest.Obj("a", "1"), deltatest.Obj("a", "2"), false},
		{"x", "x", false},
		{typedNil, deltatest.Obj("a", ""), false},
		{nil, nil, false},
	} {
		if got := sameResourceVersion(c.a, c.b); got != c.want {
			t.Errorf("sameResourceVersion(%v, %v) = %v", c.a, c.b, got)
		}
	}
}

// fmtObj formats o as the recorder does.
func fmtObj(o any) string { return fmt.Sprint(o) }
