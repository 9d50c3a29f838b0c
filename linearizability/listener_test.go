package linearizability

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/kverify/kverify/impl/informer"
)

func addOp(client, l int, v string, call, ret int64) porcupine.Operation {
	return porcupine.Operation{ClientId: client, Call: call, Return: ret,
		Input: ListenerInput{Listener: l, Op: ListenerAdd, Value: v}, Output: ListenerOutput{}}
}

func deliverOp(client, l int, v string, call, ret int64) porcupine.Operation {
	return porcupine.Operation{ClientId: client, Call: call, Return: ret,
		Input: ListenerInput{Listener: l, Op: ListenerDeliver}, Output: ListenerOutput{Value: v}}
}

// The model on small hand-made histories.
func TestListenerModel(t *testing.T) {
	cases := []struct {
		name    string
		h       []porcupine.Operation
		ok      bool // CheckListener
		drained bool // CheckListenerDrained
		detail  string
	}{
		{"in order", []porcupine.Operation{
			addOp(0, 0, "a", 1, 2), addOp(0, 0, "b", 3, 4),
			deliverOp(9, 0, "a", 0, 5), deliverOp(9, 0, "b", 6, 7),
		}, true, true, ""},
		{"concurrent adds, either order", []porcupine.Operation{
			addOp(0, 0, "a", 1, 4), addOp(1, 0, "b", 2, 3),
			deliverOp(9, 0, "b", 0, 5), deliverOp(9, 0, "a", 6, 7),
		}, true, true, ""},
		{"delivered while its add runs", []porcupine.Operation{
			addOp(0, 0, "a", 1, 4), deliverOp(9, 0, "a", 0, 3),
		}, true, true, ""},
		{"cut short", []porcupine.Operation{
			addOp(0, 0, "a", 1, 2), addOp(0, 0, "b", 3, 4), deliverOp(9, 0, "a", 0, 5),
		}, true, false, "never delivered"},
		{"reordered", []porcupine.Operation{
			addOp(0, 0, "a", 1, 2), addOp(0, 0, "b", 3, 4),
			deliverOp(9, 0, "b", 0, 5), deliverOp(9, 0, "a", 6, 7),
		}, false, false, "overtook"},
		{"duplicated", []porcupine.Operation{
			addOp(0, 0, "a", 1, 2), deliverOp(9, 0, "a", 0, 3), deliverOp(9, 0, "a", 4, 5),
		}, false, false, "twice"},
		{"never added", []porcupine.Operation{
			deliverOp(9, 0, "x", 0, 3),
		}, false, false, "never added"},
		{"delivered before its add", []porcupine.Operation{
			deliverOp(9, 0, "a", 0, 1), addOp(0, 0, "a", 2, 3),
		}, false, false, "before it was added"},
		{"listeners are independent", []porcupine.Operation{
			addOp(0, 0, "a", 1, 2), addOp(0, 1, "a", 1, 2), addOp(0, 0, "b", 3, 4), addOp(0, 1, "b", 3, 4),
			deliverOp(9, 1, "a", 0, 5), deliverOp(8, 0, "a", 0, 6), deliverOp(9, 1, "b", 7, 8), deliverOp(8, 0, "b", 7, 9),
		}, true, true, ""},
		{"second listener reordered", []porcupine.Operation{
			addOp(0, 0, "a", 1, 2), addOp(0, 1, "a", 1, 2), addOp(0, 0, "b", 3, 4), addOp(0, 1, "b", 3, 4),
			deliverOp(8, 0, "a", 0, 5), deliverOp(9, 1, "b", 0, 6), deliverOp(8, 0, "b", 7, 8), deliverOp(9, 1, "a", 7, 9),
		}, false, false, "listener 1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := CheckListener(c.h, time.Second)
			if (err == nil) != c.ok {
				t.Errorf("CheckListener: %v, want ok=%v", err, c.ok)
			}
			derr := CheckListenerDrained(c.h, time.Second)
			if (derr == nil) != c.drained {
				t.Errorf("CheckListenerDrained: %v, want ok=%v", derr, c.drained)
			}
			if c.detail != "" && (derr == nil || !strings.Contains(derr.Error(), c.detail)) {
				t.Errorf("error %v, want it to say %q", derr, c.detail)
			}
			// The partitioned models agree with the per-listener checks.
			if res := porcupine.CheckOperations(ListenerModel(), StampListener(c.h)); res != c.ok {
				t.Errorf("partitioned model: %v, want %v", res, c.ok)
			}
			if res := porcupine.CheckOperations(ListenerFIFOModel(), c.h); res != c.ok {
				t.Errorf("partitioned FIFO model: %v, want %v", res, c.ok)
			}
		})
	}
}

// ListenerModel (outstanding set + real-time rule) accepts exactly what
// ListenerFIFOModel (the spec's Delivery, step for step) accepts, on
// random small histories: adds with random intervals, deliveries of a
// random pick of values (sometimes repeated or never added) with random,
// sometimes overlapping intervals.
func TestListenerModelsAgree(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 0))
	var ok, illegal int
	for i := range 20000 {
		n := 1 + rng.IntN(6)
		var h []porcupine.Operation
		vals := make([]string, n)
		for j := range n {
			vals[j] = string(rune('a' + j))
			call := int64(rng.IntN(40))
			h = append(h, addOp(j%3, 0, vals[j], call, call+1+int64(rng.IntN(12))))
		}
		rng.Shuffle(n, func(a, b int) { vals[a], vals[b] = vals[b], vals[a] })
		k := rng.IntN(n + 1)
		dels := vals[:k]
		if rng.IntN(8) == 0 && k > 0 {
			dels = append(dels, dels[rng.IntN(k)]) // a duplicate
		}
		if rng.IntN(16) == 0 {
			dels = append(dels, "x") // never added
		}
		at := int64(rng.IntN(10))
		for _, v := range dels {
			call := at
			ret := call + 1 + int64(rng.IntN(15))
			h = append(h, deliverOp(9, 0, v, call, ret))
			at = ret + int64(rng.IntN(6)) - 2 // now and then overlapping (a broken fan-out)
		}
		fifo := porcupine.CheckOperations(ListenerFIFOModel(), h)
		set := porcupine.CheckOperations(ListenerModel(), StampListener(h))
		if fifo != set {
			t.Fatalf("seed %d, history %d: FIFO model %v, ListenerModel %v:\n%s", seed, i, fifo, set, formatListenerHistory(h))
		}
		if fifo {
			ok++
		} else {
			illegal++
		}
	}
	t.Logf("seed %d: %d linearizable, %d not", seed, ok, illegal)
}

func formatListenerHistory(h []porcupine.Operation) string {
	var b strings.Builder
	for _, op := range h {
		fmt.Fprintf(&b, "  [%d,%d] %s\n", op.Call, op.Return,
			describeListenerOp(op.Input.(ListenerInput), op.Output.(ListenerOutput)))
	}
	return b.String()
}

// Our processor and listeners deliver exactly once, in add order, to every
// listener, with several distributors at once (run it under -race too).
func TestOursListenerIsLinearizable(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	start := time.Now()
	ops := 0
	for i := range uint64(20) {
		h := RunListenerWorkload(ProcessorFanOut(informer.ListenerOptions{}), ListenerWorkload{Seed: seed + i})
		ops += len(h)
		if err := CheckListenerDrained(h, 10*time.Second); err != nil {
			failListener(t, "ours", seed+i, h, err)
		}
	}
	t.Logf("20 scenarios from seed %d, %d ops in %v", seed, ops, time.Since(start))
}

func failListener(t *testing.T, name string, seed uint64, h []porcupine.Operation, err error) {
	t.Helper()
	var le *ListenerError
	var info porcupine.LinearizationInfo
	if errors.As(err, &le) {
		info = le.Info
	}
	html, js, serr := SaveListenerFailure(t.ArtifactDir(), name, h, info)
	t.Fatalf("seed %d, %d ops: %v; saved %s %s (%v)", seed, len(h), err, html, js, serr)
}

// The workload records what it promises: one Add per Distribute on every
// listener, one Deliver per handler call, intervals in order.
func TestListenerWorkloadShape(t *testing.T) {
	cfg := ListenerWorkload{Seed: 2, Distributors: 3, Adds: 20}.withDefaults()
	if cfg.Listeners != 3 {
		t.Fatalf("Listeners = %d", cfg.Listeners)
	}
	h := RunListenerWorkload(ProcessorFanOut(informer.ListenerOptions{}), cfg)
	adds, dels := map[int]int{}, map[int]int{}
	for _, op := range h {
		if op.Call >= op.Return {
			t.Errorf("%v: call %d not before return %d", op.Input, op.Call, op.Return)
		}
		in := op.Input.(ListenerInput)
		switch in.Op {
		case ListenerAdd:
			adds[in.Listener]++
			if op.ClientId >= cfg.Distributors {
				t.Errorf("Add by client %d", op.ClientId)
			}
		case ListenerDeliver:
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
	if err := CheckListenerDrained(h, 10*time.Second); err != nil {
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
	hs []informer.Handler
	wg sync.WaitGroup
}

func (f *goFanOut) AddHandler(h informer.Handler) { f.hs = append(f.hs, h) }
func (f *goFanOut) Distribute(n informer.Notification) {
	for _, h := range f.hs {
		f.wg.Go(func() {
			switch n.Kind {
			case informer.Add:
				h.OnAdd(n.New, n.InInitialList)
			case informer.Update:
				h.OnUpdate(n.Old, n.New)
			case informer.Delete:
				h.OnDelete(n.Old)
			}
		})
	}
}
func (f *goFanOut) Run(ctx context.Context) {
	<-ctx.Done()
	f.wg.Wait()
}

func withBuffer(nb func() informer.Buffer) func() FanOut {
	return func() FanOut { return ProcessorFanOut(informer.ListenerOptions{NewBuffer: nb}) }
}

// Each broken fan-out is caught within a few scenarios, and what a failure
// leaves behind (history and visualisation) is written.
func TestBrokenListenersAreCaught(t *testing.T) {
	cases := []struct {
		name string
		new  func() FanOut
	}{
		{"lifo buffer", withBuffer(func() informer.Buffer { return &lifoBuffer{} })},
		{"duplicating buffer", withBuffer(func() informer.Buffer { return &fifoBuffer{dup: true} })},
		{"lossy buffer", withBuffer(func() informer.Buffer { return &fifoBuffer{drop: true} })},
		{"goroutine per notification", func() FanOut { return &goFanOut{} }},
	}
	seed := uint64(time.Now().UnixNano())
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for i := range uint64(20) {
				// A lossy fan-out never catches up: do not wait long.
				h := RunListenerWorkload(c.new(), ListenerWorkload{Seed: seed + i, Drain: 200 * time.Millisecond})
				err := CheckListenerDrained(h, 10*time.Second)
				if err == nil {
					continue
				}
				var le *ListenerError
				if !errors.As(err, &le) || le.Result != porcupine.Illegal {
					t.Fatalf("seed %d: %v, want an Illegal history", seed+i, err)
				}
				t.Logf("caught after %d scenarios (seed %d, %d ops): %v", i+1, seed+i, len(h), err)
				dir := t.TempDir()
				html, js, serr := SaveListenerFailure(dir, c.name, le.Ops, le.Info)
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
