package ring

// DefaultSize is the capacity a Growing with no room takes on its first
// write (upstream's defaultRingSize).
const DefaultSize = 16

// Growing is an unbounded FIFO ring buffer that doubles when full, with
// k8s.io/utils/buffer TypedRingGrowing's semantics: same FIFO order, same
// capacities, consumed slots zeroed. The zero value is empty, has Cap 0 and
// is ready to use. Not safe for concurrent use.
type Growing[T any] struct {
	data []T // len(data) is Cap
	beg  int // index of the oldest value
	n    int // number of values held
}

// NewGrowing returns an empty Growing with room for initialSize values. A
// negative initialSize is treated as 0 (upstream panics there).
func NewGrowing[T any](initialSize int) *Growing[T] {
	if initialSize < 0 {
		initialSize = 0
	}
	return &Growing[T]{data: make([]T, initialSize)}
}

// ReadOne removes and returns the oldest value. On an empty buffer it
// returns (zero, false) and changes nothing. The slot is zeroed, so the
// buffer keeps no reference to the value.
func (r *Growing[T]) ReadOne() (T, bool) {
	var zero T
	if r.n == 0 {
		return zero, false
	}
	// Locals, so that the fields are read once: after the store into
	// the array the compiler would reload them (it may alias r).
	data, beg := r.data, r.beg
	x := data[beg]
	data[beg] = zero
	beg++
	if beg == len(data) {
		beg = 0
	}
	r.beg = beg
	r.n--
	return x, true
}

// WriteOne appends x. When the buffer is full it first grows to twice its
// capacity (DefaultSize when the capacity is 0), moving the values to the
// front of the new array in order.
func (r *Growing[T]) WriteOne(x T) {
	if r.n == len(r.data) {
		r.grow()
	}
	data := r.data
	i := r.beg + r.n
	if i >= len(data) {
		i -= len(data)
	}
	data[i] = x
	r.n++
}

// grow doubles the array. It is called only when the buffer is full.
func (r *Growing[T]) grow() {
	size := 2 * len(r.data)
	if size == 0 {
		size = DefaultSize
	}
	r.resize(size)
}

// Shrink reallocates the array to size slots if the values fit, and
// reports whether it did. Growing never shrinks on its own (upstream's
// semantics); a caller with its own policy for giving memory back, such as
// the workqueue's FIFO, calls Shrink.
func (r *Growing[T]) Shrink(size int) bool {
	if size < r.n || size >= len(r.data) {
		return false
	}
	r.resize(size)
	return true
}

// resize moves the values, oldest first, to the front of a new array.
func (r *Growing[T]) resize(size int) {
	data := make([]T, size)
	if r.beg+r.n <= len(r.data) {
		copy(data, r.data[r.beg:r.beg+r.n])
	} else {
		k := copy(data, r.data[r.beg:])
		copy(data[k:], r.data[:r.n-k])
	}
	r.data, r.beg = data, 0
}

// Len returns the number of values held.
func (r *Growing[T]) Len() int { return r.n }

// Cap returns the number of values the buffer can hold before it grows.
func (r *Growing[T]) Cap() int { return len(r.data) }
