package informer

import (
	"context"
	"errors"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kverify/kverify/impl/delta/deltatest"
)

// runProcessor runs p until the returned stop is called; stop waits for Run.
func runProcessor(p *Processor) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.Run(ctx)
	}()
	return func() {
		cancel()
		<-done
	}
}

// Distribute before Run never waits: the notification waits in the
// listener, which delivers it once Run starts it.
func TestDistributeBeforeRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := NewProcessor(nil)
		done := returned(func() { p.Distribute(Notification{Kind: Add, New: "x"}, false) })
		if !deltatest.IsClosed(done) {
			t.Fatal("Distribute with no listeners waited")
		}
		h := &recorder{}
		l := NewListener(h, ListenerOptions{})
		if started, err := p.AddListener(l); started || err != nil {
			t.Fatalf("AddListener before Run = %v, %v", started, err)
		}
		done = returned(func() { p.Distribute(Notification{Kind: Add, New: "a"}, false) })
		if !deltatest.IsClosed(done) {
			t.Fatal("Distribute before Run waited")
		}
		synctest.Wait()
		if got := h.received(); len(got) != 0 {
			t.Fatalf("delivered before Run: %v", got)
		}
		stop := runProcessor(p)
		synctest.Wait()
		if got := h.received(); !slices.Equal(got, []string{"add:a"}) {
			t.Errorf("received %v", got)
		}
		stop()
		// After Run returned: a no-op, and no new listeners.
		p.Distribute(Notification{Kind: Add, New: "late"}, false)
		if _, err := p.AddListener(NewListener(h, ListenerOptions{})); !errors.Is(err, ErrStopped) {
			t.Errorf("AddListener after stop: %v, want ErrStopped", err)
		}
		if !deltatest.IsClosed(l.Done()) {
			t.Error("Run returned and a listener's Done is open")
		}
		p.Run(context.Background()) // a second Run returns at once
	})
}

// Listeners join and leave while the processor runs; a removed listener
// closes Done and gets nothing more; removal is idempotent.
func TestAddRemoveWhileRunning(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := NewProcessor(nil)
		h1, h2 := &recorder{}, &recorder{}
		l1 := NewListener(h1, ListenerOptions{})
		p.AddListener(l1)
		stop := runProcessor(p)
		defer stop()
		synctest.Wait()
		p.Distribute(Notification{Kind: Add, New: "a"}, false)
		l2 := NewListener(h2, ListenerOptions{})
		if started, err := p.AddListener(l2); !started || err != nil {
			t.Fatalf("AddListener while running = %v, %v", started, err)
		}
		p.Distribute(Notification{Kind: Add, New: "b"}, false)
		synctest.Wait()
		p.RemoveListener(l1)
		p.RemoveListener(l1)
		synctest.Wait()
		if !deltatest.IsClosed(l1.Done()) {
			t.Fatal("removed listener: Done open")
		}
		p.Distribute(Notification{Kind: Add, New: "c"}, false)
		synctest.Wait()
		if got := h1.received(); !slices.Equal(got, []string{"add:a", "add:b"}) {
			t.Errorf("removed listener received %v", got)
		}
		if got := h2.received(); !slices.Equal(got, []string{"add:b", "add:c"}) {
			t.Errorf("late listener received %v", got)
		}
		if n := p.Listeners(); n != 1 {
			t.Errorf("Listeners() = %d", n)
		}
		p.RemoveListener(NewListener(h1, ListenerOptions{})) // never added: no-op
	})
}

// Run returns only once every listener's handler call has finished.
func TestRunWaitsForHandlers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := NewProcessor(nil)
		h := &recorder{}
		h.holdFrom(0)
		l := NewListener(h, ListenerOptions{})
		p.AddListener(l)
		stop := runProcessor(p)
		synctest.Wait()
		p.Distribute(Notification{Kind: Add, New: "a"}, false)
		p.Distribute(Notification{Kind: Add, New: "b"}, false)
		synctest.Wait()
		stopped := returned(stop)
		if deltatest.IsClosed(stopped) {
			t.Fatal("Run returned while a handler call is in progress")
		}
		h.release()
		synctest.Wait()
		if !deltatest.IsClosed(stopped) || !deltatest.IsClosed(l.Done()) {
			t.Fatal("Run did not return after the handler call finished")
		}
	})
}

// A removed listener that never started closes Done at once.
func TestRemoveBeforeRun(t *testing.T) {
	p := NewProcessor(nil)
	l := NewListener(&recorder{}, ListenerOptions{})
	p.AddListener(l)
	p.RemoveListener(l)
	if !deltatest.IsClosed(l.Done()) {
		t.Fatal("Done open for a listener removed before Run")
	}
	if p.Listeners() != 0 {
		t.Fatal("listener still registered")
	}
}

// Sync distributions reach exactly the listeners due for a resync; ordinary
// ones reach everybody; new listeners start in the resync round.
func TestSyncDistribution(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
		clk := clocktesting.NewFakeClock(start)
		p := NewProcessor(clk)
		hNever, h2, h3 := &recorder{}, &recorder{}, &recorder{}
		lNever := NewListener(hNever, ListenerOptions{})
		l2 := NewListener(h2, ListenerOptions{})
		l3 := NewListener(h3, ListenerOptions{})
		l2.SetResync(2*time.Second, 2*time.Second, start)
		l3.SetResync(3*time.Second, 3*time.Second, start)
		for _, l := range []*Listener{lNever, l2, l3} {
			p.AddListener(l)
		}
		stop := runProcessor(p)
		defer stop()
		synctest.Wait()

		// Before any ShouldResync every listener is in the round.
		p.Distribute(Notification{Kind: Update, Old: "s0", New: "s0"}, true)
		synctest.Wait()
		for _, h := range []*recorder{hNever, h2, h3} {
			if len(h.received()) != 1 {
				t.Fatalf("new listeners start in the resync round: %v", h.received())
			}
		}

		step := func(d time.Duration, wantAny bool, name string) {
			t.Helper()
			clk.Step(d)
			if got := p.ShouldResync(); got != wantAny {
				t.Fatalf("at +%v ShouldResync() = %v, want %v", clk.Since(start), got, wantAny)
			}
			p.Distribute(Notification{Kind: Update, Old: name, New: name}, true)
			p.Distribute(Notification{Kind: Add, New: name}, false)
			synctest.Wait()
		}
		step(time.Second, false, "t1")
		step(time.Second, true, "t2") // exactly l2's boundary: inclusive
		step(time.Second, true, "t3") // l3
		step(time.Second, true, "t4") // l2 again (next = t2 + 2s)
		step(time.Second, false, "t5")

		want := map[*recorder][]string{
			hNever: {"update:s0>s0", "add:t1", "add:t2", "add:t3", "add:t4", "add:t5"},
			h2:     {"update:s0>s0", "add:t1", "update:t2>t2", "add:t2", "add:t3", "update:t4>t4", "add:t4", "add:t5"},
			h3:     {"update:s0>s0", "add:t1", "add:t2", "update:t3>t3", "add:t3", "add:t4", "add:t5"},
		}
		for h, w := range want {
			if got := h.received(); !slices.Equal(got, w) {
				t.Errorf("received %v, want %v", got, w)
			}
		}
	})
}

func TestResyncCheckPeriodChanged(t *testing.T) {
	p := NewProcessor(nil)
	now := time.Now()
	l0 := NewListener(&recorder{}, ListenerOptions{})
	l5 := NewListener(&recorder{}, ListenerOptions{})
	l60 := NewListener(&recorder{}, ListenerOptions{})
	l0.SetResync(0, 0, now)
	l5.SetResync(5*time.Second, DetermineResyncPeriod(5*time.Second, time.Minute), now)
	l60.SetResync(time.Minute, time.Minute, now)
	for _, l := range []*Listener{l0, l5, l60} {
		p.AddListener(l)
	}
	if l5.ResyncPeriod() != time.Minute {
		t.Fatalf("before: %v", l5.ResyncPeriod())
	}
	p.ResyncCheckPeriodChanged(5 * time.Second)
	for l, want := range map[*Listener]time.Duration{l0: 0, l5: 5 * time.Second, l60: time.Minute} {
		if got := l.ResyncPeriod(); got != want {
			t.Errorf("requested %v: effective %v, want %v", l.RequestedResyncPeriod(), got, want)
		}
	}
	p.ResyncCheckPeriodChanged(0)
	for _, l := range []*Listener{l0, l5, l60} {
		if l.ResyncPeriod() != 0 {
			t.Errorf("check period 0: effective %v", l.ResyncPeriod())
		}
	}
}
