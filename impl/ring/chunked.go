package ring

// DefaultChunkSize is the chunk size of a Chunked made with a chunk size
// <= 0, and of the zero value. It matches the 1024 slots client-go
// pre-allocates per listener (tools/cache/shared_informer.go:494).
const DefaultChunkSize = 1024

// Chunked is an unbounded FIFO buffer stored as a singly linked list of
// fixed-size chunks. Writes fill the tail chunk and link a new one when it
// is full; reads empty the head chunk and unlink it when it is done. No
// value is ever copied, a drained chunk is released at once (one is kept
// as a spare for the next chunk the writer needs), and an empty buffer
// keeps a single chunk. The zero value is empty, has Cap 0, uses
// DefaultChunkSize and is ready to use. Not safe for concurrent use.
type Chunked[T any] struct {
	// The values are rbuf[r:] (the head chunk's slots), the slots of the
	// chunks linked after it, and wbuf[:w] (the tail chunk's). When head
	// and tail are one chunk, rbuf and wbuf are its slots and the values
	// are rbuf[r:w].
	rbuf, wbuf []T
	r, w       int
	n          int       // number of values held
	head, tail *chunk[T] // nil until the first write
	spare      *chunk[T] // an empty chunk kept for the writer, or nil
	chunks     int       // chunks allocated and held, the spare included
	size       int       // chunk size; 0 means DefaultChunkSize
	pool       *Pool[T]  // where released chunks go and new ones come from; nil: the heap
}

type chunk[T any] struct {
	slots []T
	next  *chunk[T]
}

// NewChunked returns an empty Chunked whose chunks hold chunkSize values.
// A chunkSize <= 0 means DefaultChunkSize. No memory is allocated until
// the first write.
func NewChunked[T any](chunkSize int) *Chunked[T] {
	if chunkSize <= 0 {
		chunkSize = DefaultChunkSize
	}
	return &Chunked[T]{size: chunkSize}
}

// ChunkSize returns the number of values a chunk holds.
func (c *Chunked[T]) ChunkSize() int {
	if c.size == 0 {
		return DefaultChunkSize
	}
	return c.size
}

// newChunk returns the spare chunk, or one from the pool, or a new one.
func (c *Chunked[T]) newChunk() *chunk[T] {
	if s := c.spare; s != nil {
		c.spare = nil
		return s
	}
	c.chunks++
	if ch := c.pool.get(); ch != nil {
		return ch
	}
	return &chunk[T]{slots: make([]T, c.ChunkSize())}
}

// release lets go of a chunk the buffer no longer holds: into the pool if
// there is one with room, else to the garbage collector. Its slots are
// all zero (every slot is cleared when read).
func (c *Chunked[T]) release(ch *chunk[T]) {
	c.chunks--
	c.pool.put(ch)
}

// Pool is a free list of chunks shared by the Chunked buffers made with
// its New, so that buffers whose backlogs come and go (the listeners of
// one informer under steady traffic) reuse each other's chunks instead of
// allocating and dropping one per 1024 values. It keeps up to its bound
// of free chunks for good and the rest until the garbage collector takes
// them (a FreeList): two collections after a burst has drained, what
// stays is at most bound × chunk size empty slots.
// It is safe for concurrent use; the buffers themselves are not.
type Pool[T any] struct {
	size int
	free *FreeList[chunk[T]]
}

// NewPool returns a pool of chunks of chunkSize values (DefaultChunkSize
// if <= 0) that keeps at most maxFree free chunks for good (none if <= 0)
// and the rest until the garbage collector reclaims them.
func NewPool[T any](chunkSize, maxFree int) *Pool[T] {
	if chunkSize <= 0 {
		chunkSize = DefaultChunkSize
	}
	return &Pool[T]{size: chunkSize, free: NewFreeList[chunk[T]](maxFree)}
}

// New returns an empty Chunked whose chunks come from and go back to p.
func (p *Pool[T]) New() *Chunked[T] { return &Chunked[T]{size: p.size, pool: p} }

// get takes a free chunk, or returns nil. A nil pool has none.
func (p *Pool[T]) get() *chunk[T] {
	if p == nil {
		return nil
	}
	return p.free.Get()
}

// put keeps ch, unlinked and with every slot zero. A nil pool keeps
// nothing.
func (p *Pool[T]) put(ch *chunk[T]) {
	if p != nil {
		p.free.Put(ch)
	}
}

// WriteOne appends x, linking a chunk when the tail chunk is full.
func (c *Chunked[T]) WriteOne(x T) {
	if c.w == len(c.wbuf) {
		c.link()
	}
	c.wbuf[c.w] = x
	c.w++
	c.n++
}

// link makes room for a write: the first chunk, or a chunk after the full
// tail.
func (c *Chunked[T]) link() {
	next := c.newChunk()
	if c.tail == nil {
		c.head = next
		c.rbuf, c.r = next.slots, 0
	} else {
		c.tail.next = next
	}
	c.tail = next
	c.wbuf, c.w = next.slots, 0
}

// ReadOne removes and returns the oldest value. On an empty buffer it
// returns (zero, false) and changes nothing. The slot is zeroed, a chunk
// whose values have all been read is released (or kept as the spare), and
// when the buffer becomes empty it rewinds its one remaining chunk and
// drops the spare.
func (c *Chunked[T]) ReadOne() (T, bool) {
	var zero T
	if c.n == 0 {
		return zero, false
	}
	x := c.rbuf[c.r]
	c.rbuf[c.r] = zero
	c.r++
	c.n--
	if c.n == 0 || c.r == len(c.rbuf) {
		c.advance()
	}
	return x, true
}

// advance is called after a read that emptied the buffer or the head chunk.
func (c *Chunked[T]) advance() {
	if c.n == 0 {
		// Every value written has been read, so head == tail and r == w:
		// reuse the chunk from its start and let the spare go.
		c.r, c.w = 0, 0
		if c.spare != nil {
			c.release(c.spare)
			c.spare = nil
		}
		return
	}
	done := c.head
	c.head = done.next
	c.rbuf, c.r = c.head.slots, 0
	done.next = nil
	if c.spare == nil {
		c.spare = done // its slots are all zeroed
	} else {
		c.release(done)
	}
}

// Reset empties the buffer: it drops the values it holds (their slots are
// cleared, so no reference to them stays behind) and lets go of every
// chunk, back to its pool if it has one. The buffer is then as new, with
// Cap 0, and ready to use. A listener that closes resets its buffer, so
// that its backlog's chunks serve the other listeners.
func (c *Chunked[T]) Reset() {
	for ch := c.head; ch != nil; {
		next := ch.next
		clear(ch.slots)
		ch.next = nil
		c.release(ch)
		ch = next
	}
	if c.spare != nil {
		c.release(c.spare)
	}
	*c = Chunked[T]{size: c.size, pool: c.pool}
}

// Len returns the number of values held.
func (c *Chunked[T]) Len() int { return c.n }

// Cap returns the number of slots allocated: the chunks in use and the
// spare, times the chunk size.
func (c *Chunked[T]) Cap() int { return c.chunks * c.ChunkSize() }
