// Package usermodule is a module that is not kverify, with its own work
// queue, checked by kverify's conformance library the way the README
// shows: the README's snippet, on a queue that has no metrics.
package usermodule

import "sync"

// Queue is a work queue with client-go's semantics where they are sound,
// and none of its extras: no metrics, no clock, no pluggable storage.
// Where client-go breaks its own contract kverify holds a queue to the
// contract (client-go declares those as divergences): a drain waits for
// queued items too, and Done of an item not being processed changes
// nothing.
type Queue struct {
	mu           sync.Mutex
	cond         *sync.Cond
	queue        []string
	dirty        map[string]bool
	processing   map[string]bool
	shuttingDown bool
	drain        bool
	dedup        bool
}

// New returns an empty queue.
func New() *Queue {
	q := &Queue{dirty: map[string]bool{}, processing: map[string]bool{}, dedup: true}
	q.cond = sync.NewCond(&q.mu)
	return q
}

// NewBroken returns a queue with a bug: an Add of a queued item queues it
// again. The example's replay test shows what a failure looks like.
func NewBroken() *Queue {
	q := New()
	q.dedup = false
	return q
}

// Add marks item as needing processing.
func (q *Queue) Add(item string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.shuttingDown || (q.dedup && q.dirty[item]) {
		return
	}
	q.dirty[item] = true
	if q.processing[item] {
		return
	}
	q.queue = append(q.queue, item)
	q.cond.Signal()
}

// Len is the number of items waiting to be handed out.
func (q *Queue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.queue)
}

// Get blocks until an item can be handed out, or the queue shuts down
// with nothing queued.
func (q *Queue) Get() (string, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.queue) == 0 && !q.shuttingDown {
		q.cond.Wait()
	}
	if len(q.queue) == 0 {
		return "", true
	}
	item := q.queue[0]
	q.queue[0] = "" // the backing array must not keep it
	q.queue = q.queue[1:]
	q.processing[item] = true
	delete(q.dirty, item)
	return item, false
}

// Done marks item as processed; if it was added meanwhile, it is queued.
func (q *Queue) Done(item string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.processing[item] {
		return
	}
	delete(q.processing, item)
	if q.dirty[item] {
		q.queue = append(q.queue, item)
		q.cond.Signal()
	} else if len(q.processing) == 0 && len(q.queue) == 0 {
		q.cond.Broadcast() // a drain may be waiting
	}
}

// ShutDown stops the queue: Adds are ignored, Gets return what is queued,
// then shutdown.
func (q *Queue) ShutDown() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.drain = false
	q.shuttingDown = true
	q.cond.Broadcast()
}

// ShutDownWithDrain is ShutDown, then waits until every item queued or
// processing has been handed out and marked Done.
func (q *Queue) ShutDownWithDrain() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.drain = true
	q.shuttingDown = true
	q.cond.Broadcast()
	for (len(q.processing) != 0 || len(q.queue) != 0) && q.drain {
		q.cond.Wait()
	}
}

// ShuttingDown reports whether ShutDown was called.
func (q *Queue) ShuttingDown() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.shuttingDown
}
