package backoff

import (
	"fmt"
	"testing"

	"github.com/kverify/kverify/props/checkkit"
	"github.com/kverify/kverify/traces"
)

// Component is the kverify component these checks run in.
const Component = "backoff"

// Check names, stable: divergences, traces and the kill matrix refer to them.
const (
	CheckBadInput      = "backoff/bad-input"
	CheckNil           = "backoff/nil"
	CheckDefault       = "backoff/default"
	CheckSequence      = "backoff/sequence"
	CheckJitter        = "backoff/jitter"
	CheckReset         = "backoff/reset"
	CheckResetDeclared = "backoff/reset-declared"
	CheckRace          = "backoff/race"
)

// Checks returns the backoff checks for s, fastest first: none when s has
// no New; a check whose factory s lacks is not offered.
func Checks(s Subject) []checkkit.Check {
	if s.New == nil {
		return nil
	}
	cs := []checkkit.Check{
		{Name: CheckBadInput, Family: checkkit.FamilyModel,
			Guarantee: "a backoff or delay with invalid parameters (negative duration, cap or steps, a NaN, infinite or negative factor or jitter, a negative reset interval) is rejected with an error; nothing panics and nothing accepted returns a negative delay",
			Run:       badInput(s)},
		{Name: CheckNil, Family: checkkit.FamilyWitness,
			Guarantee: "a nil backoff steps to 0 without panicking, as (*wait.Backoff)(nil).Step() does",
			Run:       nilStep(s)},
	}
	noDelay := "the subject has no Delay with a reset interval (Subject.NewDelay is nil)"
	cs = append(cs,
		checkkit.Check{Name: CheckDefault, Family: checkkit.FamilyWitness,
			Guarantee: "the reflector's default backoff is {800ms, factor 2, jitter 1.0, 38 steps, cap 30s}; without jitter it steps 0.8s, 1.6s, 3.2s, 6.4s, 12.8s, 25.6s, then 30s for good (also through a Delay with the 2 minute reset, called without pause); with its jitter each delay lies in [base, 2*base)",
			Run:       defaults(s)}.OfferedIf(s.Default != nil, "the subject has no default backoff (Subject.Default is nil)"),
		checkkit.Check{Name: CheckSequence, Family: checkkit.FamilyModel,
			Guarantee: "without jitter, for any valid parameters (durations from 0 and 1ns to hours and up to math.MaxInt64, factors 0 to 10, caps 0 or positive, up to 60 steps and past them) every Step returns the current Duration and leaves Duration and Steps exactly as wait.Backoff.Step does, the product saturating at math.MaxInt64: never negative, never wrapped",
			Run:       sequence(s)},
		checkkit.Check{Name: CheckJitter, Family: checkkit.FamilyModel,
			Guarantee: "with jitter j > 0, every Step returns a delay d with base <= d <= base*(1+j) (saturating at math.MaxInt64, never negative) where base is the jitter-free model's, exactly base + r*j*base for the random number r when the subject takes its random source, and the jitter never feeds back into Duration",
			Run:       jitter(s)},
		checkkit.Check{Name: CheckReset, Family: checkkit.FamilyTiming,
			Guarantee: "in fake time, without jitter, a Delay starts over from the initial backoff exactly when more than the reset interval has passed since the previous Next (since its creation for the first; exactly the interval continues; a reset interval of 0 never starts over): every Next equals the model's under the since-last-call rule, including reference §6.2's probe (10 calls, +119s, +2s twice, +60s, +61s: all 30s after the sixth)",
			Run:       reset(s, CheckReset, SinceLastCall, false)}.OfferedIf(s.NewDelay != nil, noDelay),
		checkkit.Check{Name: CheckResetDeclared, Family: checkkit.FamilyTiming,
			Guarantee: "in fake time, with a positive reset interval, with and without jitter, every Next follows the model under the reset rule the subject declares (Subject.ResetRule; client-go's is since-last-reset), including reference §6.2's probe: its base delay without jitter, within [base, base*(1+jitter)] with it, exactly base + r*jitter*base when the subject takes its random source",
			Run:       reset(s, CheckResetDeclared, s.ResetRule, true)}.OfferedIf(s.NewDelay != nil, noDelay),
		checkkit.Check{Name: CheckResetExhaustive, Family: checkkit.FamilyExhaustive,
			Guarantee: fmt.Sprintf("in fake time, without jitter, every sequence of up to %d calls of Next with the clock moved before each by 0, 1s, the reset interval minus 1ns, the interval, the interval plus 1ns, or an hour back: every Next is the model's under the reset rule the subject declares", resetDepth),
			Run:       resetExhaustive(s)}.OfferedIf(s.NewDelay != nil, noDelay),
		// Last: the race probe costs most.
		checkkit.Check{Name: CheckRace, Family: checkkit.FamilyLinear,
			Guarantee: "two Next calls at the same instant on one Delay (jitter 0, the clock standing still), swept across each other for hundreds of rounds after 0 to 7 serial calls: no data race, the two delays are the model's next two in some order and the call after them gets the third",
			Run:       race(s)}.OfferedIf(s.NewDelay != nil, noDelay),
	)
	return checkkit.Replayable(cs, func(t *testing.T, tr *traces.Trace) error { return Replay(t, s, tr) })
}
