//go:build !clientgo_before_v0_27

package upstream

import (
	"math"
	"testing"
	"time"

	pbo "github.com/kverify/kverify/props/backoff"
	"github.com/kverify/kverify/props/checkkit"
	"github.com/kverify/kverify/subjects/suite"
	"github.com/kverify/kverify/traces"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/clock"
)

// APIMachineryVersion is the k8s.io/apimachinery release (the one client-go
// v0.37.2 pins) whose wait.Backoff these adapters and divergences describe.
const APIMachineryVersion = "k8s.io/apimachinery@v0.37.2"

// Backoff returns apimachinery's wait.Backoff and its DelayWithReset, the
// reflector's retry delay, as a subject. Nothing can be rejected, and the
// jitter comes from wait's package-level random source (wait.go:85), which
// the suite cannot set: Rand is false and jittered delays are checked
// within their range.
func Backoff() pbo.Subject {
	return pbo.Subject{
		New: func(p pbo.Params) (pbo.Backoff, error) {
			return &waitBackoff{b: toWait(p)}, nil
		},
		NewDelay: func(p pbo.Params, c clock.Clock, reset time.Duration, _ func() float64) (pbo.Delay, error) {
			return delayFunc(toWait(p).DelayWithReset(c, reset)), nil
		},
		// The reflector's literal (client-go tools/cache/reflector.go:319-325):
		// its constants are unexported.
		Default: func() pbo.Params {
			return pbo.Params{Duration: 800 * time.Millisecond, Cap: 30 * time.Second,
				Steps:  int(math.Ceil(float64(30*time.Second) / float64(800*time.Millisecond))),
				Factor: 2.0, Jitter: 1.0}
		},
		NilStep: func() time.Duration {
			var b *wait.Backoff
			return b.Step()
		},
		ResetRule: pbo.SinceLastReset,
	}
}

// waitBackoff is a wait.Backoff; Step ignores the suite's random source.
type waitBackoff struct{ b wait.Backoff }

func (w *waitBackoff) Step(func() float64) time.Duration { return w.b.Step() }
func (w *waitBackoff) State() pbo.Params {
	return pbo.Params{Duration: w.b.Duration, Factor: w.b.Factor, Jitter: w.b.Jitter, Steps: w.b.Steps, Cap: w.b.Cap}
}

// delayFunc is a wait.DelayFunc as a Delay.
type delayFunc wait.DelayFunc

func (f delayFunc) Next() time.Duration { return f() }

func toWait(p pbo.Params) wait.Backoff {
	return wait.Backoff{Duration: p.Duration, Factor: p.Factor, Jitter: p.Jitter, Steps: p.Steps, Cap: p.Cap}
}

// BackoffDivergences are client-go's known differences from the backoff
// contract.
var BackoffDivergences = backoffDivergences()

func backoffDivergences() []checkkit.Divergence {
	ds := []checkkit.Divergence{
		{
			Check:      pbo.CheckJitter,
			Guarantees: []string{pbo.GNegative, pbo.GState},
			Shape:      `^(never negative: Step #\d+ of Duration=[^,]+, Factor=[^,]+, Jitter=[^,]+, Steps=\d+, Cap=\S+ returned -|Duration and Steps advance as in wait\.Backoff\.Step: after Step #\d+ of .* the backoff is Duration=-)`,
			Reason:     "wait.Jitter adds duration + time.Duration(rand*jitter*duration) in int64 without a guard, so a huge duration (math.MaxInt64-1 with jitter 1 and almost any random number) wraps around to a negative delay, on every platform; on amd64 the jittered delay of a Duration whose product already went negative (see backoff/sequence) is negative too",
			Upstream:   APIMachineryVersion + "/pkg/util/wait/wait.go:92-98, backoff.go:110-124",
			Class:      checkkit.ClassDefect,
			Evidence:   APIMachineryVersion + "/pkg/util/wait/wait.go:87-88: Jitter \"returns a time.Duration between duration and duration + maxFactor * duration\"; the unguarded int64 sum wraps to a negative delay outside that range",
		},
		{
			Check:      pbo.CheckReset,
			Guarantees: []string{pbo.GResetSinceLastCall},
			Shape:      `^Next follows the since-last-call reset rule: Next #\d+ at \S+ after creation \(reset interval [^,]+, base [^,]+, rand [\d.]+\) returned \S+, want \S+$`,
			Reason:     "DelayWithReset's backoffManager starts over when more than the reset interval has passed since its last restart (lastStart is set only when it restarts), not since the previous call: a reflector that keeps failing is sent back to 800ms every two minutes, and one that was quiet for two minutes only starts over if the last restart was that long ago; a reset interval <= 0 gives a constant delay instead of one that never starts over. Its own rule is checked by backoff/reset-declared",
			Upstream:   APIMachineryVersion + "/pkg/util/wait/backoff.go:135-153,292-304",
			Class:      checkkit.ClassDesign,
			Evidence: APIMachineryVersion + "/pkg/util/wait/backoff.go:128-134: DelayWithReset's doc says \"Every resetInterval the backoff parameters are reset to their initial state\" (a periodic reset, not one after a quiet period) and \"If resetInterval is zero no backoff will be performed\"; " +
				"the reflector's reliance on it is the defect declared under reflector/backoff",
		},
		{
			Check:      pbo.CheckBadInput,
			Guarantees: []string{pbo.GNegative, pbo.GNoPanic, pbo.GRejected},
			Shape:      `^(invalid parameters rejected: (New|NewDelay)\(.*\) was accepted$|never negative: (New|NewDelay)\(.*\) accepted, then delay #\d+ = -|no panic: (New|NewDelay)\(.*(NaN|Inf).*\) accepted)`,
			Reason:     "wait.Backoff is a plain struct and DelayWithReset takes any parameters: nothing is rejected, a negative duration is returned as a negative delay, a NaN factor turns into an arbitrary duration and a negative reset interval silently makes the delay constant",
			Upstream:   APIMachineryVersion + "/pkg/util/wait/backoff.go:30-53,98-126,135-153",
			Class:      checkkit.ClassPrecondition,
			Evidence:   APIMachineryVersion + "/pkg/util/wait/backoff.go:29-53: wait.Backoff is a plain parameter struct whose doc puts its rules on the caller (Factor \"Should not be negative\", :35); nothing validates them",
		},
	}
	if floatConversionWraps() {
		ds = append(ds, checkkit.Divergence{
			Check:      pbo.CheckSequence,
			Guarantees: []string{pbo.GState},
			Shape:      `^Duration and Steps advance as in wait\.Backoff\.Step: after Step #\d+ of .* the backoff is Duration=-`,
			Reason:     "delay computes time.Duration(float64(duration) * factor) without a guard; on this platform (amd64: the conversion of a float64 >= 2^63 gives math.MinInt64) a product past math.MaxInt64 becomes a negative Duration, which no positive cap catches, and every later Step returns it",
			Upstream:   APIMachineryVersion + "/pkg/util/wait/backoff.go:110-116",
			Class:      checkkit.ClassDefect,
			Evidence: APIMachineryVersion + "/pkg/util/wait/backoff.go:48-51: Cap is \"A limit on revised values of the duration parameter. If a multiplication by the factor parameter would make the duration exceed the cap then the duration is set to the cap\"; " +
				"an overflowed (negative) product slips under the cap",
		})
	}
	return ds
}

// overflowing is a float64 no int64 holds, in a variable so that the
// conversion below happens at run time, as client-go's does.
var overflowing = float64(math.MaxInt64) * 2

// floatConversionWraps reports whether converting a float64 too large for
// an int64 gives a negative number on this platform (amd64 does, arm64
// saturates): only then does client-go's unguarded product go negative.
func floatConversionWraps() bool { return time.Duration(overflowing) < 0 }

// backoffEntries binds apimachinery's wait.Backoff (DelayWithReset:
// v0.27 and later).
func backoffEntries() []suite.Entry {
	return []suite.Entry{entry(pbo.Component, func() []checkkit.Check { return pbo.Checks(Backoff()) }, BackoffDivergences,
		func(t *testing.T, tr *traces.Trace) error { return pbo.Replay(t, Backoff(), tr) })}
}
