package informer

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// MinimumResyncPeriod is the smallest resync period a handler can ask
// for; smaller non-zero requests are raised to it (shared_informer.go:993).
const MinimumResyncPeriod = time.Second

// NormalizeResyncPeriod applies the minimum: 0 stays 0 (never resync),
// 0 < p < 1s becomes 1s.
func NormalizeResyncPeriod(p time.Duration) time.Duration {
	if p > 0 && p < MinimumResyncPeriod {
		return MinimumResyncPeriod
	}
	if p < 0 {
		return 0
	}
	return p
}

// DetermineResyncPeriod is a listener's effective period given what it
// requested and the informer's check period: 0 if either is 0 (the
// informer does not resync), at least the check period otherwise
// (shared_informer.go:978-991).
func DetermineResyncPeriod(desired, check time.Duration) time.Duration {
	if desired == 0 || check == 0 {
		return 0
	}
	if desired < check {
		return check
	}
	return desired
}

// JoinResync applies client-go's rules to a handler that joins an informer
// asking for a resync every requested (shared_informer.go:1005-1030), given
// the informer's check period and whether it has started. It returns the
// listener's requested and effective periods (for SetResync) and the
// informer's check period from then on:
//
//   - 0 < requested < 1s is raised to MinimumResyncPeriod;
//   - a period below the check period lowers the check period to it if the
//     informer has not started (the caller then re-derives every listener's
//     period with Processor.ResyncCheckPeriodChanged), and is raised to the
//     check period if it has (the resync timer already runs);
//   - with a check period of 0 the informer never resyncs, whatever the
//     handlers ask for: the effective period is 0.
//
// A negative period is an error (client-go would treat it as "as often as
// the check period", by accident of its comparisons).
func JoinResync(requested, check time.Duration, started bool) (req, eff, newCheck time.Duration, err error) {
	if requested < 0 {
		return 0, 0, check, fmt.Errorf("informer: negative resync period %v", requested)
	}
	if check < 0 {
		return 0, 0, check, fmt.Errorf("informer: negative resync check period %v", check)
	}
	req, newCheck = NormalizeResyncPeriod(requested), check
	if req > 0 && req < check {
		if started {
			req = check
		} else {
			newCheck = req
		}
	}
	return req, DetermineResyncPeriod(req, newCheck), newCheck, nil
}

// RunResync is an informer's resync loop (client-go: the reflector's resync
// timer, reflector.go:443-536, consulting sharedProcessor.shouldResync).
// Every period on the processor's clock it takes lock (the informer's
// event lock: a round is then atomic with respect to events and to
// handlers joining), asks which listeners are due (ShouldResync) and, if
// any is, calls resync, which must distribute a sync notification
// (Distribute(n, true)) for every object in the store; then it releases
// lock and arms the timer for the next round. A period <= 0 disables
// resync; a nil lock means the caller needs none, a nil resync that rounds
// only reschedule. RunResync returns when ctx is done; its caller owns the
// goroutine that runs it.
func (p *Processor) RunResync(ctx context.Context, period time.Duration, lock sync.Locker, resync func()) {
	if lock == nil {
		lock = &sync.Mutex{}
	}
	if resync == nil {
		resync = func() {}
	}
	if period <= 0 {
		<-ctx.Done()
		return
	}
	for {
		t := p.clock.NewTimer(period)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C():
		}
		p.resyncRound(lock, resync)
	}
}

func (p *Processor) resyncRound(lock sync.Locker, resync func()) {
	lock.Lock()
	defer lock.Unlock()
	if p.ShouldResync() {
		resync()
	}
}

// SetResync sets the listener's requested and effective resync periods and
// schedules its first resync from now.
func (l *Listener) SetResync(requested, effective time.Duration, now time.Time) {
	l.resyncMu.Lock()
	defer l.resyncMu.Unlock()
	l.requestedResync, l.resyncPeriod = requested, effective
	l.nextResync = now.Add(effective)
}

// SetResyncPeriod changes the effective period (not the schedule).
func (l *Listener) SetResyncPeriod(p time.Duration) {
	l.resyncMu.Lock()
	defer l.resyncMu.Unlock()
	l.resyncPeriod = p
}

// RequestedResyncPeriod is the period the handler asked for.
func (l *Listener) RequestedResyncPeriod() time.Duration {
	l.resyncMu.Lock()
	defer l.resyncMu.Unlock()
	return l.requestedResync
}

// ResyncPeriod is the effective period.
func (l *Listener) ResyncPeriod() time.Duration {
	l.resyncMu.Lock()
	defer l.resyncMu.Unlock()
	return l.resyncPeriod
}

// shouldResync: due at or after nextResync (inclusive, as client-go), never
// with a zero period.
func (l *Listener) shouldResync(now time.Time) bool {
	l.resyncMu.Lock()
	defer l.resyncMu.Unlock()
	return l.resyncPeriod != 0 && !now.Before(l.nextResync)
}

func (l *Listener) determineNextResync(now time.Time) {
	l.resyncMu.Lock()
	defer l.resyncMu.Unlock()
	l.nextResync = now.Add(l.resyncPeriod)
}
