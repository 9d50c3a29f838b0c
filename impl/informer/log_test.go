package informer

import (
	"testing"
	"testing/synctest"
)

// chunksHeld counts the log's chunks from head to last.
func (g *fanLog) chunksHeld() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := 0
	for c := g.head; c != nil; c = c.next.Load() {
		n++
	}
	return n
}

// A drained log keeps one chunk, the one the next entry goes to, with every
// delivered entry cleared; a log without readers keeps nothing and takes
// nothing.
func TestLogReclaims(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := NewProcessor(nil)
		h := &recorder{gate: make(chan struct{}), gateAt: 0}
		l := NewListener(h, ListenerOptions{})
		if _, err := p.AddListener(l); err != nil {
			t.Fatal(err)
		}
		stop := runProcessor(p)
		defer stop()
		const n = 5000
		for i := range n {
			p.Distribute(Notification{Kind: Update, Old: i, New: i}, false)
		}
		synctest.Wait()
		if got, want := p.log.chunksHeld(), n/logChunkSize+1; got != want {
			t.Fatalf("with %d entries behind a blocked handler the log holds %d chunks, want %d", n, got, want)
		}
		close(h.gate)
		synctest.Wait()
		if got := len(h.received()); got != n {
			t.Fatalf("received %d, want %d", got, n)
		}
		if got := p.log.chunksHeld(); got != 1 {
			t.Fatalf("drained, the log holds %d chunks, want 1", got)
		}
		for i, s := range p.log.last.slots {
			if s != (Notification{}) {
				t.Fatalf("drained, the log's chunk still holds entry %d: %+v", i, s)
			}
		}
		p.RemoveListener(l)
		synctest.Wait()
		if got := p.log.chunksHeld(); got != 0 {
			t.Fatalf("without readers the log holds %d chunks, want 0", got)
		}
		p.Distribute(Notification{Kind: Update, Old: 0, New: 0}, false)
		if got := p.log.chunksHeld(); got != 0 || p.log.tail.Load() != n {
			t.Fatalf("a distribution without readers: %d chunks held, tail %d, want 0 and %d", got, p.log.tail.Load(), n)
		}
	})
}
