package delta

// InitialSync is a FIFO's bookkeeping of its initial population, the rule
// both FIFOs share: the FIFO is populated by its first Add, Update or
// Delete (synced at once) or by its first Replace, which fixes how many
// items make the initial population; it is synced once that many have been
// popped and their process funcs have returned. Synced never reverts.
//
// Populated, Replaced, Processed, Pending and Synced are called under the
// FIFO's lock; Done and HasSynced from anywhere, without it, so that a
// process func may ask.
type InitialSync struct {
	populated bool
	pending   int // initial items not yet processed
	synced    bool
	done      chan struct{}
}

// NewInitialSync returns the bookkeeping of an empty, unpopulated FIFO.
func NewInitialSync() InitialSync { return InitialSync{done: make(chan struct{})} }

// Populated records an Add, Update or Delete: a FIFO populated that way
// has no initial population to wait for.
func (s *InitialSync) Populated() {
	s.populated = true
	s.check()
}

// Replaced records a Replace that queued n initial items, which count only
// if it is the FIFO's first population.
func (s *InitialSync) Replaced(n int) {
	if !s.populated {
		s.populated = true
		s.pending = n
		s.check()
	}
}

// Pending is the number of initial items not yet processed.
func (s *InitialSync) Pending() int { return s.pending }

// Processed records that n initial items have been processed.
func (s *InitialSync) Processed(n int) {
	if n > 0 && s.pending > 0 {
		s.pending = max(0, s.pending-n)
		s.check()
	}
}

// Synced reports whether the FIFO has synced.
func (s *InitialSync) Synced() bool { return s.synced }

func (s *InitialSync) check() {
	if s.populated && s.pending == 0 && !s.synced {
		s.synced = true
		close(s.done)
	}
}

// Done is closed when the FIFO syncs.
func (s *InitialSync) Done() <-chan struct{} { return s.done }

// HasSynced reports whether the FIFO has synced, without a lock.
func (s *InitialSync) HasSynced() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}
