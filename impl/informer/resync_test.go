package informer

import (
	"testing"
	"time"
)

func TestNormalizeResyncPeriod(t *testing.T) {
	for in, want := range map[time.Duration]time.Duration{
		0: 0, -time.Second: 0, time.Nanosecond: time.Second, 999 * time.Millisecond: time.Second,
		time.Second: time.Second, time.Minute: time.Minute,
	} {
		if got := NormalizeResyncPeriod(in); got != want {
			t.Errorf("NormalizeResyncPeriod(%v) = %v, want %v", in, got, want)
		}
	}
}

func TestDetermineResyncPeriod(t *testing.T) {
	for _, tc := range []struct{ desired, check, want time.Duration }{
		{0, time.Second, 0},
		{time.Second, 0, 0},
		{time.Second, time.Minute, time.Minute},
		{time.Hour, time.Minute, time.Hour},
		{time.Minute, time.Minute, time.Minute},
	} {
		if got := DetermineResyncPeriod(tc.desired, tc.check); got != tc.want {
			t.Errorf("DetermineResyncPeriod(%v, %v) = %v, want %v", tc.desired, tc.check, got, tc.want)
		}
	}
}

func TestShouldResyncBoundary(t *testing.T) {
	now := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	l := NewListener(&recorder{}, ListenerOptions{})
	if l.shouldResync(now.Add(time.Hour)) {
		t.Error("a zero period resyncs")
	}
	l.SetResync(time.Second, time.Second, now)
	if l.shouldResync(now.Add(time.Second - 1)) {
		t.Error("due before the boundary")
	}
	if !l.shouldResync(now.Add(time.Second)) {
		t.Error("not due exactly at the boundary")
	}
	l.determineNextResync(now.Add(time.Second))
	if l.shouldResync(now.Add(2*time.Second - 1)) {
		t.Error("next resync not rescheduled")
	}
}
