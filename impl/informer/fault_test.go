package informer

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kverify/kverify/impl/delta/deltatest"
)

// A panicking handler call is contained: reported once, the notification
// skipped, the next one delivered at the same instant; a panicking initial
// add still counts as returned; the listener closes as usual.
func TestListenerContainsPanics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var reports []string
		h := &recorder{}
		h.during = func(i int, ev string) {
			if i == 1 || i == 3 {
				panic("boom at " + ev)
			}
		}
		l := NewListener(h, ListenerOptions{Name: "p", OnPanic: func(name string, r any) {
			mu.Lock()
			defer mu.Unlock()
			reports = append(reports, fmt.Sprint(name, ": ", r))
		}})
		stop := startListener(l)
		defer stop()
		l.Add(Notification{Kind: Add, New: "a", InInitialList: true})
		l.Add(Notification{Kind: Add, New: "b", InInitialList: true})
		l.UpstreamSynced()
		start := time.Now()
		for _, n := range adds("k", 3) {
			l.Add(n)
		}
		synctest.Wait()
		want := []string{"init:a", "init:b", "add:k0", "add:k1", "add:k2"}
		if got := h.received(); !slices.Equal(got, want) {
			t.Fatalf("received %v, want %v", got, want)
		}
		if d := time.Since(start); d != 0 {
			t.Errorf("delivery after a panic took %v of fake time, want none", d)
		}
		if !l.HasSynced() {
			t.Error("a panicking initial add kept the listener from syncing")
		}
		mu.Lock()
		if want := []string{"p: boom at init:b", "p: boom at add:k1"}; !slices.Equal(reports, want) {
			t.Errorf("reports %v, want %v", reports, want)
		}
		mu.Unlock()
		if deltatest.IsClosed(l.Done()) {
			t.Error("Done closed after a contained panic")
		}
	})
}

// The default OnPanic reports through utilruntime and the listener goes on.
// Outside a bubble: utilruntime's error backoff compares real and fake time.
func TestListenerDefaultPanicReport(t *testing.T) {
	second := make(chan struct{})
	h := &recorder{}
	h.during = func(i int, _ string) {
		switch i {
		case 0:
			panic("default report")
		case 1:
			close(second)
		}
	}
	l := NewListener(h, ListenerOptions{Name: "default"})
	stop := startListener(l)
	defer stop()
	l.Add(Notification{Kind: Add, New: "a"})
	l.Add(Notification{Kind: Add, New: "b"})
	select {
	case <-second:
	case <-time.After(10 * time.Second):
		t.Fatalf("the notification after a panic was not delivered; received %v", h.received())
	}
	if got := h.received(); !slices.Equal(got, []string{"add:a", "add:b"}) {
		t.Errorf("received %v", got)
	}
}

// The warning's thresholds are exact: more than 1024 waiting behind the
// call when it starts (counted by the pump at the hand-over, not racing with
// the refill) and longer than 100 ms.
func TestListenerSlowHandlerThresholdsExact(t *testing.T) {
	for range 20 { // the count once raced with the pump: repeat
		synctest.Test(t, func(t *testing.T) {
			const m = 1100
			sleeps := map[int]time.Duration{ // call index -> duration; call i has m-i behind it
				m - 1050: 100 * time.Millisecond,                 // long enough only for client-go (>=)
				m - 1040: 100*time.Millisecond + time.Nanosecond, // warns
				m - 1025: 100*time.Millisecond + time.Nanosecond, // warns: 1025 > 1024
				m - 1024: time.Hour,                              // 1024 is not more than 1024
			}
			h := &recorder{}
			h.during = func(i int, _ string) { time.Sleep(sleeps[i]) }
			h.holdFrom(0)
			type warning struct {
				pending int64
				took    time.Duration
			}
			var mu sync.Mutex
			var ws []warning
			l := NewListener(h, ListenerOptions{SlowHandler: func(_ string, p int64, took time.Duration) {
				mu.Lock()
				defer mu.Unlock()
				ws = append(ws, warning{p, took})
			}})
			stop := startListener(l)
			defer stop()
			l.Add(Notification{Kind: Add, New: "plug"})
			synctest.Wait()
			for _, n := range adds("k", m) {
				l.Add(n)
			}
			h.release()
			time.Sleep(2 * time.Hour)
			synctest.Wait()
			mu.Lock()
			defer mu.Unlock()
			want := []warning{{1040, 100*time.Millisecond + time.Nanosecond}, {1025, 100*time.Millisecond + time.Nanosecond}}
			if !slices.Equal(ws, want) {
				t.Fatalf("warnings %v, want %v", ws, want)
			}
		})
	}
}
