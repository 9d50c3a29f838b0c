package reflector

import (
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// Clock is the real clock (the bubble's fake one under synctest) that
// counts the timers and tickers made through it, so that a check can ask
// which are still armed: made with NewTimer or NewTicker, not stopped, and
// due after now. Timers from After cannot be stopped and are not counted.
type Clock struct {
	clock.RealClock
	mu      sync.Mutex
	timers  []*countedTimer
	tickers []*countedTicker
}

type countedTimer struct {
	clock.Timer
	c        *Clock
	deadline time.Time
	stopped  bool
}

func (t *countedTimer) Stop() bool {
	t.c.mu.Lock()
	t.stopped = true
	t.c.mu.Unlock()
	return t.Timer.Stop()
}

func (t *countedTimer) Reset(d time.Duration) bool {
	t.c.mu.Lock()
	t.stopped, t.deadline = false, time.Now().Add(d)
	t.c.mu.Unlock()
	return t.Timer.Reset(d)
}

type countedTicker struct {
	clock.Ticker
	c       *Clock
	stopped bool
}

func (t *countedTicker) Stop() {
	t.c.mu.Lock()
	t.stopped = true
	t.c.mu.Unlock()
	t.Ticker.Stop()
}

// NewTimer makes a counted timer.
func (c *Clock) NewTimer(d time.Duration) clock.Timer {
	t := &countedTimer{Timer: c.RealClock.NewTimer(d), c: c, deadline: time.Now().Add(d)}
	c.mu.Lock()
	c.timers = append(c.timers, t)
	c.mu.Unlock()
	return t
}

// NewTicker makes a counted ticker.
func (c *Clock) NewTicker(d time.Duration) clock.Ticker {
	t := &countedTicker{Ticker: c.RealClock.NewTicker(d), c: c}
	c.mu.Lock()
	c.tickers = append(c.tickers, t)
	c.mu.Unlock()
	return t
}

// armed is the number of timers and tickers made through c that are not
// stopped and (timers) not yet due.
func (c *Clock) armed() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	now, n := time.Now(), 0
	for _, t := range c.timers {
		if !t.stopped && t.deadline.After(now) {
			n++
		}
	}
	for _, t := range c.tickers {
		if !t.stopped {
			n++
		}
	}
	return n
}
