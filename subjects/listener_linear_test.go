package subjects

// Self-tests of the per-listener linearizability check (package
// linearizability) on our processor and on deliberately broken fan-outs:
// the check passes on correct code and can fail.

import (
	"context"
	"errors"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/kverify/kverify/subjects/ours"

	"github.com/anishathalye/porcupine"
	"github.com/kverify/kverify/impl/informer"
	"github.com/kverify/kverify/linearizability"
)

// Our processor and listeners deliver exactly once, in add order, to every
// listener, with several distributors at once (run it under -race too).
func TestOursListenerIsLinearizable(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	start := time.Now()
	ops := 0
	for i := range uint64(20) {
		h := linearizability.RunListenerWorkload(ours.ListenerFanOut(informer.ListenerOptions{}), linearizability.ListenerWorkload{Seed: seed + i})
		ops += len(h)
		err := linearizability.CheckListenerDrained(h, 0)
		if linearizability.Inconclusive(err) {
			t.Logf("seed %d: %v: no verdict, going on", seed+i, err)
			continue
		}
		if err != nil {
			failListener(t, "ours", seed+i, h, err)
		}
	}
	t.Logf("20 scenarios from seed %d, %d ops in %v", seed, ops, time.Since(start))
}

func failListener(t *testing.T, name string, seed uint64, h []porcupine.Operation, err error) {
	t.Helper()
	var le *linearizability.ListenerError
	var info porcupine.LinearizationInfo
	if errors.As(err, &le) {
		info = le.Info
	}
	html, js, serr := linearizability.SaveListenerFailure(t.ArtifactDir(), name, h, info)
	t.Fatalf("seed %d, %d ops: %v; saved %s %s (%v)", seed, len(h), err, html, js, serr)
}

// The workload records what it promises: one Add per Distribute on every
// listener, one Deliver per handler call, intervals in order.
func TestListenerWorkloadShape(t *testing.T) {
	cfg := linearizability.ListenerWorkload{Seed: 2, Listeners: 3, Distributors: 3, Adds: 20, Drain: 10 * time.Second}
	h := linearizability.RunListenerWorkload(ours.ListenerFanOut(informer.ListenerOptions{}), cfg)
	adds, dels := map[int]int{}, map[int]int{}
	for _, op := range h {
		if op.Call >= op.Return {
			t.Errorf("%v: call %d not before return %d", op.Input, op.Call, op.Return)
		}
		in := op.Input.(linearizability.ListenerInput)
		switch in.Op {
		case linearizability.ListenerAdd:
			adds[in.Listener]++
			if op.ClientId >= cfg.Distributors {
				t.Errorf("Add by client %d", op.ClientId)
			}
		case linearizability.ListenerDeliver:
			dels[in.Listener]++
			if op.ClientId != cfg.Distributors+in.Listener {
				t.Errorf("Deliver to listener %d by client %d", in.Listener, op.ClientId)
			}
		}
	}
	for l := range cfg.Listeners {
		if adds[l] != 60 || dels[l] != 60 {
			t.Errorf("listener %d: %d adds, %d delivers, want 60 each", l, adds[l], dels[l])
		}
	}
	if err := linearizability.CheckListenerDrained(h, 10*time.Second); err != nil {
		t.Error(err)
	}
}

// Broken listeners, to prove the check can fail.

// lifoBuffer hands out the newest buffered notification first.
type lifoBuffer struct{ s []informer.Notification }

func (b *lifoBuffer) WriteOne(n informer.Notification) { b.s = append(b.s, n) }
func (b *lifoBuffer) Len() int                         { return len(b.s) }
func (b *lifoBuffer) ReadOne() (informer.Notification, bool) {
	if len(b.s) == 0 {
		return informer.Notification{}, false
	}
	n := b.s[len(b.s)-1]
	b.s = b.s[:len(b.s)-1]
	return n, true
}

// fifoBuffer is a plain FIFO; dup and drop break it.
type fifoBuffer struct {
	s      []informer.Notification
	reads  int
	writes int
	dup    bool // every third read leaves the notification in place
	drop   bool // every fifth write is lost
}

func (b *fifoBuffer) WriteOne(n informer.Notification) {
	b.writes++
	if b.drop && b.writes%5 == 0 {
		return
	}
	b.s = append(b.s, n)
}
func (b *fifoBuffer) Len() int { return len(b.s) }
func (b *fifoBuffer) ReadOne() (informer.Notification, bool) {
	if len(b.s) == 0 {
		return informer.Notification{}, false
	}
	b.reads++
	n := b.s[0]
	if !(b.dup && b.reads%3 == 0) {
		b.s = b.s[1:]
	}
	return n, true
}

// goFanOut is the classic mistake: each notification gets a goroutine of
// its own that calls the handler, so calls overlap and overtake.
type goFanOut struct {
	hs []func(string)
	wg sync.WaitGroup
}

func (f *goFanOut) AddHandler(deliver func(string)) { f.hs = append(f.hs, deliver) }
func (f *goFanOut) Distribute(v string) {
	for _, h := range f.hs {
		f.wg.Go(func() { h(v) })
	}
}
func (f *goFanOut) Run(ctx context.Context) {
	<-ctx.Done()
	f.wg.Wait()
}

func withBuffer(nb func() informer.Buffer) func() linearizability.FanOut {
	return func() linearizability.FanOut { return ours.ListenerFanOut(informer.ListenerOptions{NewBuffer: nb}) }
}

// Each broken fan-out is caught within a few scenarios, and what a failure
// leaves behind (history and visualisation) is written.
func TestBrokenListenersAreCaught(t *testing.T) {
	cases := []struct {
		name string
		new  func() linearizability.FanOut
	}{
		{"lifo buffer", withBuffer(func() informer.Buffer { return &lifoBuffer{} })},
		{"duplicating buffer", withBuffer(func() informer.Buffer { return &fifoBuffer{dup: true} })},
		{"lossy buffer", withBuffer(func() informer.Buffer { return &fifoBuffer{drop: true} })},
		{"goroutine per notification", func() linearizability.FanOut { return &goFanOut{} }},
	}
	seed := uint64(time.Now().UnixNano())
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for i := range uint64(20) {
				// A lossy fan-out never catches up: do not wait long.
				h := linearizability.RunListenerWorkload(c.new(), linearizability.ListenerWorkload{Seed: seed + i, IdlePolls: 200})
				err := linearizability.CheckListenerDrained(h, 0)
				if err == nil || linearizability.Inconclusive(err) {
					continue // an inconclusive search is no verdict either way
				}
				var le *linearizability.ListenerError
				if !errors.As(err, &le) || le.Result != porcupine.Illegal {
					t.Fatalf("seed %d: %v, want an Illegal history", seed+i, err)
				}
				t.Logf("caught after %d scenarios (seed %d, %d ops): %v", i+1, seed+i, len(h), err)
				dir := t.TempDir()
				html, js, serr := linearizability.SaveListenerFailure(dir, c.name, le.Ops, le.Info)
				if serr != nil {
					t.Fatal(serr)
				}
				for _, p := range []string{html, js} {
					if fi, err := os.Stat(p); err != nil || fi.Size() < 100 {
						t.Errorf("%s: %v", p, err)
					}
				}
				return
			}
			t.Fatalf("not caught in 20 scenarios from seed %d", seed)
		})
	}
}
