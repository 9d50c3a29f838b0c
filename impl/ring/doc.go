// Package ring holds the FIFO buffers behind a shared informer's listeners:
// unbounded, single-goroutine queues that hand values out in the order they
// were written.
//
// Growing is k8s.io/utils/buffer's TypedRingGrowing with the same
// observable semantics, capacities included, stored as a cycle of
// segments so that growing links a segment in instead of copying the
// buffer into one twice its size; Chunked is a buffer with the same FIFO
// contract that is gentler on memory during and after a burst.
//
// Guarantees of both buffers:
//   - FIFO: the values ReadOne returns are the values given to WriteOne, in
//     order, with none lost or repeated, across any growth, wrap-around or
//     chunk boundary.
//   - Len is the number of values written and not yet read; 0 <= Len <= Cap.
//   - ReadOne on an empty buffer returns (zero, false) and changes nothing.
//   - No retention: a slot is zeroed when its value is read, so a buffer
//     never keeps a consumed value reachable.
//   - The zero value is an empty buffer ready to use. No size argument
//     panics: a negative size is treated as 0. (Upstream's
//     NewTypedRingGrowing panics on a negative InitialSize, from
//     make([]T, InitialSize) at k8s.io/utils buffer/ring_growing.go:54-59.)
//   - Not safe for concurrent use: callers serialise access, as a
//     listener's single pop goroutine does.
//
// Capacity of Growing (upstream's law, exactly): Cap starts at the initial
// size and changes only inside a WriteOne made when Len == Cap, to 2*Cap,
// or to DefaultSize (16) when Cap was 0. It never shrinks.
//
// Capacity of Chunked (the divergence from upstream, on purpose): upstream's
// ring, when full, allocates an array twice as large and copies every value
// into it, so each growth is a 2x allocation spike during which the old and
// the new array are both live; and it never gives the array back: after a one-million-notification burst the
// listener pins a 2^20-slot array for the life of the process. Chunked
// stores values in a list of fixed-size chunks:
//   - growth allocates one chunk and never copies a value;
//   - a chunk is released as soon as its last value is read, and when the
//     buffer becomes empty it keeps exactly one chunk, so memory returns
//     after a burst drains;
//   - Cap (slots allocated, including at most one spare chunk kept for
//     reuse) is a multiple of the chunk size k, and Cap <= Len + 3k - 2
//     once a value has been written: at most a partly read head chunk, a
//     partly written tail chunk and one spare.
package ring
