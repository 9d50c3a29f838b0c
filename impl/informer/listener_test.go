package informer

import (
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kverify/kverify/impl/delta/deltatest"
)

// A handler that keeps up never makes the pump touch its buffer, and the
// backlog never exceeds the one notification in hand.
func TestListenerLookaheadNeverBuffers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var buf *countingBuffer
		h := &recorder{}
		l := NewListener(h, ListenerOptions{NewBuffer: func() Buffer {
			buf = &countingBuffer{Buffer: defaultBuffer()}
			return buf
		}})
		stop := startListener(l)
		defer stop()
		for _, n := range adds("k", 100) {
			l.Add(n)
			synctest.Wait()
			if s := l.Stats(); s.Pending != 0 {
				t.Fatalf("after the handler returned: %+v", s)
			}
		}
		if buf != nil { // the buffer is made at the first stash
			t.Errorf("a handler that keeps up: a buffer was made (%d writes), want none", buf.writes)
		}
		if s := l.Stats(); s.HighWater != 1 {
			t.Errorf("HighWater = %d, want 1", s.HighWater)
		}
		if got, want := h.received(), addEvents("k", 100); !slices.Equal(got, want) {
			t.Errorf("received %v, want %v", got, want)
		}
	})
}

// With the handler held in a call, Add never waits; the buffer holds every
// pending notification but the one in hand, and Pending counts them all.
func TestListenerBacklogAccounting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var buf *countingBuffer
		h := &recorder{}
		h.holdFrom(0)
		l := NewListener(h, ListenerOptions{NewBuffer: func() Buffer {
			buf = &countingBuffer{Buffer: defaultBuffer()}
			return buf
		}})
		stop := startListener(l)
		defer stop()
		defer h.release()
		l.Add(Notification{Kind: Add, New: "plug"})
		synctest.Wait()
		const n = 3000
		done := returned(func() {
			for _, x := range adds("k", n) {
				l.Add(x)
			}
		})
		if !deltatest.IsClosed(done) {
			t.Fatal("Add waited for a blocked handler")
		}
		if s := l.Stats(); s.Pending != n || s.HighWater != n {
			t.Errorf("blocked: %+v, want Pending and HighWater %d", s, n)
		}
		if buf.Len() != n-1 {
			t.Errorf("buffer holds %d, want %d (all pending but the one in hand)", buf.Len(), n-1)
		}
		h.release()
		synctest.Wait()
		if s := l.Stats(); s.Pending != 0 || s.HighWater != n {
			t.Errorf("drained: %+v, want Pending 0, HighWater %d", s, n)
		}
		if buf.Len() != 0 {
			t.Errorf("drained buffer holds %d", buf.Len())
		}
		want := append([]string{"add:plug"}, addEvents("k", n)...)
		if got := h.received(); !slices.Equal(got, want) {
			t.Errorf("received %d notifications, want %d in order", len(got), len(want))
		}
		if h.overlap.Load() {
			t.Error("handler calls overlapped")
		}
	})
}

func TestListenerDispatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := &recorder{}
		l := NewListener(h, ListenerOptions{})
		stop := startListener(l)
		defer stop()
		l.Add(Notification{Kind: Add, New: "a", InInitialList: true})
		l.Add(Notification{Kind: Add, New: "b"})
		l.Add(Notification{Kind: Update, Old: "b0", New: "b1"})
		l.Add(Notification{Kind: Delete, Old: "a"})
		synctest.Wait()
		want := []string{"init:a", "add:b", "update:b0>b1", "delete:a"}
		if got := h.received(); !slices.Equal(got, want) {
			t.Errorf("received %v, want %v", got, want)
		}
	})
}

// HasSynced: only once the upstream synced and every initial add returned;
// false while the last initial OnAdd runs.
func TestListenerSync(t *testing.T) {
	for _, upstreamFirst := range []bool{true, false} {
		synctest.Test(t, func(t *testing.T) {
			h := &recorder{}
			var l *Listener
			var sawSynced []bool
			h.during = func(i int, ev string) { sawSynced = append(sawSynced, l.HasSynced()) }
			h.holdFrom(2)
			l = NewListener(h, ListenerOptions{})
			stop := startListener(l)
			defer stop()
			defer h.release()
			if upstreamFirst {
				l.UpstreamSynced()
				if !l.HasSynced() {
					t.Fatal("upstream synced with no initial adds: HasSynced false")
				}
				return
			}
			for _, x := range []string{"a", "b", "c"} {
				l.Add(Notification{Kind: Add, New: x, InInitialList: true})
			}
			synctest.Wait()
			if l.HasSynced() {
				t.Fatal("synced before UpstreamSynced")
			}
			l.UpstreamSynced()
			synctest.Wait()
			if l.HasSynced() || deltatest.IsClosed(l.Synced()) {
				t.Fatal("synced while the last initial OnAdd is in progress")
			}
			h.release()
			synctest.Wait()
			if !l.HasSynced() || !deltatest.IsClosed(l.Synced()) {
				t.Fatal("not synced after every initial add returned")
			}
			if slices.Contains(sawSynced, true) {
				t.Errorf("HasSynced true during an initial OnAdd: %v", sawSynced)
			}
			// Later adds do not unsync.
			l.Add(Notification{Kind: Add, New: "d"})
			synctest.Wait()
			if !l.HasSynced() {
				t.Error("HasSynced went back to false")
			}
		})
	}
}

// The slow-handler warning fires for a call that starts with more than
// 1024 pending and takes longer than 100 ms, and only then.
func TestListenerSlowHandlerWarning(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		type warning struct {
			name    string
			pending int64
			took    time.Duration
		}
		var mu sync.Mutex
		var warnings []warning
		sleeps := map[int]time.Duration{
			1:    150 * time.Millisecond, // > 1024 pending, long: warn
			2:    100 * time.Millisecond, // > 1024 pending, exactly the threshold: no warning
			3:    50 * time.Millisecond,  // > 1024 pending, short: no warning
			1200: 150 * time.Millisecond, // few pending, long: no warning
		}
		h := &recorder{}
		h.during = func(i int, _ string) { time.Sleep(sleeps[i]) }
		h.holdFrom(0)
		l := NewListener(h, ListenerOptions{Name: "slow", SlowHandler: func(name string, pending int64, took time.Duration) {
			mu.Lock()
			defer mu.Unlock()
			warnings = append(warnings, warning{name, pending, took})
		}})
		stop := startListener(l)
		defer stop()
		l.Add(Notification{Kind: Add, New: "plug"})
		synctest.Wait()
		for _, x := range adds("k", 1200) {
			l.Add(x)
		}
		h.release()
		time.Sleep(time.Minute) // the handler's sleeps pass
		synctest.Wait()
		if got := len(h.received()); got != 1201 {
			t.Fatalf("received %d", got)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(warnings) != 1 {
			t.Fatalf("warnings %+v, want exactly one", warnings)
		}
		w := warnings[0]
		if w.name != "slow" || w.pending <= SlowHandlerThreshold || w.took != 150*time.Millisecond {
			t.Errorf("warning %+v", w)
		}
	})
}

// Close ends the listener after the call in progress; Done closes then;
// Close is idempotent; an unstarted listener closes Done at once.
func TestListenerClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := &recorder{}
		h.holdFrom(0)
		l := NewListener(h, ListenerOptions{})
		var wg sync.WaitGroup
		l.Start(&wg)
		l.Start(&wg) // idempotent
		l.Add(Notification{Kind: Add, New: "a"})
		l.Add(Notification{Kind: Add, New: "b"})
		synctest.Wait()
		l.Close()
		l.Close()
		synctest.Wait()
		if deltatest.IsClosed(l.Done()) {
			t.Fatal("Done closed while a call is in progress")
		}
		h.release()
		wg.Wait()
		if !deltatest.IsClosed(l.Done()) {
			t.Fatal("Done open after the goroutines exited")
		}
		if got := h.received(); !slices.Equal(got, []string{"add:a"}) {
			t.Errorf("received %v: after Close only the call in progress finishes", got)
		}
		if s := l.Stats(); s.Pending != 0 {
			t.Errorf("Pending %d after close", s.Pending)
		}

		u := NewListener(&recorder{}, ListenerOptions{})
		u.closeUnstarted()
		u.closeUnstarted()
		u.Close()
		if !deltatest.IsClosed(u.Done()) {
			t.Error("unstarted listener: Done open after closeUnstarted")
		}
	})
}
