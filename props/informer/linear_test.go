package informer

import (
	"context"
	"sync"
	"testing"

	"github.com/kverify/kverify/linearizability"
	"github.com/kverify/kverify/props/checkkit"
)

// serialFanOut is a correct fan-out: one queue and one delivering
// goroutine per handler, in the order Distribute was called.
type serialFanOut struct {
	mu     sync.Mutex
	cond   *sync.Cond
	hs     []func(string)
	queues [][]string
	closed bool
}

func newSerialFanOut() linearizability.FanOut {
	f := &serialFanOut{}
	f.cond = sync.NewCond(&f.mu)
	return f
}

func (f *serialFanOut) AddHandler(deliver func(string)) {
	f.hs = append(f.hs, deliver)
	f.queues = append(f.queues, nil)
}

func (f *serialFanOut) Distribute(v string) {
	f.mu.Lock()
	for i := range f.queues {
		f.queues[i] = append(f.queues[i], v)
	}
	f.cond.Broadcast()
	f.mu.Unlock()
}

func (f *serialFanOut) Run(ctx context.Context) {
	stop := context.AfterFunc(ctx, func() {
		f.mu.Lock()
		f.closed = true
		f.cond.Broadcast()
		f.mu.Unlock()
	})
	defer stop()
	var wg sync.WaitGroup
	for i, h := range f.hs {
		wg.Go(func() {
			for {
				f.mu.Lock()
				for len(f.queues[i]) == 0 && !f.closed {
					f.cond.Wait()
				}
				if f.closed {
					f.mu.Unlock()
					return
				}
				v := f.queues[i][0]
				f.queues[i] = f.queues[i][1:]
				f.mu.Unlock()
				h(v)
			}
		})
	}
	wg.Wait()
}

// The listener check passes a correct fan-out, and still passes it when
// every search runs out of steps (a budget of one step): an inconclusive
// search is no verdict.
func TestLinearListener(t *testing.T) {
	if err := linear(newSerialFanOut)(t, checkkit.Config{TraceDir: t.TempDir()}); err != nil {
		t.Fatalf("default budget: %v", err)
	}
	defer func(n int) { linearSteps = n }(linearSteps)
	linearSteps = 1
	if err := linear(newSerialFanOut)(t, checkkit.Config{TraceDir: t.TempDir()}); err != nil {
		t.Fatalf("every search inconclusive: %v", err)
	}
}
