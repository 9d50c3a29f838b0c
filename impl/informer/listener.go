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
type Notification struct {
	Kind Kind
	// Old is the previous object (Update) or the deleted one (Delete).
	Old any
	// New is the added or updated object.
	New any
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

// Buffer is the FIFO behind a listener's pump.
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
// handler; a pump goroutine holds one notification in hand and buffers the
// rest; a run goroutine calls the handler serially. It starts no goroutine
// until Start, and Stop (or closing via the processor) ends both.
type Listener struct {
	handler Handler
	opts    ListenerOptions

	addCh       chan Notification
	nextCh      chan delivery
	runFinished chan struct{}
	closeOnce   sync.Once
	startOnce   sync.Once

	pending   atomic.Int64 // maintained by the pump only
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
		addCh:       make(chan Notification),
		nextCh:      make(chan delivery),
		runFinished: make(chan struct{}),
		synced:      make(chan struct{}),
	}
}

// Start runs the listener's two goroutines under wg (the owner waits on it).
func (l *Listener) Start(wg *sync.WaitGroup) {
	l.startOnce.Do(func() {
		wg.Go(l.pump)
		wg.Go(l.run)
	})
}

// Add hands n to the listener. It waits only for the pump, never for the
// handler. It must not be called after Close.
func (l *Listener) Add(n Notification) {
	if n.Kind == Add && n.InInitialList {
		l.initialOutstanding.Add(1) // before the send: never counts down first
	}
	l.addCh <- n
}

// Close stops the pump; the handler call in progress finishes, undelivered
// notifications are dropped, and Done is closed when the run goroutine
// exits. Close is idempotent.
func (l *Listener) Close() {
	l.closeOnce.Do(func() { close(l.addCh) })
}

// closeUnstarted finishes a listener that never started.
func (l *Listener) closeUnstarted() {
	l.closeOnce.Do(func() {
		close(l.addCh)
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

func (l *Listener) setPending(n int64) {
	l.pending.Store(n)
	if n > l.highWater.Load() {
		l.highWater.Store(n) // only the pump writes: no lost update
	}
}

// pump is the thin goroutine around PumpState.Step.
func (l *Listener) pump() {
	defer close(l.nextCh)
	buf := l.opts.NewBuffer()
	var (
		st     PumpState
		inHand Notification
		nextCh chan<- delivery // nil while nothing is in hand
	)
	for {
		var ev PumpEvent
		var added Notification
		select {
		// The backlog travels with the notification: read from the pump's
		// counters by the handler goroutine, it would race with the refill
		// that follows the hand-over and be off by one at random.
		case nextCh <- delivery{n: inHand, behind: int64(st.Buffered)}:
			ev = EventDelivered
		case n, ok := <-l.addCh:
			if !ok {
				ev = EventClosed
			} else {
				ev, added = EventAdded, n
			}
		}
		var act PumpAction
		st, act = st.Step(ev)
		switch act {
		case Hold:
			inHand, nextCh = added, l.nextCh
		case Stash:
			buf.WriteOne(added)
		case Refill:
			inHand, _ = buf.ReadOne()
		case Idle:
			inHand, nextCh = Notification{}, nil
		case Stop, Invalid:
			l.pending.Store(0)
			return
		}
		l.setPending(int64(st.Pending()))
	}
}

// delivery is a notification handed to the handler goroutine, with the
// number of notifications waiting behind it at that moment: the backlog
// when its handler call starts.
type delivery struct {
	n      Notification
	behind int64
}

// run calls the handler serially.
func (l *Listener) run() {
	defer close(l.runFinished)
	for d := range l.nextCh {
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
