package informer

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing/synctest"
)

// recorder is a Handler that records calls, flags overlapping calls and
// can hold a call at a gate. Make it inside the bubble that uses it.
type recorder struct {
	inCall  atomic.Int32
	overlap atomic.Bool

	mu     sync.Mutex
	got    []string
	gate   chan struct{}
	gateAt int // calls with index >= gateAt wait at gate
	during func(i int, ev string)
}

func (r *recorder) OnAdd(obj any, initial bool) {
	if initial {
		r.call(fmt.Sprint("init:", obj))
	} else {
		r.call(fmt.Sprint("add:", obj))
	}
}
func (r *recorder) OnUpdate(o, n any) { r.call(fmt.Sprint("update:", o, ">", n)) }
func (r *recorder) OnDelete(o any)    { r.call(fmt.Sprint("delete:", o)) }

func (r *recorder) call(ev string) {
	if r.inCall.Add(1) > 1 {
		r.overlap.Store(true)
	}
	defer r.inCall.Add(-1)
	r.mu.Lock()
	i := len(r.got)
	r.got = append(r.got, ev)
	gate := r.gate
	if i < r.gateAt {
		gate = nil
	}
	during := r.during
	r.mu.Unlock()
	if during != nil {
		during(i, ev)
	}
	if gate != nil {
		<-gate
	}
}

// holdFrom makes call i and later ones wait until release.
func (r *recorder) holdFrom(i int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.gate, r.gateAt = make(chan struct{}), i
}

func (r *recorder) release() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.gate != nil {
		close(r.gate)
		r.gate = nil
	}
}

func (r *recorder) received() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}

// countingBuffer wraps the default buffer and counts writes.
type countingBuffer struct {
	Buffer
	writes int
}

func (c *countingBuffer) WriteOne(n Notification) {
	c.writes++
	c.Buffer.WriteOne(n)
}

func adds(prefix string, n int) []Notification {
	out := make([]Notification, n)
	for i := range out {
		out[i] = Notification{Kind: Add, New: fmt.Sprintf("%s%d", prefix, i)}
	}
	return out
}

func addEvents(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("add:%s%d", prefix, i)
	}
	return out
}

// startListener starts l under a fresh WaitGroup; stop closes it and waits.
func startListener(l *Listener) (stop func()) {
	var wg sync.WaitGroup
	l.Start(&wg)
	return func() {
		l.Close()
		wg.Wait()
	}
}

func returned(f func()) (done <-chan struct{}) {
	ch := make(chan struct{})
	go func() {
		defer close(ch)
		f()
	}()
	synctest.Wait()
	return ch
}
