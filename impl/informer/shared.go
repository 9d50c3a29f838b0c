package informer

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/kverify/kverify/impl/delta"
	"github.com/kverify/kverify/impl/realfifo"
	"github.com/kverify/kverify/impl/reflector"
	"github.com/kverify/kverify/impl/store"
	"k8s.io/utils/clock"
)

// InformerOptions configure an Informer. The zero value is valid.
type InformerOptions struct {
	// Reflector configures the reflector (its Clock is the informer's).
	Reflector reflector.Options
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
// it was given has returned. Handlers have no resync period here.
type Informer struct {
	clock clock.WithTicker
	store *store.Store
	fifo  *realfifo.FIFO
	refl  *reflector.Reflector
	proc  *Processor

	// mu plays client-go's blockDeltas: processing a delta and a late
	// handler's join never interleave.
	mu       sync.Mutex
	synced   bool
	waiting  []*Listener // registered, not yet told the informer synced
	handlers int
	started  bool
	stopped  bool
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
	ro := opts.Reflector
	ro.Clock = c
	refl, err := reflector.New(lw, fifo, ro)
	if err != nil {
		return nil, err
	}
	return &Informer{clock: c, store: st, fifo: fifo, refl: refl, proc: NewProcessor(c)}, nil
}

// Registration is a handler's handle.
type Registration struct{ l *Listener }

// HasSynced reports whether the informer has synced and every initial-list
// add given to this handler has returned.
func (r *Registration) HasSynced() bool { return r.l.HasSynced() }

// Done is closed once the handler will not be called again.
func (r *Registration) Done() <-chan struct{} { return r.l.Done() }

// AddEventHandler registers h; after Run returned it returns ErrStopped.
func (i *Informer) AddEventHandler(h delta.Handler) (*Registration, error) {
	if h == nil || delta.IsNil(h) {
		return nil, fmt.Errorf("informer: nil handler")
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.stopped {
		return nil, ErrStopped
	}
	i.handlers++
	l := NewListener(h, ListenerOptions{Name: fmt.Sprintf("handler-%d", i.handlers), Clock: i.clock})
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
func (i *Informer) LastSyncResourceVersion() string { return i.refl.LastSyncResourceVersion() }

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
	i.mu.Unlock()

	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	wg.Go(func() { i.proc.Run(rctx) })
	wg.Go(func() { i.refl.Run(rctx) })
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
