// Package backoff is the conformance suite for the reflector's retry
// delay: an exponential backoff with apimachinery wait.Backoff's fields
// and Step, and a Delay over it that starts the sequence over after a
// reset interval, checked against the models in spec/backoff.
//
// Give Checks a Subject (factories for a backoff and a delay, the
// defaults, the reset rule the subject implements) and run the result with
// props.Run:
//
//	props.Run(t, backoff.Checks(subject))
//
// client-go's wait.Backoff fits: its jitter comes from a package-level
// random source the suite cannot set (Subject.Rand false), so checks with
// jitter check ranges, and exact sequences use jitter 0.
package backoff

import (
	"fmt"
	"strconv"
	"time"

	spec "github.com/kverify/kverify/spec/backoff"
	"k8s.io/utils/clock"
)

// Params are a backoff's parameters, wait.Backoff's fields with their
// meaning (spec/backoff.Backoff).
type Params struct {
	Duration time.Duration // the next base delay
	Factor   float64       // multiplies Duration after each step; 0 keeps it
	Jitter   float64       // adds up to Jitter*Duration to a returned delay
	Steps    int           // how many more times Duration may change
	Cap      time.Duration // when positive, bounds the grown Duration
}

// String renders p in the notation of the suite's traces, exactly: every
// value parses back to itself (see parseParams).
func (p Params) String() string {
	return fmt.Sprintf("Duration=%s, Factor=%s, Jitter=%s, Steps=%d, Cap=%s",
		fmtD(p.Duration), fmtF(p.Factor), fmtF(p.Jitter), p.Steps, fmtD(p.Cap))
}

// spec returns p as the model's state.
func (p Params) spec() spec.Backoff {
	return spec.Backoff{Duration: p.Duration, Factor: p.Factor, Jitter: p.Jitter, Steps: p.Steps, Cap: p.Cap}
}

func fromSpec(b spec.Backoff) Params {
	return Params{Duration: b.Duration, Factor: b.Factor, Jitter: b.Jitter, Steps: b.Steps, Cap: b.Cap}
}

// Backoff is one backoff under test: wait.Backoff's Step and its fields.
type Backoff interface {
	// Step returns the next delay and advances the backoff. rand is the
	// jitter's random source, numbers in [0, 1); a subject that cannot
	// take one (Subject.Rand false) ignores it.
	Step(rand func() float64) time.Duration
	// State returns the parameters as the steps so far left them.
	State() Params
}

// Delay is a backoff that starts over after a reset interval.
type Delay interface {
	// Next returns the delay before the caller's next attempt.
	Next() time.Duration
}

// ResetRule says when a Delay starts its sequence over (spec/backoff).
type ResetRule = spec.ResetRule

// The reset rules.
const (
	// SinceLastCall is kverify's contract: start over once more than the
	// reset interval has passed since the previous Next.
	SinceLastCall = spec.SinceLastCall
	// SinceLastReset is client-go's DelayWithReset: start over once more
	// than the reset interval has passed since the last restart.
	SinceLastReset = spec.SinceLastReset
)

// Subject is a backoff implementation under test. New is required; the
// checks that need another factory are left out without it.
type Subject struct {
	// New returns a backoff with parameters p, or an error for
	// parameters it cannot honour (a subject that cannot reject any
	// returns nil).
	New func(p Params) (Backoff, error)
	// NewDelay returns a Delay over p that reads the time from c and
	// starts over after reset (0: never), drawing jitter from rand (a
	// subject that cannot take one ignores it), or an error for
	// parameters it cannot honour.
	NewDelay func(p Params, c clock.Clock, reset time.Duration, rand func() float64) (Delay, error)
	// Default returns the reflector's default parameters.
	Default func() Params
	// NilStep steps a nil backoff, for subjects where that means
	// something (client-go: (*wait.Backoff)(nil).Step() is 0); nil
	// otherwise, and backoff/nil is not applicable.
	NilStep func() time.Duration
	// ResetRule is the reset rule the subject implements. The contract is
	// SinceLastCall (backoff/reset); backoff/reset-declared checks the
	// subject against the rule it declares, with jitter, so that a subject
	// declaring another rule diverges from the contract in the rule and
	// nothing else.
	ResetRule ResetRule
	// Rand reports whether the subject draws its jitter from the rand it
	// is given; then jittered delays are checked exactly, not only within
	// their range.
	Rand bool
}

// fmtD renders a duration so that time.ParseDuration gives it back;
// extreme values also in nanoseconds, where right and wrong answers differ
// in the last digits.
func fmtD(d time.Duration) string {
	if d >= time.Hour || d <= -time.Hour {
		return fmt.Sprintf("%v(%dns)", d, int64(d))
	}
	return d.String()
}

// fmtF renders a float64 so that strconv.ParseFloat gives it back.
func fmtF(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
