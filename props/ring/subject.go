// Package ring is the conformance suite for FIFO ring buffers: upstream's
// growing ring (k8s.io/utils/buffer TypedRingGrowing), its shrinking Ring,
// and chunked buffers, checked against the model in spec/ring.
//
// Give Checks a Subject and run the result with props.Run:
//
//	props.Run(t, ring.Checks(subject))
//
// Values are strings. Check names start with the subject's Name, so that
// several buffers of one implementation can be checked side by side in one
// component ("ring/fifo", "chunked/fifo", ...).
package ring

// Component is this suite's name in traces and in kverify's table.
const Component = "ring"

// Ring is the method set of a buffer (TypedRingGrowing[string]'s).
type Ring interface {
	ReadOne() (string, bool)
	WriteOne(string)
	Len() int
	Cap() int
}

// CapLaw says which capacity law a subject follows.
type CapLaw int

// The capacity laws (see spec/ring).
const (
	// LawDoubling is TypedRingGrowing's: Cap starts at max(initialSize, 0)
	// and changes only on a write made when Len == Cap, to 2*Cap or 16.
	LawDoubling CapLaw = iota
	// LawShrinking is upstream Ring's: LawDoubling, and a read that leaves
	// the ring empty sets Cap to Subject.Normal if it was larger.
	LawShrinking
	// LawChunked is a chunked buffer's: Cap is a multiple of the chunk size
	// k, 0 before the first write, moves by at most one chunk per operation,
	// stays <= Len + 3k - 2, and is at most k whenever the buffer is empty.
	LawChunked
)

func (l CapLaw) String() string {
	switch l {
	case LawDoubling:
		return "doubling"
	case LawShrinking:
		return "shrinking"
	case LawChunked:
		return "chunked"
	}
	return "unknown"
}

// Subject is a buffer implementation under test.
type Subject struct {
	// Name prefixes the check names; empty means "ring".
	Name string
	// New returns an empty buffer made with initialSize (for a chunked
	// buffer: its chunk size). It is called with 0, small sizes and, by
	// the negative-size check, -1.
	New func(initialSize int) Ring
	// Law is the capacity law the buffers follow.
	Law CapLaw
	// Normal is, for LawShrinking, the NormalSize of every buffer New makes.
	Normal int
	// ChunkSize is, for LawChunked, the chunk size of New(initialSize)'s
	// buffer, as the implementation documents it.
	ChunkSize func(initialSize int) int
}

func (s Subject) name() string {
	if s.Name == "" {
		return "ring"
	}
	return s.Name
}

// shrinks reports whether the subject gives memory back when drained.
func (s Subject) shrinks() bool { return s.Law == LawShrinking || s.Law == LawChunked }
