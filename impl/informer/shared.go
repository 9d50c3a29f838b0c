package informer

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/kverify/kverify/impl/delta"
	"github.com/kverify/kverify/impl/realfifo"
	"github.com/kverify/kverify/impl/reflector"
	"github.com/kverify/kverify/impl/store"
	"k8s.io/utils/clock"
)

// InformerOptions configure an Informer. The zero value is valid.
type InformerOptions struct {
	// Reflector configures the reflector (its Clock is the informer's).
	// Its ResyncPeriod and ShouldResync are the informer's to set (from
	// ResyncPeriod and the handlers' periods) and must be left zero.
	Reflector reflector.Options
	// ResyncPeriod is client-go's defaultEventHandlerResyncPeriod: the
	// period of a handler added with AddEventHandler, and the informer's
	// resync check period until a handler added before Run asks for less
	// (0: the informer never resyncs, whatever its handlers ask for).
	ResyncPeriod time.Duration
	// Clock is the time source of the reflector and the listeners (nil:
	// the real clock).
	Clock clock.WithTicker
}

// Informer is a shared informer assembled from this module's parts, in
// client-go's order (shared_informer.go:560-620, controller.go:150-220):
// a reflector keeps a RealFIFO (atomic replaces, bookmarks, unlocked while
// processing) in step with the server; one goroutine pops it and applies
// each delta with delta.Process to the store and to the processor, which
// fans the notifications out to every handler's listener.
//
// A handler added before Run gets the initial list as it is processed; one
// added later gets the store's content as initial-list adds, under the
// same lock as processing, so it misses and repeats nothing. A handler's
// registration has synced once the informer has and every initial-list add
// it was given has returned.
//
// Resync is client-go's (shared_informer.go:999-1030, 861-862): each
// handler has its own period under JoinResync's rules; while a watch runs
// the reflector asks the processor every check period which handlers are
// due (Processor.ShouldResync) and, if any is, queues a SyncAll delta,
// which delta.Process turns into OnUpdate(o, o) for every stored object,
// distributed as sync notifications to the handlers due only.
type Informer struct {
	clock clock.WithTicker
	store *store.Store
	fifo  *realfifo.FIFO
	lw    reflector.ListerWatcher
	ropts reflector.Options
	proc  *Processor

	// mu plays client-go's blockDeltas: processing a delta and a late
	// handler's join never interleave.
	mu       sync.Mutex
	synced   bool
	waiting  []*Listener // registered, not yet told the informer synced
	handlers int
	started  bool
	stopped  bool
	// refl is made by Run, with the check period as it stands then (the
	// handlers added before Run may lower it); before, one made with the
	// options, so that NewInformer rejects bad ones.
	refl *reflector.Reflector
	// defaultResync is AddEventHandler's period, check the resync check
	// period.
	defaultResync, check time.Duration
}

// NewInformer returns an informer over lw, not yet running.
func NewInformer(lw reflector.ListerWatcher, opts InformerOptions) (*Informer, error) {
	c := opts.Clock
	if c == nil {
		c = clock.RealClock{}
	}
	st := store.New(delta.DeletionHandlingKey)
	fifo, err := realfifo.New(realfifo.Options{Atomic: true, UnlockWhileProcessing: true, Bookmarks: true})
	if err != nil {
		return nil, err
	}
	if opts.ResyncPeriod < 0 {
		return nil, fmt.Errorf("informer: negative resync period %v", opts.ResyncPeriod)
	}
	if opts.Reflector.ResyncPeriod != 0 || opts.Reflector.ShouldResync != nil {
		return nil, fmt.Errorf("informer: the reflector's resync is the informer's: set InformerOptions.ResyncPeriod")
	}
	ro := opts.Reflector
	ro.Clock = c
	refl, err := reflector.New(lw, fifo, ro)
	if err != nil {
		return nil, err
	}
	return &Informer{clock: c, store: st, fifo: fifo, lw: lw, ropts: ro, refl: refl, proc: NewProcessor(c),
		defaultResync: opts.ResyncPeriod, check: opts.ResyncPeriod}, nil
}

// Registration is a handler's handle.
type Registration struct{ l *Listener }

// HasSynced reports whether the informer has synced and every initial-list
// add given to this handler has returned.
func (r *Registration) HasSynced() bool { return r.l.HasSynced() }

// Done is closed once the handler will not be called again.
func (r *Registration) Done() <-chan struct{} { return r.l.Done() }

// AddEventHandler registers h with the informer's default resync period
// (InformerOptions.ResyncPeriod); after Run returned it returns
// ErrStopped.
func (i *Informer) AddEventHandler(h delta.Handler) (*Registration, error) {
	return i.AddEventHandlerWithResyncPeriod(h, i.defaultResync)
}

// AddEventHandlerWithResyncPeriod registers h, resynced every period by
// JoinResync's rules (0: never; a period under the check period lowers it
// before Run and is raised to it after); after Run returned it returns
// ErrStopped. A negative period is an error.
func (i *Informer) AddEventHandlerWithResyncPeriod(h delta.Handler, period time.Duration) (*Registration, error) {
	if h == nil || delta.IsNil(h) {
		return nil, fmt.Errorf("informer: nil handler")
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.stopped {
		return nil, ErrStopped
	}
	req, eff, check, err := JoinResync(period, i.check, i.started)
	if err != nil {
		return nil, err
	}
	if check != i.check {
		i.check = check
		i.proc.ResyncCheckPeriodChanged(check)
	}
	i.handlers++
	l := NewListener(h, ListenerOptions{Name: fmt.Sprintf("handler-%d", i.handlers), Clock: i.clock})
	l.SetResync(req, eff, i.clock.Now())
	if _, err := i.proc.AddListener(l); err != nil {
		return nil, err
	}
	if i.started {
		for _, obj := range i.store.List() {
			l.Add(Notification{Kind: Add, New: obj, InInitialList: true})
		}
	}
	if i.synced {
		l.UpstreamSynced()
	} else {
		i.waiting = append(i.waiting, l)
	}
	return &Registration{l}, nil
}

// HasSynced reports whether the informer's first sync has been processed.
func (i *Informer) HasSynced() bool { return i.fifo.HasSynced() }

// LastSyncResourceVersion is the reflector's published resource version.
func (i *Informer) LastSyncResourceVersion() string {
	i.mu.Lock()
	r := i.refl
	i.mu.Unlock()
	return r.LastSyncResourceVersion()
}

// List returns the store's objects.
func (i *Informer) List() []any { return i.store.List() }

// GetByKey returns the store's object at key.
func (i *Informer) GetByKey(key string) (any, bool, error) { return i.store.GetByKey(key) }

// Run runs the informer until ctx ends and returns once every goroutine it
// started has exited. An informer runs once: a second Run returns at once.
func (i *Informer) Run(ctx context.Context) {
	i.mu.Lock()
	if i.started || i.stopped {
		i.mu.Unlock()
		return
	}
	i.started = true
	// The check period is final now: handlers added from here on are
	// raised to it (JoinResync).
	ro := i.ropts
	ro.ResyncPeriod, ro.ShouldResync = i.check, i.proc.ShouldResync
	refl, err := reflector.New(i.lw, i.fifo, ro)
	if err != nil {
		// NewInformer took these options but for a period >= 0.
		panic(fmt.Sprintf("informer: the reflector's options, accepted by NewInformer, are refused at Run: %v", err))
	}
	i.refl = refl
	i.mu.Unlock()

	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	wg.Go(func() { i.proc.Run(rctx) })
	wg.Go(func() { refl.Run(rctx) })
	popped := make(chan struct{})
	go func() {
		defer close(popped)
		i.pop()
	}()
	<-ctx.Done()
	i.mu.Lock()
	i.stopped = true
	i.mu.Unlock()
	cancel()
	wg.Wait() // the reflector no longer writes to the FIFO
	i.fifo.Close()
	<-popped
}

// pop applies the FIFO's deltas until it is closed.
func (i *Informer) pop() {
	h := DeltaHandler(i.proc)
	for {
		_, err := i.fifo.Pop(func(obj any, initial bool) error {
			i.mu.Lock()
			defer i.mu.Unlock()
			ds, _ := obj.(delta.Deltas)
			return delta.Process(h, i.store, ds, initial, delta.DeletionHandlingKey)
		})
		if errors.Is(err, delta.ErrClosed) {
			return
		}
		i.mu.Lock()
		if !i.synced && i.fifo.HasSynced() {
			i.synced = true
			for _, l := range i.waiting {
				l.UpstreamSynced()
			}
			i.waiting = nil
		}
		i.mu.Unlock()
	}
}
