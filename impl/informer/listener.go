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

// Listener relays notifications to one handler: Add never waits for the
// handler; it puts the notification in the pump's hand or, behind it, in an
// unbounded buffer, under a mutex; one goroutine takes them out of the hand
// and calls the handler serially. The pump is a state (PumpState, its
// decisions pure) guarded by the mutex, not a goroutine: a notification
// costs one short critical section on each side and, only when the handler
// goroutine sleeps for want of work, one wake-up, where a pump goroutine
// would cost two channel hand-offs. It starts no goroutine until Start;
// Close (directly or via the processor) ends it.
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

	pending   atomic.Int64 // written under mu, read without it by Stats
	highWater atomic.Int64

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

// close drops what is undelivered and marks the pump closed.
func (l *Listener) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.st, _ = l.st.Step(EventClosed)
	if r, ok := l.buf.(interface{ Reset() }); ok {
		r.Reset()
	}
	l.inHand, l.buf, l.idle = Notification{}, nil, false
	l.pending.Store(0)
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
	return Stats{Pending: l.pending.Load(), HighWater: l.highWater.Load()}
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

// setPending publishes the backlog; called with l.mu held.
func (l *Listener) setPending(n int64) {
	l.pending.Store(n)
	if n > l.highWater.Load() {
		l.highWater.Store(n) // written under l.mu only: no lost update
	}
}

// delivery is a notification taken for the handler, with the number of
// notifications waiting behind it at that moment: the backlog when its
// handler call starts. It is counted under the lock that takes the
// notification; read later, it would race with the next Add.
type delivery struct {
	n      Notification
	behind int64
}

// next takes the notification in hand, refilling the hand from the buffer,
// or sleeps until Add or Close wakes it. It reports false once the
// listener is closed.
func (l *Listener) next() (delivery, bool) {
	for {
		l.mu.Lock()
		if l.st.Closed {
			l.mu.Unlock()
			return delivery{}, false
		}
		if !l.st.InHand {
			l.idle = true
			l.mu.Unlock()
			<-l.wake
			continue
		}
		d := delivery{n: l.inHand, behind: int64(l.st.Buffered)}
		var act PumpAction
		l.st, act = l.st.Step(EventDelivered)
		switch act {
		case Refill:
			l.inHand, _ = l.buf.ReadOne()
		case Idle:
			l.inHand = Notification{}
		}
		l.setPending(int64(l.st.Pending()))
		l.mu.Unlock()
		return d, true
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
