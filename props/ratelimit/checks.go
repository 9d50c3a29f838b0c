package ratelimit

import (
	"strings"

	"github.com/kverify/kverify/props/checkkit"
)

// Component is the kverify component these checks run in, with the
// rate-limiting queue's checks (props/workqueue.RateLimitChecks).
const Component = "ratelimit"

// Check names, stable: divergences, traces and the kill matrix refer to them.
const (
	CheckExponential         = "ratelimit/exponential"
	CheckExponentialOverflow = "ratelimit/exponential-overflow"
	CheckExponentialSequence = "ratelimit/exponential-sequence"
	CheckFastSlow            = "ratelimit/fastslow"
	CheckMaxOf               = "ratelimit/maxof"
	CheckMaxWait             = "ratelimit/maxwait"
	CheckBucket              = "ratelimit/bucket"
	CheckDefault             = "ratelimit/default"
	CheckBadInput            = "ratelimit/bad-input"
)

// missingBadInputConstructors names the constructors the bad-input check
// needs and s lacks.
func missingBadInputConstructors(s Subject) string {
	var missing []string
	for _, c := range []struct {
		name string
		ok   bool
	}{{"FastSlow", s.FastSlow != nil}, {"Bucket", s.Bucket != nil}, {"MaxOf", s.MaxOf != nil}, {"MaxWait", s.MaxWait != nil}} {
		if !c.ok {
			missing = append(missing, "Subject."+c.name)
		}
	}
	return "the check feeds invalid parameters to every constructor and the subject lacks " + strings.Join(missing, ", ")
}

// Checks returns the rate limiter checks for s: none when s has no
// exponential limiter; a check whose limiter s lacks is not offered
// (props.Check.NotOffered says which).
func Checks(s Subject) []checkkit.Check {
	if s.Exponential == nil {
		return nil
	}
	cs := []checkkit.Check{
		{Name: CheckExponential, Family: checkkit.FamilyModel,
			Guarantee: "for bases whose products stay exact in float64 (at most 2^53ns and not a power of two, or at most 2^22ns) and up to 40 retries: the n-th When of an item since its last Forget is exactly min(base*2^n, max), never negative, never above max; NumRequeues counts the Whens since the item's last Forget; Forget resets only that item",
			Run:       exponential(s)},
		{Name: CheckExponentialOverflow, Family: checkkit.FamilyModel,
			Guarantee: "for extreme bases (powers of two retried up to 2^63ns, bases above 2^53ns up to math.MaxInt64) and long retry runs: every When is exactly min(base*2^n, max), computed without overflow or rounding, never negative, never above max",
			Run:       exponentialOverflow(s)},
		{Name: CheckExponentialSequence, Family: checkkit.FamilyWitness,
			Guarantee: "the delay sequences of client-go's own tests: 5ms, 10ms, 20ms, ... up to 1000s for the controller backoff, 1ms..32ms on the 6th call of the default per-item limiter, the maximum after 1000 calls, NumRequeues and Forget as in default_rate_limiters_test.go",
			Run:       exponentialSequence(s)},
		checkkit.Check{Name: CheckFastSlow, Family: checkkit.FamilyModel,
			Guarantee: "the k-th When of an item since its last Forget (k from 1) is fast if k <= maxFast and slow otherwise; NumRequeues counts the Whens since the item's last Forget; Forget resets only that item",
			Run:       fastSlow(s)}.OfferedIf(s.FastSlow != nil, "the subject has no fast-slow limiter (Subject.FastSlow is nil)"),
		checkkit.Check{Name: CheckMaxOf, Family: checkkit.FamilyModel,
			Guarantee: "When consults every part exactly once, in every call, and returns the largest of their delays (0 if all are smaller); NumRequeues is the largest of the parts' (0 if all are smaller) and calls no When; Forget is forwarded to every part exactly once",
			Run:       maxOf(s)}.OfferedIf(s.MaxOf != nil, "the subject has no MaxOf limiter (Subject.MaxOf is nil)"),
		checkkit.Check{Name: CheckMaxWait, Family: checkkit.FamilyModel,
			Guarantee: "When consults the wrapped limiter once and returns min(its delay, max), never above max; NumRequeues and Forget are forwarded",
			Run:       maxWait(s)}.OfferedIf(s.MaxWait != nil, "the subject has no MaxWait limiter (Subject.MaxWait is nil)"),
		checkkit.Check{Name: CheckBucket, Family: checkkit.FamilyTiming,
			Guarantee: "in fake time, a token bucket starts full: the first burst Whens return 0, later ones are spaced by 1/qps, refills follow the elapsed time up to burst, exactly as golang.org/x/time/rate's token bucket (within 1µs); NumRequeues is always 0 and Forget changes nothing",
			Run:       bucket(s)}.OfferedIf(s.Bucket != nil, "the subject has no token-bucket limiter (Subject.Bucket is nil)"),
		checkkit.Check{Name: CheckDefault, Family: checkkit.FamilyTiming,
			Guarantee: "in fake time, DefaultController is the maximum of a per-item exponential backoff (5ms doubling up to 1000s) and one token bucket (10 qps, burst 100) shared by all items: 100 fresh items wait 5ms, the 101st waits 100ms, refills follow the clock, NumRequeues is the per-item count",
			Run:       defaultController(s)}.OfferedIf(s.DefaultController != nil, "the subject has no default controller limiter (Subject.DefaultController is nil)"),
		checkkit.Check{Name: CheckBadInput, Family: checkkit.FamilyModel,
			Guarantee: "constructors given invalid parameters (negative base, max, fast or slow delays, negative maxFast, negative or NaN qps, negative burst, an empty MaxOf, a nil or typed-nil limiter in MaxOf or MaxWait) return an error; nothing panics and no limiter returns a negative delay",
			Run:       badInput(s)}.OfferedIf(s.FastSlow != nil && s.Bucket != nil && s.MaxOf != nil && s.MaxWait != nil, missingBadInputConstructors(s)),
	}
	cs = append(cs, checkkit.Check{Name: CheckForgetReleases, Family: checkkit.FamilyRetention,
		Guarantee: "after Forget, every per-item limiter (exponential, fast-slow, MaxOf and MaxWait of them, the defaults) keeps nothing for the item: for 1, 64 and 2000 items retried and forgotten (some twice) the keys are collectable and NumRequeues is 0, items not forgotten keep their counts, and Forget or NumRequeues of an item never seen creates no state",
		Run:       forgetReleases(s)})
	// Last: the race probe costs most.
	cs = append(cs, checkkit.Check{Name: CheckRace, Family: checkkit.FamilyLinear,
		Guarantee: "two calls at the same instant on one limiter (When/When, When/Forget, When/NumRequeues of one item, When/When and Forget/When of two items), swept across each other for hundreds of rounds on the exponential, fast-slow and token-bucket limiters (not MaxOf, which consults its parts one by one without a lock, in client-go too): both results and the state after them are those of one of the two serial orders",
		Run:       raceCheck(s)})
	return cs
}
