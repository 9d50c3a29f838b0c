package informer

import (
	"context"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
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

func TestJoinResync(t *testing.T) {
	const s = time.Second
	for _, tc := range []struct {
		name                        string
		requested, check            time.Duration
		started                     bool
		wantReq, wantEff, wantCheck time.Duration
	}{
		{"no resync", 0, 5 * s, false, 0, 0, 5 * s},
		{"minimum", 300 * time.Millisecond, 5 * s, true, 5 * s, 5 * s, 5 * s},
		{"minimum before start lowers", 300 * time.Millisecond, 5 * s, false, s, s, s},
		{"below check before start lowers", 2 * s, 5 * s, false, 2 * s, 2 * s, 2 * s},
		{"below check after start is raised", 2 * s, 5 * s, true, 5 * s, 5 * s, 5 * s},
		{"above check", 7 * s, 5 * s, true, 7 * s, 7 * s, 5 * s},
		{"check 0 never resyncs", 2 * s, 0, false, 2 * s, 0, 0},
		{"check 0 after start", 2 * s, 0, true, 2 * s, 0, 0},
	} {
		req, eff, check, err := JoinResync(tc.requested, tc.check, tc.started)
		if err != nil || req != tc.wantReq || eff != tc.wantEff || check != tc.wantCheck {
			t.Errorf("%s: JoinResync(%v, %v, %v) = %v, %v, %v, %v; want %v, %v, %v", tc.name, tc.requested, tc.check, tc.started, req, eff, check, err, tc.wantReq, tc.wantEff, tc.wantCheck)
		}
	}
	if _, _, _, err := JoinResync(-s, s, false); err == nil {
		t.Error("negative requested period: no error")
	}
	if _, _, _, err := JoinResync(s, -s, false); err == nil {
		t.Error("negative check period: no error")
	}
}

// RunResync: a round every period, under the lock, resync only when a
// listener is due; a zero period never resyncs; it returns when ctx ends.
func TestRunResync(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := NewProcessor(nil)
		h := &recorder{}
		l := NewListener(h, ListenerOptions{})
		l.SetResync(2*time.Second, 2*time.Second, time.Now())
		p.AddListener(l)
		stop := runProcessor(p)
		defer stop()
		var mu sync.Mutex
		var rounds []time.Duration
		start := time.Now()
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			p.RunResync(ctx, time.Second, &mu, func() {
				if mu.TryLock() {
					t.Error("resync called without the lock held")
					mu.Unlock()
				}
				rounds = append(rounds, time.Since(start))
				p.Distribute(Notification{Kind: Update, Old: "k", New: "k"}, true)
			})
		}()
		time.Sleep(5*time.Second + time.Millisecond)
		synctest.Wait()
		cancel()
		<-done
		mu.Lock()
		defer mu.Unlock()
		if want := []time.Duration{2 * time.Second, 4 * time.Second}; !slices.Equal(rounds, want) {
			t.Errorf("rounds at %v, want %v", rounds, want)
		}
		if got := h.received(); len(got) != 2 {
			t.Errorf("received %v", got)
		}

		ctx0, cancel0 := context.WithCancel(context.Background())
		done0 := make(chan struct{})
		go func() {
			defer close(done0)
			p.RunResync(ctx0, 0, &mu, func() { t.Error("resync with a zero period") })
		}()
		time.Sleep(time.Hour)
		cancel0()
		<-done0
	})
}
