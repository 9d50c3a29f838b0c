package informer

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// ErrStopped is returned when a listener is added to a processor that has
// stopped.
var ErrStopped = errors.New("informer: processor stopped")

// Processor fans notifications out to listeners. Distribute holds a read
// lock, so listeners can be added and removed while it runs. It never
// waits for a handler: an ordinary notification is appended once to the
// processor's log, which every listener reads from its own position (so a
// backlog costs one entry per notification, not one per listener), and a
// sync notification goes to each listener due for a resync by its Add,
// which does not wait either. Before Run the notifications wait until Run
// starts the listeners.
type Processor struct {
	mu sync.RWMutex
	// listeners maps each listener to whether it takes sync (resync)
	// notifications in the current resync round.
	listeners map[*Listener]bool
	// all are the listeners, for Distribute to wake without walking the map.
	all     []*Listener
	log     *fanLog
	started bool
	stopped bool
	clock   clock.Clock
	wg      sync.WaitGroup
}

// NewProcessor returns a processor using c for resync decisions (real
// clock if nil).
func NewProcessor(c clock.Clock) *Processor {
	if c == nil {
		c = clock.RealClock{}
	}
	return &Processor{listeners: map[*Listener]bool{}, clock: c, log: newFanLog()}
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
	if _, ok := p.listeners[l]; !ok {
		p.all = append(p.all, l)
		l.attach(p.log)
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
	i := slices.Index(p.all, l)
	p.all = slices.Delete(p.all, i, i+1)
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
	if sync || n.Kind == Add && n.InInitialList {
		// Each listener counts its initial adds outstanding (it has
		// synced when they have returned), so they go by its Add.
		for l, syncing := range p.listeners {
			if !sync || syncing {
				l.Add(n)
			}
		}
		return
	}
	if p.log.append(n) {
		for _, l := range p.all {
			l.wakeForLog()
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
	p.listeners, p.all = map[*Listener]bool{}, nil
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
