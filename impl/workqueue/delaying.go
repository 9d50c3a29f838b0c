package workqueue

import (
	"math"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// DelayingConfig configures a Delaying queue. The zero value is valid. It
// embeds the plain queue's Config, so every Config field (Name, Metrics,
// Clock, Order) means the same here, and Clock also times the delays. With
// Name and Metrics set, the queue also counts retries: every AddAfter it
// accepts, as client-go does.
type DelayingConfig[T comparable] struct {
	Config[T]
}

// never is the readyAt of an entry whose delay does not fit in a
// time.Duration from the queue's creation (about 292 years): such an entry
// never fires and arms no timer.
const never = time.Duration(math.MaxInt64)

// readClock asks fire to read the clock itself.
const readClock = time.Duration(math.MinInt64)

// Delaying is a Queue that can also add an item after a delay (AddAfter).
// It is safe for concurrent use. Make one with NewDelaying.
//
// Items that wait for their delay are held in one min-heap of values
// ordered by ready time, ties broken by the order in which the ready times
// were set, with an index for deduplication (no allocation per item once
// the heap has grown): an item waits at most once, and of two
// AddAfter calls for a waiting item the earlier ready time wins (a later or
// equal one is discarded). Waiting does not affect the queue: Add, or
// AddAfter with d <= 0, of a waiting item queues it at once and leaves its
// waiting entry in place, as in client-go.
//
// One goroutine moves ready items into the queue, one timer per queue wakes
// it for the earliest ready time; there is no polling. When the clock's
// timer fires late, every item whose time has come is moved, in ready-time
// order. Items are moved one at a time, each atomically with respect to
// AddAfter; a concurrent Add or Get may fall between two of them.
//
// Ready times are kept as offsets on the clock from the queue's creation,
// saturating at about 292 years: AddAfter never overflows, and an item whose
// delay reaches that far never fires.
//
// ShutDown and ShutDownWithDrain drop every waiting item, stop the goroutine
// and wait for it to exit. Unlike client-go's, AddAfter never blocks on a
// full channel.
type Delaying[T comparable] struct {
	q       *Queue[T]
	clock   clock.WithTicker
	base    time.Time     // readyAt offsets are measured from here
	retries CounterMetric // nil: no metrics

	mu      sync.Mutex
	waiting waiting[T]
	closed  bool

	wake     chan struct{} // 1-buffered: the heap's head changed
	stop     chan struct{} // closed to stop the loop
	stopOnce sync.Once
	done     chan struct{} // closed when the loop has exited
}

// NewDelaying returns a running delaying queue. Its goroutine runs until
// ShutDown or ShutDownWithDrain.
func NewDelaying[T comparable](cfg DelayingConfig[T]) *Delaying[T] {
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	d := &Delaying[T]{
		q:     New(cfg.Config),
		clock: cfg.Clock,
		base:  cfg.Clock.Now(),
		wake:  make(chan struct{}, 1),
		stop:  make(chan struct{}),
		done:  make(chan struct{}),
	}
	if cfg.Metrics != nil && cfg.Name != "" {
		d.retries = cfg.Metrics.NewRetriesMetric(cfg.Name)
	}
	go d.loop()
	return d
}

// Add marks item as needing processing now; see Queue.Add. It does not
// affect a waiting entry for item.
func (d *Delaying[T]) Add(item T) { d.q.Add(item) }

// Get blocks until an item is queued or the queue shuts down; see Queue.Get.
//
// When nothing is queued, Get first moves the waiting items whose ready time
// has come itself, rather than block until the queue's goroutine wakes up
// and moves them: a worker retrying with short delays gets its item back
// without two goroutine hand-offs. The goroutine still moves items when no
// Get is waiting, and re-arms its timer for whatever head is left.
func (d *Delaying[T]) Get() (item T, shutdown bool) {
	d.fire(readClock)
	return d.q.Get()
}

// Done marks item as processed; see Queue.Done.
func (d *Delaying[T]) Done(item T) { d.q.Done(item) }

// Len returns the number of queued items, not counting items being
// processed nor items waiting for their delay; see Queue.Len.
func (d *Delaying[T]) Len() int { return d.q.Len() }

// ShuttingDown reports whether ShutDown or ShutDownWithDrain was called.
func (d *Delaying[T]) ShuttingDown() bool { return d.q.ShuttingDown() }

// AddAfter adds item to the queue once delay has passed on the queue's
// clock. With delay <= 0 it adds item at once, before returning. If item is
// already waiting, the earlier of the two ready times is kept. It is ignored
// once the queue is shutting down, and it never blocks for long: it inserts
// into the heap in O(log n) and wakes the goroutine without waiting for it.
func (d *Delaying[T]) AddAfter(item T, delay time.Duration) {
	if delay <= 0 {
		// Not gated on d.closed: until the inner queue shuts down, an
		// immediate add must be accepted (ShutDownWithDrain closes the
		// waiting side before the queue).
		if d.retries != nil && !d.q.ShuttingDown() {
			d.retries.Inc()
		}
		d.q.Add(item)
		return
	}
	at := addSat(d.clock.Since(d.base), delay)
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return
	}
	head := d.waiting.insert(item, at)
	d.mu.Unlock()
	if d.retries != nil {
		d.retries.Inc()
	}
	if head {
		select {
		case d.wake <- struct{}{}:
		default: // a wake-up is already pending
		}
	}
}

// ShutDown drops the waiting items, shuts the queue down (see
// Queue.ShutDown) and returns after the queue's goroutines have exited.
func (d *Delaying[T]) ShutDown() {
	d.closeWaiting()
	d.stopLoop()
	d.q.ShutDown()
}

// ShutDownWithDrain drops the waiting items, stops the goroutine that moves
// them, then shuts the queue down with drain (see Queue.ShutDownWithDrain):
// it waits until every queued item has been handed out and marked Done.
// Items still waiting for their delay are dropped, not waited for. Like
// ShutDown, it returns after the queue's goroutines have exited.
func (d *Delaying[T]) ShutDownWithDrain() {
	d.closeWaiting()
	d.stopLoop()
	d.q.ShutDownWithDrain()
}

// closeWaiting makes AddAfter with a positive delay a no-op and drops every
// waiting item.
func (d *Delaying[T]) closeWaiting() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = true
	d.waiting.reset() // let the items be collected
}

func (d *Delaying[T]) stopLoop() {
	d.stopOnce.Do(func() { close(d.stop) })
	<-d.done
}

// loop is the queue's goroutine: it moves ready items into the queue and
// keeps the timer armed for the heap's head.
func (d *Delaying[T]) loop() {
	defer close(d.done)
	var (
		timer   clock.Timer
		armed   bool          // timer is set and has not been seen to fire
		armedAt time.Duration // the ready time the timer is set for
	)
	// disarm stops the timer. It first drains a value the timer may have
	// delivered but the loop has not received: with the real clock (Go
	// 1.23+ timers) that is a no-op, and with a fake clock whose timer
	// channel holds a stale value it keeps the next fire from blocking the
	// clock.
	disarm := func() {
		if timer == nil {
			return
		}
		select {
		case <-timer.C():
		default:
		}
		timer.Stop()
		armed = false
	}
	defer disarm()
	for {
		now := d.clock.Since(d.base)
		next, ok := d.fire(now)
		switch {
		case !ok || next == never:
			if armed {
				disarm()
			}
		case !armed || next != armedAt:
			wait := subSat(next, now) // > 0: fire moved every entry <= now
			if timer == nil {
				timer = d.clock.NewTimer(wait)
			} else {
				disarm()
				timer.Reset(wait)
			}
			armed, armedAt = true, next
		}
		var fired <-chan time.Time
		if armed {
			fired = timer.C()
		}
		select {
		case <-d.stop:
			return
		case <-d.wake:
		case <-fired:
			// Possibly late, possibly stale (a fake clock's value from
			// before a Reset): fire re-reads the clock either way.
			armed = false
		}
	}
}

// fire moves every waiting entry with ready time <= now into the queue, in
// heap order, and returns the ready time of the new head, if any. now ==
// readClock means the clock's, read only if something waits, so that a Get
// on a queue with nothing waiting costs one lock and no clock read. Each move
// holds the lock only for one pop and one Add, so AddAfter is never held up
// by a large batch.
func (d *Delaying[T]) fire(now time.Duration) (next time.Duration, ok bool) {
	for {
		d.mu.Lock()
		at, ok := d.waiting.peek()
		if !ok {
			d.mu.Unlock()
			return 0, false
		}
		if now == readClock {
			now = d.clock.Since(d.base)
		}
		if at > now {
			// Read under the lock: an AddAfter may lower it at once.
			d.mu.Unlock()
			return at, true
		}
		d.q.Add(d.waiting.pop()) // lock order: d.mu, then q.mu
		d.mu.Unlock()
	}
}

// addSat is a + b, saturating at the bounds of time.Duration.
func addSat(a, b time.Duration) time.Duration {
	c := a + b
	if b > 0 && c < a {
		return math.MaxInt64
	}
	if b < 0 && c > a {
		return math.MinInt64
	}
	return c
}

// subSat is a - b, saturating at the bounds of time.Duration.
func subSat(a, b time.Duration) time.Duration {
	c := a - b
	if b < 0 && c < a {
		return math.MaxInt64
	}
	if b > 0 && c > a {
		return math.MinInt64
	}
	return c
}
