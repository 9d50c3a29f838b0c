package informer

import (
	"slices"
	"testing"
	"time"
)

// The model reproduces a schedule observed on client-go v0.37.2 in a
// synctest bubble: check period 3s; a 5s handler at +0, a 2s handler at
// +0.5s (lowering the check period to 2s), Start at +0.5s.
func TestResyncModelMatchesClientGo(t *testing.T) {
	t0 := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	m := NewResync(3 * time.Second)
	m.AddHandler(5*time.Second, t0)
	m.AddHandler(2*time.Second, t0.Add(500*time.Millisecond))
	if m.CheckPeriod() != 2*time.Second {
		t.Fatalf("check period %v, want 2s", m.CheckPeriod())
	}
	m.Start(t0.Add(500 * time.Millisecond))
	got := map[int][]time.Duration{}
	for {
		at, ok := m.NextRound()
		if !ok || at.Sub(t0) > 13*time.Second {
			break
		}
		_, due := m.Round()
		for _, i := range due {
			got[i] = append(got[i], at.Sub(t0))
		}
	}
	s := time.Second
	want := map[int][]time.Duration{
		0: {6*s + s/2, 12*s + s/2},
		1: {2*s + s/2, 4*s + s/2, 6*s + s/2, 8*s + s/2, 10*s + s/2, 12*s + s/2},
	}
	for i, w := range want {
		if !slices.Equal(got[i], w) {
			t.Errorf("handler %d resynced at %v, want %v", i, got[i], w)
		}
	}
}

func TestResyncModelRules(t *testing.T) {
	t0 := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	m := NewResync(0)
	m.AddHandler(time.Second, t0)
	m.Start(t0)
	if _, ok := m.NextRound(); ok {
		t.Error("check period 0: a round is scheduled")
	}
	if h := m.Handler(0); h.Effective != 0 {
		t.Errorf("check period 0: effective period %v", h.Effective)
	}

	m = NewResync(2 * time.Second)
	m.Start(t0)
	i := m.AddHandler(300*time.Millisecond, t0)
	if h := m.Handler(i); h.Requested != 2*time.Second || h.Effective != 2*time.Second || m.CheckPeriod() != 2*time.Second {
		t.Errorf("after Start, 300ms: %+v with check %v; want raised to 2s", h, m.CheckPeriod())
	}
	j := m.AddHandler(0, t0)
	m.Remove(i)
	for range 3 {
		if _, due := m.Round(); len(due) != 0 {
			t.Errorf("removed or zero-period handlers due: %v (zero-period handler is %d)", due, j)
		}
	}
}
