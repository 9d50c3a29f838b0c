package backoff

import "github.com/kverify/kverify/props/checkkit"

// The guarantees the backoff checks name in violations. The engine's
// (GNoPanic to GJitterExact) are listed most severe first, as its
// bad-input check ranks them.
const (
	// GNoPanic is checkkit's: a constructor, Step or Next panicked.
	GNoPanic = checkkit.GNoPanic
	// GAccepted: a constructor rejected valid parameters.
	GAccepted = "valid parameters accepted"
	// GNegative: a Step or Next returned a negative delay.
	GNegative = "never negative"
	// GSequence: a Step without jitter returned another delay than
	// wait.Backoff.Step's.
	GSequence = "Step returns wait.Backoff.Step's delay"
	// GState: after a Step, Duration or Steps differ from
	// wait.Backoff.Step's.
	GState = "Duration and Steps advance as in wait.Backoff.Step"
	// GJitterRange: a jittered delay fell outside [base, base*(1+jitter)].
	GJitterRange = "jittered delay within [base, base*(1+jitter)]"
	// GJitterExact: a jittered delay, with the subject taking the
	// check's random source, is not exactly base + r*jitter*base.
	GJitterExact = "jittered delay is base + r*jitter*base"
	// GRejected: a constructor accepted invalid parameters.
	GRejected = "invalid parameters rejected"
	// GResetSinceLastCall: a Delay's Next differs from the model under
	// the since-last-call reset rule (kverify's contract).
	GResetSinceLastCall = "Next follows the since-last-call reset rule"
	// GResetSinceLastReset: a Delay's Next differs from the model under
	// the since-last-reset rule (client-go's, when the subject declares
	// it).
	GResetSinceLastReset = "Next follows the since-last-reset reset rule"
	// GNextFollowsModel: a serial Next before a race round differs from
	// the model's delay.
	GNextFollowsModel = "Next follows the model"
	// GLiveness: of two racing Next calls, one is still blocked after the
	// other returned.
	GLiveness = "Liveness"
	// GAtomic: two racing Next calls (or the call after them) returned
	// delays no serial order of the two gives.
	GAtomic = "Atomic calls"
	// GNilStep: stepping a nil backoff returned a delay other than 0.
	GNilStep = "a nil backoff steps to 0"
	// GDefaults: Default() is not the reflector's backoff {800ms, factor
	// 2, jitter 1.0, 38 steps, cap 30s}.
	GDefaults = "the reflector's defaults"
	// GDefaultSequence: the defaults without jitter (stepped, or through
	// a Delay) do not give 0.8s, 1.6s, ..., 25.6s, then 30s.
	GDefaultSequence = "the reflector's default sequence"
	// GDefaultJitter: a jittered step of the defaults fell outside
	// [base, 2*base).
	GDefaultJitter = "the reflector's default jitter"
)

// Guarantees returns every guarantee the backoff checks can name in a
// violation (besides checkkit's GTermination, which any check can).
func Guarantees() []string {
	return []string{GNoPanic, GAccepted, GNegative, GSequence, GState, GJitterRange, GJitterExact, GRejected,
		GResetSinceLastCall, GResetSinceLastReset, GNextFollowsModel, GLiveness, GAtomic, GNilStep,
		GDefaults, GDefaultSequence, GDefaultJitter}
}
