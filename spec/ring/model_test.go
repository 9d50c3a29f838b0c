package ring

import (
	"slices"
	"testing"
)

func TestModelGrowingProbes(t *testing.T) {
	m := New[int](1)
	for i := range 10 {
		m = m.Write(i)
	}
	if m.Cap() != 16 {
		t.Fatalf("initial 1, 10 writes: cap %d, want 16", m.Cap())
	}
	m = New[int](4)
	for i := range 4 {
		m = m.Write(i)
	}
	m, _, _ = m.Read()
	m, _, _ = m.Read()
	for i := 4; i < 7; i++ {
		m = m.Write(i)
	}
	if !slices.Equal(m.Items(), []int{2, 3, 4, 5, 6}) || m.Cap() != 8 {
		t.Fatalf("wrapped growth: %v cap %d", m.Items(), m.Cap())
	}
	if New[int](-3).Cap() != 0 || New[int](0).Write(1).Cap() != DefaultSize {
		t.Fatal("zero and negative sizes")
	}
}

func TestModelValueSemantics(t *testing.T) {
	a := New[int](0).Write(1).Write(2)
	b, x, ok := a.Read()
	c := b.Write(3)
	d := b.Write(4)
	if !ok || x != 1 || !slices.Equal(a.Items(), []int{1, 2}) || !slices.Equal(c.Items(), []int{2, 3}) || !slices.Equal(d.Items(), []int{2, 4}) {
		t.Fatalf("a %v c %v d %v", a.Items(), c.Items(), d.Items())
	}
	if _, _, ok := New[int](0).Read(); ok {
		t.Fatal("read of an empty model succeeded")
	}
}

func TestModelShrinking(t *testing.T) {
	// Probe of upstream-behaviour.md §1.3 (7): 5 writes into 2/2, cap 8, drained to 2.
	m := NewShrinking[int](2, 2)
	for i := range 5 {
		m = m.Write(i)
	}
	if m.Cap() != 8 {
		t.Fatalf("cap %d, want 8", m.Cap())
	}
	for range 5 {
		m, _, _ = m.Read()
	}
	if m.Cap() != 2 {
		t.Fatalf("drained cap %d, want 2", m.Cap())
	}
	// A failed read on an empty ring above its normal size shrinks it.
	m, _, ok := NewShrinking[int](8, 2).Read()
	if ok || m.Cap() != 2 {
		t.Fatalf("empty read: ok %v cap %d, want false 2", ok, m.Cap())
	}
}

func TestChunkedCap(t *testing.T) {
	ok := []struct {
		op                 Op
		lb, cb, la, ca, wr int
	}{
		{OpWrite, 0, 0, 1, 4, 1},
		{OpWrite, 4, 4, 5, 8, 1},
		{OpRead, 5, 12, 4, 8, 1},
		{OpRead, 1, 8, 0, 4, 1},
		{OpObserve, 0, 0, 0, 0, 0},
	}
	for _, c := range ok {
		if err := ChunkedCap(4, c.op, c.lb, c.cb, c.la, c.ca, c.wr == 1); err != nil {
			t.Errorf("%+v: %v", c, err)
		}
	}
	bad := []struct {
		op                 Op
		lb, cb, la, ca, wr int
	}{
		{OpWrite, 4, 4, 5, 16, 1}, // doubling by more than one chunk
		{OpRead, 1, 8, 0, 8, 1},   // empty with two chunks
		{OpWrite, 0, 0, 1, 6, 1},  // not a multiple
		{OpRead, 5, 16, 4, 16, 1}, // more than Len + 3k - 2
		{OpObserve, 0, 0, 0, 4, 0},
	}
	for _, c := range bad {
		if err := ChunkedCap(4, c.op, c.lb, c.cb, c.la, c.ca, c.wr == 1); err == nil {
			t.Errorf("%+v: accepted", c)
		}
	}
}
