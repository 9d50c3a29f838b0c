// Package backoff is the reference model of apimachinery's wait.Backoff
// (pkg/util/wait/backoff.go) and of the reflector's retry delay built on
// it (impl/backoff): an exponential backoff that steps through its
// parameters, and a Delay that starts the sequence over after a reset
// interval, under either of two reset rules.
//
// The model is pure: no goroutines, no clock, no randomness. Time is the
// duration since the Delay was made and the jitter's random number is an
// input, so the same model serves as rapid's expected value, for a fake
// clock and for a subject whose random source cannot be injected (then
// only the bounds of Jittered apply). Model values are never mutated: every
// transition returns a new value.
//
// The model is written for valid parameters (no negative duration, cap or
// steps, factor and jitter finite and >= 0, reset >= 0); what it answers
// otherwise is unspecified. Its arithmetic saturates at the largest
// time.Duration where client-go's float-to-integer conversion overflows.
package backoff

import (
	"fmt"
	"math"
	"time"
)

// MaxDuration is the largest time.Duration, where the arithmetic saturates.
const MaxDuration = time.Duration(math.MaxInt64)

// The reflector's defaults (client-go v0.37.2 tools/cache/reflector.go:62-67
// and :319-325), restated here rather than taken from an implementation.
const (
	DefaultInitial = 800 * time.Millisecond
	DefaultCap     = 30 * time.Second
	DefaultFactor  = 2.0
	DefaultJitter  = 1.0
	DefaultSteps   = 38 // ceil(30s / 800ms)
	DefaultReset   = 2 * time.Minute
)

// Backoff is the state of a wait.Backoff: the next base delay and the
// parameters that grow it.
type Backoff struct {
	// Duration is the next base delay.
	Duration time.Duration
	// Factor multiplies Duration after each step; 0 keeps it constant.
	Factor float64
	// Jitter adds up to Jitter*Duration to each returned delay; it never
	// feeds back into Duration.
	Jitter float64
	// Steps is how many more times Duration may change.
	Steps int
	// Cap, when positive, bounds the grown Duration; reaching it sets
	// Steps to 0.
	Cap time.Duration
}

// Default is the reflector's backoff: 800ms doubling to 30s, jitter 1.0,
// 38 steps.
func Default() Backoff {
	return Backoff{Duration: DefaultInitial, Factor: DefaultFactor, Jitter: DefaultJitter, Steps: DefaultSteps, Cap: DefaultCap}
}

// String renders b for failure messages.
func (b Backoff) String() string {
	return fmt.Sprintf("{Duration:%v Factor:%v Jitter:%v Steps:%d Cap:%v}", b.Duration, b.Factor, b.Jitter, b.Steps, b.Cap)
}

// Step returns the base delay of the next step (before jitter) and the
// state after it, as wait.Backoff.Step computes them (backoff.go:98-126):
// the delay is the current Duration; while Steps last, Duration becomes
// Duration*Factor (unchanged if Factor is 0), clamped to Cap when Cap is
// positive, which also ends the steps. With no steps left nothing changes
// (client-go sets a non-positive Steps to 0). The product saturates at
// MaxDuration instead of wrapping.
func (b Backoff) Step() (time.Duration, Backoff) {
	d := b.Duration
	if b.Steps < 1 {
		b.Steps = 0
		return d, b
	}
	b.Steps--
	if b.Factor != 0 {
		next := Scale(d, b.Factor)
		if b.Cap > 0 && next > b.Cap {
			next, b.Steps = b.Cap, 0
		}
		b.Duration = next
	}
	return d, b
}

// Scale is time.Duration(float64(d) * f), client-go's product, saturating
// at MaxDuration where the conversion would overflow: float64(MaxDuration)
// is 2^63, which no int64 holds.
func Scale(d time.Duration, f float64) time.Duration {
	v := float64(d) * f
	if v >= float64(MaxDuration) {
		return MaxDuration
	}
	return time.Duration(v)
}

// Jittered is the delay returned for base delay base with jitter factor
// jitter and random number r in [0, 1): base + r*jitter*base (wait.Jitter,
// wait.go:92-98, with the product computed as r*jitter first, as both
// client-go and impl/backoff do), saturating at MaxDuration. A jitter <= 0
// returns base: wait.Backoff applies no jitter then (wait.Jitter's own
// "0 means 1.0" is not reached through Backoff).
func Jittered(base time.Duration, jitter, r float64) time.Duration {
	if jitter <= 0 {
		return base
	}
	return add(base, Scale(base, r*jitter))
}

// JitterBounds are the smallest and largest delays Jittered returns for
// base over every r in [0, 1), as float64 nanoseconds: base and
// base*(1+jitter), the upper one not saturated (callers compare with a
// tolerance; a saturated delay is at most MaxDuration anyway).
func JitterBounds(base time.Duration, jitter float64) (lo, hi float64) {
	if jitter <= 0 {
		return float64(base), float64(base)
	}
	return float64(base), float64(base) * (1 + jitter)
}

// add is a+b for non-negative durations, saturating at MaxDuration.
func add(a, b time.Duration) time.Duration {
	if a > MaxDuration-b {
		return MaxDuration
	}
	return a + b
}

// ResetRule says when a Delay starts its sequence over.
type ResetRule int

const (
	// SinceLastCall is kverify's contract (impl/backoff.Delay): the
	// sequence starts over when more than the reset interval has passed
	// since the previous Next (or since the Delay was made, for the first
	// one). A caller that keeps failing stays at the cap; one that was
	// quiet for the interval starts from the initial duration, which is
	// what the reflector's comment promises ("If we don't backoff for
	// 2min, assume API server is healthy", reflector.go:64).
	SinceLastCall ResetRule = iota
	// SinceLastReset is client-go's wait.Backoff.DelayWithReset
	// (backoffManager.Step, backoff.go:292-304): the sequence starts over
	// when more than the reset interval has passed since the last restart
	// (or since the Delay was made), whether or not the calls in between
	// came close together. client-go's DelayWithReset turns a reset
	// interval <= 0 into a constant delay instead; the model does not
	// describe that case (see Delay.Reset).
	SinceLastReset
)

// String names the rule, for check names and messages.
func (r ResetRule) String() string {
	switch r {
	case SinceLastCall:
		return "since-last-call"
	case SinceLastReset:
		return "since-last-reset"
	}
	return fmt.Sprintf("ResetRule(%d)", int(r))
}

// Delay models a backoff that starts over after a reset interval. Times
// are durations since the Delay was made; they may go back, as a wall
// clock can be set back, and a call at an instant before Mark is then no
// quiet spell (at-Mark is negative): the mark moves back to it only under
// SinceLastCall, which marks every call.
type Delay struct {
	// Initial is the backoff the sequence starts (over) from.
	Initial Backoff
	// Cur is the backoff's state now.
	Cur Backoff
	// Reset is the reset interval; 0 means never start over.
	Reset time.Duration
	// Rule is the reset rule.
	Rule ResetRule
	// Mark is the instant the reset interval is measured from: the
	// previous call (SinceLastCall) or the last restart (SinceLastReset);
	// 0, the Delay's creation, before either.
	Mark time.Duration
}

// NewDelay returns the model of a fresh Delay over b.
func NewDelay(b Backoff, reset time.Duration, rule ResetRule) Delay {
	return Delay{Initial: b, Cur: b, Reset: reset, Rule: rule}
}

// Next is a call at instant at (since the Delay was made) with random
// number r in [0, 1) for the jitter: it returns the next state and the
// delay. The sequence starts over first when more than Reset has passed
// since Mark (strictly more: exactly Reset continues the sequence, in
// both rules).
func (d Delay) Next(at time.Duration, r float64) (Delay, time.Duration) {
	if d.Reset > 0 && at-d.Mark > d.Reset {
		d.Cur = d.Initial
		d.Mark = at
	}
	if d.Rule == SinceLastCall {
		d.Mark = at
	}
	base, cur := d.Cur.Step()
	d.Cur = cur
	return d, Jittered(base, d.Cur.Jitter, r)
}
