package informer

import (
	"sync"
	"sync/atomic"

	"github.com/kverify/kverify/impl/ring"
)

// logChunkSize is the number of notifications in a chunk of a processor's
// log: client-go's 1024 slots per listener, but shared by every listener.
const logChunkSize = 1024

// logChunk is a run of the log's entries, from first on.
type logChunk struct {
	first int64
	slots [logChunkSize]Notification
	// next is linked, with its first set, before the entry that fills
	// this chunk is published: a reader that reaches the end of a chunk
	// always finds the next one.
	next atomic.Pointer[logChunk]
}

// fanLog is a processor's ordinary notifications, each stored once for
// every listener: the distributor appends, and each listener reads from
// its own position (Listener.seq) on. A backlog of n notifications behind
// each of h listeners holds n entries, not n × h: a processor's memory no
// longer grows with its handlers when they fall behind together, as they
// do whenever the handler goroutines lose the processor for a while.
//
// An entry is cleared once every listener has read it (reclaim), and a
// chunk every listener has left goes back to logChunks: by the reader that
// leaves a chunk, by the last listener to fall idle, and by a listener
// that closes. Sync notifications and a listener's own Adds (its initial
// list) do not go through the log: they wait in the listener's buffer,
// each with the log position it follows (Listener.runs).
type fanLog struct {
	// tail is the number of entries ever appended, and the position of
	// the next; written under mu, read by the listeners without it.
	tail atomic.Int64
	// awake counts the readers not known to be idle: the last to fall idle
	// reclaims, so that an idle processor holds no delivered notification.
	awake atomic.Int64

	mu      sync.Mutex
	head    *logChunk // the oldest chunk held; nil with last
	last    *logChunk // the chunk that holds position tail; nil when empty
	cleared int64     // the entries before it are cleared (or released)
	readers map[*Listener]struct{}
}

func newFanLog() *fanLog { return &fanLog{readers: map[*Listener]struct{}{}} }

// append adds n for every reader and reports whether there was one; with
// none, n is dropped (nobody would read it).
func (g *fanLog) append(n Notification) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.readers) == 0 {
		return false
	}
	t := g.tail.Load()
	c := g.last
	c.slots[t-c.first] = n
	if t+1 == c.first+logChunkSize {
		next := newLogChunk(t + 1)
		c.next.Store(next)
		g.last = next
	}
	g.tail.Store(t + 1)
	return true
}

// attach makes l a reader from the tail on: it gets what is appended from
// now. Called with l.mu held.
func (g *fanLog) attach(l *Listener) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.last == nil {
		g.last = newLogChunk(g.tail.Load())
		g.head = g.last
	}
	g.readers[l] = struct{}{}
	g.awake.Add(1)
	l.cur = g.last
	l.seq.Store(g.tail.Load())
}

// detach stops l reading and lets go of what only l still needed. Called
// with l.mu held; idle says whether l was counted idle.
func (g *fanLog) detach(l *Listener, idle bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.readers, l)
	if !idle {
		g.awake.Add(-1)
	}
	g.reclaimLocked()
}

// reclaim clears the entries every reader has read and releases the
// chunks every reader has left.
func (g *fanLog) reclaim() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.reclaimLocked()
}

func (g *fanLog) reclaimLocked() {
	tail := g.tail.Load()
	done := tail // the lowest position a reader has yet to read
	for l := range g.readers {
		done = min(done, l.seq.Load())
	}
	for c := g.head; c != nil && g.cleared < done; c = c.next.Load() {
		from, to := max(g.cleared, c.first), min(done, c.first+logChunkSize)
		if from < to {
			clear(c.slots[from-c.first : to-c.first])
			g.cleared = to
		}
	}
	// A reader moves to the next chunk before it publishes the position
	// past a chunk's end, so a chunk whose entries are all below done is
	// referenced by no reader.
	for g.head != nil && g.head.first+logChunkSize <= done && g.head != g.last {
		c := g.head
		g.head = c.next.Load()
		releaseLogChunk(c)
	}
	if len(g.readers) == 0 {
		// No reader: the chunk for the tail is not needed either.
		if g.head != nil {
			releaseLogChunk(g.head)
		}
		g.head, g.last, g.cleared = nil, nil, tail
	}
}

// logChunks keeps free log chunks for the processors of the process: 16
// (640 KiB) for good, the rest until the garbage collector takes them.
var logChunks = ring.NewFreeList[logChunk](16)

// newLogChunk returns a chunk whose entries start at first.
func newLogChunk(first int64) *logChunk {
	c := logChunks.Get()
	if c == nil {
		c = new(logChunk)
	}
	c.first = first
	return c
}

// releaseLogChunk unlinks c and gives it back. Its entries are clear:
// reclaim releases only chunks whose entries it has cleared.
func releaseLogChunk(c *logChunk) {
	c.next.Store(nil)
	logChunks.Put(c)
}
