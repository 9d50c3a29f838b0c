package ring

import "slices"

// DefaultSize is the capacity a Growing with no room takes on its first
// write (upstream's defaultRingSize).
const DefaultSize = 16

// Growing is an unbounded FIFO ring buffer with k8s.io/utils/buffer
// TypedRingGrowing's semantics: same FIFO order, same capacities (Cap
// doubles on a write into a full buffer), consumed slots zeroed. The zero
// value is empty, has Cap 0 and is ready to use. Not safe for concurrent
// use.
//
// It grows without copying the buffer. Upstream's ring, when full,
// allocates an array of twice its capacity and moves every value into it.
// Growing's ring is a cycle of segments: growing from capacity c allocates
// one segment of c slots and links it in at the write position, so a burst
// allocates half the memory and moves at most the values of one segment
// (those past the write position when it lies inside a segment; none in a
// burst that has not wrapped).
type Growing[T any] struct {
	segs [][]T // the ring's segments, in ring order; their lengths sum to size
	size int   // Cap
	n    int   // number of values held
	// The read and write positions: segment index and offset, always on
	// a slot (an offset at a segment's end moves on to the next segment,
	// the last one's to the first). rbuf and wbuf are their segments.
	// When the buffer is empty or full they are one position.
	ri, r      int
	wi, w      int
	rbuf, wbuf []T
}

// NewGrowing returns an empty Growing with room for initialSize values. A
// negative initialSize is treated as 0 (upstream panics there).
func NewGrowing[T any](initialSize int) *Growing[T] {
	if initialSize < 0 {
		initialSize = 0
	}
	g := &Growing[T]{}
	if initialSize != 0 {
		g.reset(make([]T, initialSize), 0)
	}
	return g
}

// reset makes seg, holding n values from its start, the whole ring.
func (g *Growing[T]) reset(seg []T, n int) {
	if g.segs == nil {
		// Room for the segments of seven doublings: a ring made with
		// client-go's 1024 slots holds 131,072 before this grows.
		g.segs = make([][]T, 0, 8)
	}
	g.segs = append(g.segs[:0], seg)
	clear(g.segs[1:cap(g.segs)]) // no reference to the dropped segments
	g.size, g.n = len(seg), n
	g.ri, g.r, g.rbuf = 0, 0, seg
	g.wi, g.w, g.wbuf = 0, n, seg
	if n == len(seg) {
		g.w = 0
	}
}

// ReadOne removes and returns the oldest value. On an empty buffer it
// returns (zero, false) and changes nothing. The slot is zeroed, so the
// buffer keeps no reference to the value.
func (g *Growing[T]) ReadOne() (T, bool) {
	var zero T
	if g.n == 0 {
		return zero, false
	}
	buf, r := g.rbuf, g.r
	x := buf[r]
	buf[r] = zero
	r++
	g.n--
	if r == len(buf) {
		g.ri++
		if g.ri == len(g.segs) {
			g.ri = 0
		}
		g.rbuf, r = g.segs[g.ri], 0
	}
	g.r = r
	return x, true
}

// WriteOne appends x. When the buffer is full it first grows to twice its
// capacity (DefaultSize when the capacity is 0).
func (g *Growing[T]) WriteOne(x T) {
	if g.n == g.size {
		g.grow()
	}
	buf, w := g.wbuf, g.w
	buf[w] = x
	w++
	g.n++
	if w == len(buf) {
		g.wi++
		if g.wi == len(g.segs) {
			g.wi = 0
		}
		g.wbuf, w = g.segs[g.wi], 0
	}
	g.w = w
}

// grow doubles the capacity. It is called only when the buffer is full,
// so the read and the write position are one.
func (g *Growing[T]) grow() {
	if g.size == 0 {
		g.reset(make([]T, DefaultSize), 0)
		return
	}
	seg := make([]T, g.size)
	if g.w == 0 {
		// The position is a segment's start: the newest value ends the
		// segment before it. The new segment goes in between.
		g.segs = slices.Insert(g.segs, g.wi, seg)
		g.ri++
		g.wbuf = seg
	} else {
		// The position splits segment wi: its slots before w hold the
		// newest values, from w on the oldest. The oldest move to the
		// end of the new segment, linked in after wi: the free slots
		// are then wi's from w on and the new segment's first ones, and
		// the reader goes on from the moved values.
		old := g.wbuf
		moved := copy(seg[len(seg)-(len(old)-g.w):], old[g.w:])
		clear(old[g.w:])
		g.segs = slices.Insert(g.segs, g.wi+1, seg)
		g.ri, g.r, g.rbuf = g.wi+1, len(seg)-moved, seg
	}
	g.size += len(seg)
}

// Shrink reallocates the buffer to size slots, in one segment, if the
// values fit, and reports whether it did. Growing never shrinks on its
// own (upstream's semantics); a caller with its own policy for giving
// memory back, such as the workqueue's FIFO, calls Shrink.
func (g *Growing[T]) Shrink(size int) bool {
	if size < g.n || size >= g.size {
		return false
	}
	if size == 0 {
		*g = Growing[T]{}
		return true
	}
	n := g.n
	seg := make([]T, size)
	for i := range n {
		seg[i], _ = g.ReadOne()
	}
	g.reset(seg, n)
	return true
}

// Len returns the number of values held.
func (g *Growing[T]) Len() int { return g.n }

// Cap returns the number of values the buffer can hold before it grows.
func (g *Growing[T]) Cap() int { return g.size }
