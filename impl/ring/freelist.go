package ring

import "sync"

// FreeList keeps free values for reuse, shared by the structures that take
// and give them back (the chunks of a Pool's buffers, the chunks of an
// informer's logs): up to its bound for good, and the ones beyond it only
// until the garbage collector takes them (a sync.Pool: what has gone
// unused for two collections). So values that circulate are never dropped
// for want of room, which would make a steady backlog allocate, and a
// burst still gives its memory back: two collections after it has
// drained, what stays is at most the bound. It is safe for concurrent use.
type FreeList[T any] struct {
	max  int
	mu   sync.Mutex
	free []*T
	// spill holds the free values beyond max, as *T, until the garbage
	// collector reclaims them.
	spill sync.Pool
}

// NewFreeList returns a free list that keeps at most maxKept values for
// good (none if <= 0) and the rest until the garbage collector reclaims
// them.
func NewFreeList[T any](maxKept int) *FreeList[T] {
	return &FreeList[T]{max: max(maxKept, 0)}
}

// Get takes a free value, or returns nil if there is none. A nil list has
// none.
func (f *FreeList[T]) Get() *T {
	if f == nil {
		return nil
	}
	if x := f.takeKept(); x != nil {
		return x
	}
	if x, ok := f.spill.Get().(*T); ok {
		return x
	}
	return nil
}

// takeKept takes a value off the list kept for good, or returns nil.
func (f *FreeList[T]) takeKept() *T {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := len(f.free)
	if n == 0 {
		return nil
	}
	x := f.free[n-1]
	f.free[n-1] = nil
	f.free = f.free[:n-1]
	return x
}

// Put keeps x, which must reference nothing the caller no longer needs
// (a chunk with every slot zero): on the list if there is room, else in
// the spill until the garbage collector takes it. A nil list keeps
// nothing.
func (f *FreeList[T]) Put(x *T) {
	if f == nil {
		return
	}
	f.mu.Lock()
	kept := len(f.free) < f.max
	if kept {
		f.free = append(f.free, x)
	}
	f.mu.Unlock()
	if !kept {
		f.spill.Put(x)
	}
}
