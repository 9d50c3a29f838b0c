package informer

import (
	"context"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/utils/clock"
)

// Kind is the kind of a notification.
type Kind uint8

// Notification kinds.
const (
	Add Kind = iota
	Update
	Delete
)

// Notification is one event for a handler.
//
// Kind comes after the objects so that it packs with InInitialList: 40
// bytes on 64-bit machines rather than 48, for every notification a
// backlog holds.
type Notification struct {
	// Old is the previous object (Update) or the deleted one (Delete).
	Old any
	// New is the added or updated object.
	New any
	// Kind says which handler method gets the notification.
	Kind Kind
	// InInitialList marks an Add from the informer's initial list; the
	// listener has synced only once every such Add has returned.
	InInitialList bool
}

// Handler receives a listener's notifications, one call at a time.
type Handler interface {
	OnAdd(obj any, isInInitialList bool)
	OnUpdate(oldObj, newObj any)
	OnDelete(obj any)
}

// SlowHandlerThreshold and SlowCallThreshold trigger the slow-handler
// warning as in client-go (shared_informer.go:1496-1503): strictly more than
// 1024 notifications pending when a call starts, and the call takes
// strictly longer than 100 ms (client-go's trace logs at 100 ms already; see
// the package doc).
const (
	SlowHandlerThreshold = 1024
	SlowCallThreshold    = 100 * time.Millisecond
)

// ListenerOptions configure a Listener. The zero value is valid.
type ListenerOptions struct {
	// Name names the handler in warnings.
	Name string
	// Clock times handler calls for the slow-handler warning; real by default.
	Clock clock.PassiveClock
	// SlowHandler, if set, is called after a handler call that started with
	// more than SlowHandlerThreshold notifications pending behind it and
	// took longer than SlowCallThreshold; pending is that backlog.
	SlowHandler func(name string, pending int64, took time.Duration)
	// OnPanic is called, on the listener's handler goroutine, with the value
	// a handler call panicked with; the notification is then skipped and
	// the next one delivered at once (see the package doc). It must not
	// panic itself. By default the panic and its stack are reported with
	// utilruntime.HandleErrorWithContext, which may pause the goroutine for
	// up to a millisecond (its process-wide error backoff); inside a
	// testing/synctest bubble, whose clock starts in 2000, that backoff
	// compares fake with real time and can sleep for years of fake time,
	// so set OnPanic there.
	OnPanic func(name string, recovered any)
	// NewBuffer makes the buffer behind the pump; by default a chunked
	// buffer that gives memory back after a burst.
	NewBuffer func() Buffer
}

// Buffer is the FIFO behind a listener's pump. A buffer that also has a
// Reset method (ring.Chunked has) is reset when the listener closes, so
// that it can give its memory back at once (the default buffer's chunks go
// back to the shared pool).
type Buffer interface {
	WriteOne(n Notification)
	ReadOne() (Notification, bool)
	Len() int
}

// Stats is a listener's backlog, read without locks.
type Stats struct {
	// Pending is the number of notifications added and not yet handed to
	// the handler.
	Pending int64
	// HighWater is the largest Pending seen.
	HighWater int64
}

// Listener relays notifications to one handler, from two sources, in the
// order they were handed out: the processor's log (ordinary notifications,
// stored once for every listener, read from this listener's position),
// and its own Adds. Add never waits for the handler; it puts the
// notification in the pump's hand or, behind it, in an unbounded buffer,
// under a mutex, with the log position it follows. One goroutine takes the
// next of either and calls the handler serially. The pump is a state
// (PumpState, its decisions pure) guarded by the mutex, not a goroutine: a
// notification costs one short critical section on each side and, only
// when the handler goroutine sleeps for want of work, one wake-up, where a
// pump goroutine would cost two channel hand-offs. It starts no goroutine
// until Start; Close (directly or via the processor) ends it.
type Listener struct {
	handler Handler
	opts    ListenerOptions

	mu     sync.Mutex
	st     PumpState
	inHand Notification // valid while st.InHand
	buf    Buffer       // nil until the first Stash and after Close
	idle   bool         // the handler goroutine waits for wake
	// wake is 1-buffered: Add (or Close) sends at most one token per sleep
	// of the handler goroutine, without waiting.
	wake chan struct{}

	runFinished chan struct{}
	closeOnce   sync.Once
	startOnce   sync.Once

	pending   atomic.Int64 // the hand and the buffer; written under mu, read without it by Stats
	highWater atomic.Int64

	// The processor's log (fanLog), from AddListener to Close. Ordinary
	// notifications wait there, not in the buffer; runs says where the
	// buffered ones (sync notifications, this listener's own Adds) go
	// among them.
	log      *fanLog                // set once, under mu
	attached atomic.Pointer[fanLog] // log until Close, for Stats
	cur      *logChunk              // the chunk that holds seq; under mu
	seq      atomic.Int64           // the next log entry to deliver; written under mu
	runs     runQueue               // under mu
	// sleeping is set while the handler goroutine waits with nothing to
	// deliver; the distributor clears it and wakes the goroutine.
	sleeping atomic.Bool
	logIdle  bool // counted out of the log's awake readers; under mu

	// Sync tracking: initial-list adds not yet returned, and whether the
	// upstream (the informer's store) has synced.
	initialOutstanding atomic.Int64
	upstreamSynced     atomic.Bool
	synced             chan struct{}
	syncedOnce         sync.Once

	resyncMu        sync.Mutex
	requestedResync time.Duration
	resyncPeriod    time.Duration
	nextResync      time.Time
}

// NewListener returns a listener for h. It is not running until Start.
func NewListener(h Handler, opts ListenerOptions) *Listener {
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.NewBuffer == nil {
		opts.NewBuffer = defaultBuffer
	}
	if opts.OnPanic == nil {
		opts.OnPanic = reportPanic
	}
	return &Listener{
		handler:     h,
		opts:        opts,
		wake:        make(chan struct{}, 1),
		runFinished: make(chan struct{}),
		synced:      make(chan struct{}),
	}
}

// Start runs the listener's goroutine under wg (the owner waits on it).
// Notifications added before Start wait for it.
func (l *Listener) Start(wg *sync.WaitGroup) {
	l.startOnce.Do(func() { wg.Go(l.run) })
}

// Add hands n to the listener. It never waits for the handler: it holds
// the listener's lock only to put n in hand or in the buffer. After Close
// it drops n.
func (l *Listener) Add(n Notification) {
	initial := n.Kind == Add && n.InInitialList
	l.mu.Lock()
	if l.st.Closed {
		l.mu.Unlock()
		return
	}
	if initial {
		l.initialOutstanding.Add(1) // before it can be delivered: never counts down first
	}
	var act PumpAction
	l.st, act = l.st.Step(EventAdded)
	switch act {
	case Hold:
		l.inHand = n
	case Stash:
		if l.buf == nil {
			l.buf = l.opts.NewBuffer()
		}
		l.buf.WriteOne(n)
	}
	var pos int64 // n follows the log entries before pos
	if l.log != nil {
		pos = l.log.tail.Load()
	}
	l.runs.push(pos)
	l.setPending(int64(l.st.Pending()))
	wake := l.idle
	l.idle = false
	l.mu.Unlock()
	if wake {
		l.signal()
	}
}

// signal wakes the handler goroutine. The token is dropped if one is
// already waiting: one is enough, the goroutine re-reads the state.
func (l *Listener) signal() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// Close stops the listener: the handler call in progress finishes,
// undelivered notifications are dropped at once, later Adds are dropped,
// and Done is closed when the handler goroutine exits. Close is
// idempotent.
func (l *Listener) Close() {
	l.closeOnce.Do(func() {
		l.close()
		l.signal()
	})
}

// close drops what is undelivered, the log's entries included, and marks
// the pump closed.
func (l *Listener) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.st, _ = l.st.Step(EventClosed)
	if r, ok := l.buf.(interface{ Reset() }); ok {
		r.Reset()
	}
	l.inHand, l.buf, l.idle = Notification{}, nil, false
	l.runs = runQueue{}
	if l.attached.Load() != nil {
		l.attached.Store(nil)
		l.log.detach(l, l.logIdle)
		l.cur = nil
	}
	l.pending.Store(0)
}

// attach makes l read the processor's log from now on. A closed listener
// stays detached.
func (l *Listener) attach(g *fanLog) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.st.Closed || l.log != nil {
		return
	}
	l.log = g
	g.attach(l)
	l.attached.Store(g)
}

// closeUnstarted finishes a listener that never started.
func (l *Listener) closeUnstarted() {
	l.closeOnce.Do(func() {
		l.close()
		close(l.runFinished)
	})
}

// Done is closed once the listener's handler goroutine has exited.
func (l *Listener) Done() <-chan struct{} { return l.runFinished }

// Stats reads the backlog without locks.
func (l *Listener) Stats() Stats {
	n, exact := l.backlog()
	if exact {
		l.noteHighWater(n)
	}
	return Stats{Pending: n, HighWater: l.highWater.Load()}
}

// backlog is the backlog, read without the lock. It is exact (what the
// backlog was at one instant, or less, so it may be noted as a high water
// mark) when the handler goroutine's log position reads the same before
// and after: then at the instant the hand and buffer's count is read, the
// position is the one used and the log's tail, which only grows, is at
// least the one read before. Else it is a count of a moment that may never
// have been.
func (l *Listener) backlog() (n int64, exact bool) {
	s1 := l.seq.Load()
	g := l.attached.Load()
	var tail int64
	if g != nil {
		tail = g.tail.Load()
	}
	n = l.pending.Load()
	s2 := l.seq.Load()
	if g != nil {
		n += max(tail-s2, 0)
	}
	return n, s1 == s2
}

// pendingNow is the backlog: the hand, the buffer and the log entries not
// yet delivered. Called with l.mu held, it is exact.
func (l *Listener) pendingNow() int64 {
	n, _ := l.backlog()
	return n
}

// noteHighWater raises the high water mark to n. The backlog peaks just
// before a delivery or now, so noting it there, at an Add to the buffer
// and at Stats finds the largest one without a write per log append.
func (l *Listener) noteHighWater(n int64) {
	for {
		hw := l.highWater.Load()
		if n <= hw || l.highWater.CompareAndSwap(hw, n) {
			return
		}
	}
}

// HasSynced reports whether the informer's store has synced and every
// initial-list Add for this handler has returned.
func (l *Listener) HasSynced() bool {
	select {
	case <-l.synced:
		return true
	default:
		return false
	}
}

// Synced is closed when HasSynced becomes true.
func (l *Listener) Synced() <-chan struct{} { return l.synced }

// UpstreamSynced tells the listener that the informer's store has synced.
// The informer calls it once all of this handler's initial adds are
// enqueued, so no goroutine has to watch for it.
func (l *Listener) UpstreamSynced() {
	l.upstreamSynced.Store(true)
	l.checkSynced()
}

func (l *Listener) checkSynced() {
	if l.upstreamSynced.Load() && l.initialOutstanding.Load() == 0 {
		l.syncedOnce.Do(func() { close(l.synced) })
	}
}

// setPending publishes the backlog of the hand and the buffer; called
// with l.mu held.
func (l *Listener) setPending(n int64) {
	l.pending.Store(n)
	l.noteHighWater(l.pendingNow())
}

// delivery is a notification taken for the handler, with the number of
// notifications waiting behind it at that moment: the backlog when its
// handler call starts. It is counted under the lock that takes the
// notification; read later, it would race with the next Add.
type delivery struct {
	n      Notification
	behind int64
}

// next takes the next notification in order: the one in hand (refilling
// the hand from the buffer) once the log entries before it are delivered,
// else the log's next entry; with neither, it sleeps until Add,
// Distribute or Close wakes it. It reports false once the listener is
// closed.
func (l *Listener) next() (delivery, bool) {
	for {
		l.mu.Lock()
		if l.st.Closed {
			l.mu.Unlock()
			return delivery{}, false
		}
		seq, tail := l.seq.Load(), int64(0)
		if l.log != nil {
			tail = l.log.tail.Load()
		}
		if l.st.InHand && l.runs.head() <= seq {
			l.noteHighWater(l.pendingNow())
			l.awaken()
			d := delivery{n: l.inHand, behind: int64(l.st.Buffered) + tail - seq}
			var act PumpAction
			l.st, act = l.st.Step(EventDelivered)
			switch act {
			case Refill:
				l.inHand, _ = l.buf.ReadOne()
			case Idle:
				l.inHand = Notification{}
			}
			l.runs.pop()
			l.setPending(int64(l.st.Pending()))
			l.mu.Unlock()
			return d, true
		}
		if seq < tail {
			l.noteHighWater(l.pendingNow())
			l.awaken()
			d := delivery{n: l.cur.slots[seq-l.cur.first], behind: int64(l.st.Pending()) + tail - seq - 1}
			left := seq+1 == l.cur.first+logChunkSize
			if left {
				// Move on before publishing the position past this chunk:
				// reclaim releases a chunk once every position is past it.
				l.cur = l.cur.next.Load()
			}
			l.seq.Store(seq + 1)
			g := l.log
			l.mu.Unlock()
			if left {
				g.reclaim()
			}
			return d, true
		}
		g, quiet := l.log, l.sleep(tail)
		l.mu.Unlock()
		if quiet {
			g.reclaim()
		}
		<-l.wake
	}
}

// sleep registers the handler goroutine as waiting for Add and, if
// attached, for the log, whose tail it read; called with l.mu held. It
// reports whether l was the last of the log's readers to fall idle: then
// the caller reclaims what they all delivered. If the log grew since tail,
// a token is left for the goroutine, which goes round again.
func (l *Listener) sleep(tail int64) (quiet bool) {
	l.idle = true
	if l.log == nil {
		return false
	}
	l.sleeping.Store(true)
	if l.log.tail.Load() != tail {
		if l.sleeping.CompareAndSwap(true, false) {
			l.signal()
		} // else Distribute took it, and signals
		return false
	}
	if !l.logIdle {
		l.logIdle = true
		return l.log.awake.Add(-1) == 0
	}
	return false
}

// awaken counts l among the log's awake readers again; called with l.mu
// held when it delivers.
func (l *Listener) awaken() {
	if l.logIdle {
		l.logIdle = false
		l.log.awake.Add(1)
	}
}

// wakeForLog wakes the handler goroutine if it sleeps waiting for the log;
// Distribute calls it after an append.
func (l *Listener) wakeForLog() {
	if l.sleeping.Load() && l.sleeping.CompareAndSwap(true, false) {
		l.signal()
	}
}

// posRun is count buffered notifications that follow the log's entries
// before pos.
type posRun struct {
	pos   int64
	count int
}

// runQueue is a FIFO of runs, one per distinct position: notifications
// added in a row (a sync round, an initial list) share one.
type runQueue struct {
	runs []posRun
	h    int
}

func (q *runQueue) push(pos int64) {
	if n := len(q.runs); n > q.h && q.runs[n-1].pos == pos {
		q.runs[n-1].count++
		return
	}
	if q.h > 0 && len(q.runs) == cap(q.runs) {
		q.runs = q.runs[:copy(q.runs, q.runs[q.h:])]
		q.h = 0
	}
	q.runs = append(q.runs, posRun{pos, 1})
}

// head is the oldest run's position; call it only when one is held.
func (q *runQueue) head() int64 { return q.runs[q.h].pos }

func (q *runQueue) pop() {
	if q.runs[q.h].count--; q.runs[q.h].count == 0 {
		q.h++
		if q.h == len(q.runs) {
			q.runs, q.h = q.runs[:0], 0
		}
	}
}

// run calls the handler serially until the listener is closed.
func (l *Listener) run() {
	defer close(l.runFinished)
	for {
		d, ok := l.next()
		if !ok {
			return
		}
		l.call(d)
	}
}

// call runs the handler for one notification. A panic is contained here,
// per call, so the loop in run goes on with the next notification.
func (l *Listener) call(d delivery) {
	defer l.contain()
	if d.behind > SlowHandlerThreshold && l.opts.SlowHandler != nil {
		start := l.opts.Clock.Now()
		defer func() {
			if took := l.opts.Clock.Since(start); took > SlowCallThreshold {
				l.opts.SlowHandler(l.opts.Name, d.behind, took)
			}
		}()
	}
	n := d.n
	switch n.Kind {
	case Add:
		if n.InInitialList {
			// Deferred, so that an initial add that panics still counts
			// as returned: one bad object must not keep the handler from
			// ever syncing (client-go's does, kubernetes#129024).
			defer l.initialReturned()
		}
		l.handler.OnAdd(n.New, n.InInitialList)
	case Update:
		l.handler.OnUpdate(n.Old, n.New)
	case Delete:
		l.handler.OnDelete(n.Old)
	}
}

// initialReturned counts one initial-list add as returned.
func (l *Listener) initialReturned() {
	l.initialOutstanding.Add(-1)
	l.checkSynced()
}

// contain recovers a handler panic and reports it; deferred by call.
func (l *Listener) contain() {
	if r := recover(); r != nil {
		l.opts.OnPanic(l.opts.Name, r)
	}
}

// reportPanic is the default OnPanic.
func reportPanic(name string, recovered any) {
	utilruntime.HandleErrorWithContext(context.Background(), nil, "Observed a panic in an informer event handler; the notification was skipped",
		"handler", name, "panic", recovered, "stack", string(debug.Stack()))
}
