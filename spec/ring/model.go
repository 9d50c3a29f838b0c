// Package ring is the reference model of a FIFO ring buffer and the laws
// its capacity follows.
//
// The model is pure: no goroutines, no randomness, no aliasing. Model
// values are immutable from the outside: every transition returns a new
// Model, so one value can serve as rapid's expected state and as a fuzz
// oracle at once.
//
// Rules:
//   - Write(x) appends x; Read removes and returns the oldest value, or
//     (zero, false) when the model is empty; Len is the number of values
//     held.
//   - Cap follows one of two upstream laws (k8s.io/utils/buffer):
//     Growing (TypedRingGrowing): Cap starts at max(InitialSize, 0) and
//     changes only on a Write made when Len == Cap, to 2*Cap, or to
//     DefaultSize when Cap is 0; it never shrinks. Shrinking (Ring, made
//     with NewShrinking): the same growth, and any Read (a failed one too)
//     that leaves Len == 0 while Cap > Normal sets Cap to Normal.
//   - Chunked buffers follow no exact capacity; ChunkedCap states the
//     bounds they keep.
package ring

import "fmt"

// DefaultSize is the capacity a full ring of capacity 0 grows to
// (k8s.io/utils/buffer defaultRingSize).
const DefaultSize = 16

// Model is a FIFO of T with a capacity that follows upstream's law.
type Model[T any] struct {
	// The values held are (*log)[beg:end]. The log is append-only and
	// shared between a model and the models derived from it: a write
	// appends in place only when no other model has appended past end,
	// and copies otherwise, so a value never sees another's change and a
	// run of writes costs amortised O(1) each.
	log      *[]T
	beg, end int
	cap      int
	normal   int // the size a Shrinking model returns to; -1: never shrinks
}

// New returns an empty model of TypedRingGrowing made with initialSize.
func New[T any](initialSize int) Model[T] {
	return Model[T]{cap: max(initialSize, 0), normal: -1}
}

// NewShrinking returns an empty model of upstream's Ring made with
// InitialSize initialSize and NormalSize normal.
func NewShrinking[T any](initialSize, normal int) Model[T] {
	return Model[T]{cap: max(initialSize, 0), normal: max(normal, 0)}
}

// GrownCap is the capacity a full ring of capacity c grows to.
func GrownCap(c int) int {
	if c == 0 {
		return DefaultSize
	}
	return 2 * c
}

// Write returns the model after x is appended.
func (m Model[T]) Write(x T) Model[T] {
	next := m
	if m.log != nil && len(*m.log) == m.end {
		*m.log = append(*m.log, x)
	} else {
		log := append(make([]T, 0, 2*(m.end-m.beg)+1), m.items()...)
		log = append(log, x)
		next.log, next.beg, next.end = &log, 0, m.end-m.beg
	}
	next.end++
	if m.Len() == m.cap {
		next.cap = GrownCap(m.cap)
	}
	return next
}

func (m Model[T]) items() []T {
	if m.log == nil {
		return nil
	}
	return (*m.log)[m.beg:m.end:m.end]
}

// Read returns the model after the oldest value is removed, and that value;
// ok is false when the model is empty.
func (m Model[T]) Read() (next Model[T], x T, ok bool) {
	next = m
	if m.Len() > 0 {
		x, ok = (*m.log)[m.beg], true
		next.beg++
	}
	if m.normal >= 0 && next.Len() == 0 && next.cap > m.normal {
		next.cap = m.normal
	}
	return next, x, ok
}

// Len is the number of values held.
func (m Model[T]) Len() int { return m.end - m.beg }

// Cap is the capacity upstream's law gives.
func (m Model[T]) Cap() int { return m.cap }

// Items returns the values held, oldest first, in a new slice.
func (m Model[T]) Items() []T { return append([]T(nil), m.items()...) }

// Op is an operation on a buffer, for the chunked capacity law.
type Op uint8

// The operations that may change a buffer's capacity.
const (
	OpWrite   Op = iota
	OpRead       // a ReadOne, failed or not
	OpObserve    // Len or Cap: must change nothing
)

// ChunkedCap checks the capacity law of a buffer that allocates in chunks
// of k slots, keeps at most one spare chunk and one chunk when empty,
// for an operation op that took the buffer from (lenBefore, capBefore) to
// (lenAfter, capAfter). wrote tells whether any write has happened yet
// (this one included). It returns nil or what broke.
//
//   - Cap is a multiple of k, and Len <= Cap.
//   - Before the first write Cap is 0 (nothing is allocated up front).
//   - A write changes Cap by 0 or +k (one chunk, no copy, no doubling); a
//     read by 0 or -k; Len and Cap change nothing.
//   - Cap <= Len + 3k - 2: at most a partly read head chunk, a partly
//     written tail chunk and one spare chunk beyond the values held.
//   - An empty buffer that has been written to holds at most one chunk.
func ChunkedCap(k int, op Op, lenBefore, capBefore, lenAfter, capAfter int, wrote bool) error {
	switch {
	case k <= 0:
		return fmt.Errorf("chunk size %d is not positive", k)
	case capAfter%k != 0:
		return fmt.Errorf("cap %d is not a multiple of the chunk size %d", capAfter, k)
	case lenAfter > capAfter:
		return fmt.Errorf("len %d > cap %d", lenAfter, capAfter)
	case !wrote && capAfter != 0:
		return fmt.Errorf("cap %d before any write, want 0", capAfter)
	}
	d := capAfter - capBefore
	switch op {
	case OpWrite:
		if d != 0 && d != k {
			return fmt.Errorf("a write changed cap from %d to %d; want no change or +%d (one chunk)", capBefore, capAfter, k)
		}
	case OpRead:
		if d != 0 && d != -k {
			return fmt.Errorf("a read changed cap from %d to %d; want no change or -%d (one chunk)", capBefore, capAfter, k)
		}
	case OpObserve:
		if d != 0 {
			return fmt.Errorf("an observation changed cap from %d to %d", capBefore, capAfter)
		}
	}
	if wrote && capAfter > lenAfter+3*k-2 {
		return fmt.Errorf("cap %d > len %d + 3*%d - 2: more than a partly read chunk, a partly written chunk and a spare", capAfter, lenAfter, k)
	}
	if wrote && lenAfter == 0 && capAfter > k {
		return fmt.Errorf("empty with cap %d, want at most one chunk (%d)", capAfter, k)
	}
	return nil
}
