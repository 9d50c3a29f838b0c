// Package workqueue is a work queue for controllers: a FIFO of keys with a
// dirty set and a processing set, a delaying queue and a rate-limiting queue.
// It has client-go's util/workqueue semantics with clearer names, fewer
// goroutines and three contracts made precise.
//
// Guarantees of Queue:
//   - Fair: Get hands out items in the order they were (re)queued.
//   - Stingy: an item is never handed out twice before Done; Adds of an item
//     that waits collapse into one.
//   - Re-enqueueable: an Add while an item is processing makes it come back
//     exactly once, at the tail, when Done is called.
//   - ShutDown: later Adds are ignored, Get returns queued items until the
//     queue is empty and then (zero, true); blocked Gets wake.
//
// Where client-go's contract is undefined or its doc and code disagree, this
// package decides:
//   - Done of an item that is not being processed (never handed out, or
//     already Done) is a no-op. client-go re-queues a dirty item there and
//     so holds it twice in its FIFO (util/workqueue/queue.go:289-302).
//   - ShutDownWithDrain waits until every item accepted before the call has
//     been handed out and marked Done: the FIFO and the processing set are
//     empty. This is what client-go documents ("waits until all items in the
//     queue have been processed", queue.go:321-322); client-go's code waits
//     for the processing set only (queue.go:338). ShutDown during the wait
//     makes it return at once.
//   - ShutDown of a delaying queue returns only after its goroutine has
//     exited; waiting items are dropped.
//
// What a queue keeps, per item and for how long (the suite checks it:
// queue/retention, delaying/retention, delaying/one-timer):
//   - Queue: an item's state (dirty, processing) from Add until it is
//     neither queued nor processing, that is until Done of its last
//     hand-out; the FIFO's slot until Get hands the item out (slots are
//     cleared when read, and the ring gives memory back after a burst).
//   - Delaying: a waiting item's heap entry and index entry from AddAfter
//     until it moves to the queue or shutdown drops it (the vacated heap
//     slot is cleared; the heap gives memory back after a burst). One
//     timer per queue, armed only while an item waits; none after
//     shutdown.
//   - RateLimiting: nothing of its own; the limiter's per-item state
//     lives until Forget (see package ratelimit).
//
// Every goroutine a queue starts (the metrics updater when metrics are on,
// the delaying queue's waiting loop) is owned by the queue and stopped and
// joined by ShutDown or ShutDownWithDrain.
package workqueue
