package checkkit

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"k8s.io/utils/clock"
	testingclock "k8s.io/utils/clock/testing"
)

// Timers is an injectable fake clock that counts the timers its user holds:
// a k8s.io/utils FakeClock whose NewTimer, AfterFunc, After, NewTicker and
// Tick are recorded, so a check can ask how many are live without reading
// the subject's internals. A timer is live from its creation or Reset
// until it fires (the clock is stepped to its time) or is stopped; a
// ticker until it is stopped; a Tick channel forever, since it cannot be
// stopped.
type Timers struct {
	*testingclock.FakeClock

	mu  sync.Mutex
	all []*countedTimer
}

var (
	_ clock.WithTicker           = (*Timers)(nil)
	_ clock.WithDelayedExecution = (*Timers)(nil)
)

// NewTimers returns a Timers clock set to t.
func NewTimers(t time.Time) *Timers {
	return &Timers{FakeClock: testingclock.NewFakeClock(t)}
}

// countedTimer is one recorded timer or ticker.
type countedTimer struct {
	owner   *Timers
	kind    string
	created string    // the clock's time at creation, for reports
	due     time.Time // fire time; zero for tickers and Tick
	period  time.Duration
	stopped bool
	timer   clock.Timer
	ticker  clock.Ticker
}

func (c *Timers) record(ct *countedTimer) *countedTimer {
	ct.owner = c
	ct.created = c.Now().Format(time.TimeOnly + ".000000000")
	c.mu.Lock()
	c.all = append(c.all, ct)
	c.mu.Unlock()
	return ct
}

// NewTimer records and returns a fake timer.
func (c *Timers) NewTimer(d time.Duration) clock.Timer {
	return c.record(&countedTimer{kind: "timer", due: c.Now().Add(d), timer: c.FakeClock.NewTimer(d)})
}

// AfterFunc records and returns a fake timer that runs f when it fires.
func (c *Timers) AfterFunc(d time.Duration, f func()) clock.Timer {
	return c.record(&countedTimer{kind: "AfterFunc", due: c.Now().Add(d), timer: c.FakeClock.AfterFunc(d, f)})
}

// After records a timer that cannot be stopped and returns its channel.
func (c *Timers) After(d time.Duration) <-chan time.Time {
	return c.NewTimer(d).C()
}

// NewTicker records and returns a fake ticker.
func (c *Timers) NewTicker(d time.Duration) clock.Ticker {
	return countedTicker{c.record(&countedTimer{kind: "ticker", period: d, ticker: c.FakeClock.NewTicker(d)})}
}

// Tick records a ticker that can never be stopped and returns its channel.
func (c *Timers) Tick(d time.Duration) <-chan time.Time {
	return c.record(&countedTimer{kind: "Tick", period: d, ticker: c.FakeClock.NewTicker(d)}).ticker.C()
}

// Live returns how many recorded timers and tickers are live now.
func (c *Timers) Live() int {
	n, _ := c.live()
	return n
}

// Describe lists the live timers, for a violation's message.
func (c *Timers) Describe() string {
	_, s := c.live()
	return s
}

func (c *Timers) live() (int, string) {
	now := c.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	var b strings.Builder
	n := 0
	for _, t := range c.all {
		if t.stopped || t.ticker == nil && !t.due.After(now) {
			continue
		}
		n++
		if t.ticker != nil {
			fmt.Fprintf(&b, "; %s every %v made at %s", t.kind, t.period, t.created)
		} else {
			fmt.Fprintf(&b, "; %s due in %v made at %s", t.kind, t.due.Sub(now), t.created)
		}
	}
	return n, strings.TrimPrefix(b.String(), "; ")
}

// C returns the timer's or ticker's channel.
func (t *countedTimer) C() <-chan time.Time {
	if t.ticker != nil {
		return t.ticker.C()
	}
	return t.timer.C()
}

// Stop stops the timer; a stopped timer is no longer live.
func (t *countedTimer) Stop() bool {
	t.markStopped()
	return t.timer.Stop()
}

func (t *countedTimer) markStopped() {
	t.owner.mu.Lock()
	t.stopped = true
	t.owner.mu.Unlock()
}

// countedTicker is a recorded ticker: clock.Ticker's Stop returns nothing.
type countedTicker struct{ *countedTimer }

// Stop stops the ticker; a stopped ticker is no longer live.
func (t countedTicker) Stop() {
	t.markStopped()
	t.ticker.Stop()
}

// Reset re-arms the timer d from now; it is live again until it fires.
func (t *countedTimer) Reset(d time.Duration) bool {
	t.owner.mu.Lock()
	t.stopped = false
	t.due = t.owner.Now().Add(d)
	t.owner.mu.Unlock()
	return t.timer.Reset(d)
}
