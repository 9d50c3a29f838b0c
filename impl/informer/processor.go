package informer

import (
	"context"
	"errors"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// ErrStopped is returned when a listener is added to a processor that has
// stopped.
var ErrStopped = errors.New("informer: processor stopped")

// Processor fans notifications out to listeners. Distribute holds a read
// lock, so listeners can be added and removed while it runs. It never
// waits: a listener's Add does not, and before Run the notifications wait
// in each listener until Run starts it.
type Processor struct {
	mu sync.RWMutex
	// listeners maps each listener to whether it takes sync (resync)
	// notifications in the current resync round.
	listeners map[*Listener]bool
	started   bool
	stopped   bool
	clock     clock.Clock
	wg        sync.WaitGroup
}

// NewProcessor returns a processor using c for resync decisions (real
// clock if nil).
func NewProcessor(c clock.Clock) *Processor {
	if c == nil {
		c = clock.RealClock{}
	}
	return &Processor{listeners: map[*Listener]bool{}, clock: c}
}

// AddListener registers l. If the processor runs, l starts at once; the
// caller then adds l's initial list and calls l.UpstreamSynced. It reports
// whether the processor was running. l starts in the resync round (it takes
// sync notifications until the next ShouldResync), as in client-go
// (shared_informer.go:1198): see the package doc.
func (p *Processor) AddListener(l *Listener) (started bool, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return false, ErrStopped
	}
	p.listeners[l] = true
	if p.started {
		l.Start(&p.wg)
	}
	return p.started, nil
}

// RemoveListener unregisters l and stops it; its Done channel closes once
// its handler goroutine exits (at once if it never started). Removing a
// listener twice, or one never added, is a no-op.
func (p *Processor) RemoveListener(l *Listener) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.listeners[l]; !ok {
		return
	}
	delete(p.listeners, l)
	if p.started {
		l.Close()
	} else {
		l.closeUnstarted()
	}
}

// Listeners returns how many listeners are registered.
func (p *Processor) Listeners() int {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return len(p.listeners)
}

// Distribute hands n to every listener, or with sync only to the listeners
// due for a resync, without waiting for any (before Run, n waits in each
// listener until Run starts it). After the processor stopped it does
// nothing.
func (p *Processor) Distribute(n Notification, sync bool) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.stopped {
		return
	}
	for l, syncing := range p.listeners {
		if !sync || syncing {
			l.Add(n)
		}
	}
}

// Run starts every listener and blocks until ctx is done; then it closes
// every listener and returns after all their goroutines exit. A processor
// runs once: Run while another Run runs, or after one returned, returns at
// once and its context is ignored.
func (p *Processor) Run(ctx context.Context) {
	p.mu.Lock()
	if p.started || p.stopped {
		p.mu.Unlock()
		return
	}
	for l := range p.listeners {
		l.Start(&p.wg)
	}
	p.started = true
	p.mu.Unlock()

	<-ctx.Done()

	p.mu.Lock()
	for l := range p.listeners {
		l.Close()
	}
	p.listeners = map[*Listener]bool{}
	p.started, p.stopped = false, true
	p.mu.Unlock()
	p.wg.Wait()
}

// ShouldResync marks which listeners are due for a resync now, schedules
// their next one, and reports whether any is due.
func (p *Processor) ShouldResync() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.clock.Now()
	any := false
	for l := range p.listeners {
		due := l.shouldResync(now)
		p.listeners[l] = due
		if due {
			any = true
			l.determineNextResync(now)
		}
	}
	return any
}

// ResyncCheckPeriodChanged re-derives every listener's resync period from
// its requested period and the informer's new check period.
func (p *Processor) ResyncCheckPeriodChanged(check time.Duration) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	for l := range p.listeners {
		l.SetResyncPeriod(DetermineResyncPeriod(l.RequestedResyncPeriod(), check))
	}
}
