package informer

import "time"

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
