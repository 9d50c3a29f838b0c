// Package backoff is the reflector's retry delay: an exponential backoff
// shaped like apimachinery's wait.Backoff, and a Delay that starts the
// sequence over once its caller has been quiet for a reset interval.
//
// The reset rule differs from client-go's on purpose. client-go's
// DelayWithReset (apimachinery/pkg/util/wait/backoff.go:292-304) restarts
// the sequence whenever more than the reset interval has passed since the
// last restart, whether or not the calls in between failed, so a reflector
// that fails without pause is sent back to 800ms every two minutes. Delay
// restarts only when more than the reset interval has passed since the
// previous call: a caller that keeps failing stays at the cap, and one that
// ran quietly (a watch that lasted minutes) starts again from the initial
// duration. That is what the reflector's comment promises ("reset after 2
// minutes of no backoff", client-go tools/cache/reflector.go:64).
package backoff

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// The reflector's defaults (client-go tools/cache/reflector.go:54-68).
const (
	DefaultInitial = 800 * time.Millisecond
	DefaultCap     = 30 * time.Second
	DefaultFactor  = 2.0
	DefaultJitter  = 1.0
	DefaultReset   = 2 * time.Minute
)

// Default is the reflector's backoff: 800ms doubling to 30s, jitter 1.0,
// as many steps as it takes to reach the cap and more (ceil(30s/800ms)).
func Default() Backoff {
	return Backoff{Duration: DefaultInitial, Factor: DefaultFactor, Jitter: DefaultJitter,
		Steps: int(math.Ceil(float64(DefaultCap) / float64(DefaultInitial))), Cap: DefaultCap}
}

// ErrInvalid is wrapped by every error about bad parameters.
var ErrInvalid = errors.New("backoff: invalid parameters")

// Backoff is an exponential backoff with wait.Backoff's fields and
// meaning: Step returns Duration (jittered) and multiplies it by Factor for
// the next call while Steps last; reaching Cap ends the growth.
type Backoff struct {
	// Duration is the next base delay.
	Duration time.Duration
	// Factor multiplies Duration after each step; 0 keeps it constant.
	Factor float64
	// Jitter adds up to Jitter*Duration at random to each returned delay;
	// 0 adds nothing. It never feeds back into Duration.
	Jitter float64
	// Steps is how many more times Duration grows; at 0 it stays.
	Steps int
	// Cap, when positive, bounds the grown Duration: a step that would
	// pass it sets Duration to Cap and Steps to 0.
	Cap time.Duration
}

// Validate reports parameters a backoff cannot honour: negative durations
// or steps, a negative or non-finite factor or jitter.
func (b Backoff) Validate() error {
	switch {
	case b.Duration < 0:
		return fmt.Errorf("%w: negative duration %v", ErrInvalid, b.Duration)
	case b.Cap < 0:
		return fmt.Errorf("%w: negative cap %v", ErrInvalid, b.Cap)
	case b.Steps < 0:
		return fmt.Errorf("%w: negative steps %d", ErrInvalid, b.Steps)
	case b.Factor < 0 || math.IsNaN(b.Factor) || math.IsInf(b.Factor, 0):
		return fmt.Errorf("%w: factor %v is not a finite number >= 0", ErrInvalid, b.Factor)
	case b.Jitter < 0 || math.IsNaN(b.Jitter) || math.IsInf(b.Jitter, 0):
		return fmt.Errorf("%w: jitter %v is not a finite number >= 0", ErrInvalid, b.Jitter)
	}
	return nil
}

// Step returns the next delay and advances b. r is the jitter's random
// source, a number in [0, 1); nil means math/rand/v2.
func (b *Backoff) Step(r func() float64) time.Duration {
	if b == nil {
		return 0
	}
	d := b.Duration
	if b.Steps > 0 {
		b.Steps--
		// Only a grown duration is capped, as in wait.Backoff: a Factor
		// of 0 keeps Duration as it is, even above Cap.
		if b.Factor != 0 {
			next := scale(d, b.Factor)
			if b.Cap > 0 && next > b.Cap {
				next, b.Steps = b.Cap, 0
			}
			b.Duration = next
		}
	}
	if b.Jitter > 0 {
		if r == nil {
			r = rand.Float64
		}
		d = add(d, scale(d, r()*b.Jitter))
	}
	return d
}

// scale is d*f, saturating at the largest duration instead of wrapping.
func scale(d time.Duration, f float64) time.Duration {
	v := float64(d) * f
	if v >= math.MaxInt64 {
		return math.MaxInt64
	}
	return time.Duration(v)
}

// add is a+b for non-negative durations, saturating instead of wrapping.
func add(a, b time.Duration) time.Duration {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// Delay is a Backoff that starts over when its caller was quiet: Next
// returns the initial delay again once more than the reset interval has
// passed since the previous Next. It is safe for concurrent use.
type Delay struct {
	mu      sync.Mutex
	clock   clock.PassiveClock
	initial Backoff
	cur     Backoff
	reset   time.Duration
	last    time.Time
	rand    func() float64
}

// NewDelay returns a Delay over b with the given reset interval (0: never
// reset), reading time from c (nil: the real clock).
func NewDelay(b Backoff, c clock.PassiveClock, reset time.Duration) (*Delay, error) {
	if err := b.Validate(); err != nil {
		return nil, err
	}
	if reset < 0 {
		return nil, fmt.Errorf("%w: negative reset interval %v", ErrInvalid, reset)
	}
	if c == nil {
		c = clock.RealClock{}
	}
	return &Delay{clock: c, initial: b, cur: b, reset: reset, last: c.Now()}, nil
}

// WithRand sets the jitter's random source (numbers in [0, 1)); for tests
// and reproducible runs. It returns d.
func (d *Delay) WithRand(r func() float64) *Delay {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.rand = r
	return d
}

// Next returns the delay before the caller's next attempt.
func (d *Delay) Next() time.Duration {
	d.mu.Lock()
	defer d.mu.Unlock()
	now := d.clock.Now()
	if d.reset > 0 && now.Sub(d.last) > d.reset {
		d.cur = d.initial
	}
	d.last = now
	return d.cur.Step(d.rand)
}
