package ratelimit

// The guarantees the rate limiter checks name in violations.
const (
	// GBadInputNoPanic: a constructor given invalid parameters, or the
	// limiter it returned, panicked. The bad-input check's own spelling,
	// lower case: not checkkit.GNoPanic.
	GBadInputNoPanic = "no panic"
	// GNegative: a limiter returned a negative delay.
	GNegative = "never negative"
	// GRejected: a constructor accepted invalid parameters (or returned
	// neither a limiter nor an error).
	GRejected = "invalid parameters rejected"
	// GAccepted: a constructor rejected valid parameters.
	GAccepted = "valid parameters accepted"
	// GNeverAboveMax: the exponential limiter returned a delay above its
	// max.
	GNeverAboveMax = "never above max"
	// GExponential: the exponential limiter's delay is not min(base*2^n,
	// max) after n retries.
	GExponential = "exponential: delay min(base*2^n, max)"
	// GExponentialClientGo: the exponential limiters do not give
	// client-go's own expected sequences (default_rate_limiters_test.go,
	// the controller backoff's).
	GExponentialClientGo = "exponential: client-go's delay sequences"
	// GFastSlow: the fast-slow limiter did not give the fast delay for
	// the first maxFast Whens of an item and the slow one after.
	GFastSlow = "fastslow: fast for the first maxFast Whens, then slow"
	// GNumRequeues: NumRequeues is not the number of Whens since the
	// item's last Forget.
	GNumRequeues = "NumRequeues counts the Whens since Forget"
	// GForget: Forget of one item changed another item's NumRequeues (or
	// did not reset its own).
	GForget = "Forget resets only that item"
	// GBucket: the token bucket's delays differ from the model bucket's
	// beyond the tolerance.
	GBucket = "bucket: token bucket delays"
	// GBucketBurst: the bucket's first burst Whens did not return 0, or
	// the ones after were not spaced by 1/qps.
	GBucketBurst = "bucket: first burst Whens return 0, then spaced by 1/qps"
	// GBucketNumRequeues: the bucket's NumRequeues is not 0.
	GBucketNumRequeues = "bucket: NumRequeues is 0"
	// GDefault: the default controller limiter's delays or NumRequeues
	// differ from max(exponential 5ms..1000s per item, bucket 10 qps
	// burst 100).
	GDefault = "default: max(exponential 5ms..1000s per item, bucket 10 qps burst 100)"
	// GMaxOfConsulted: MaxOf did not consult every part exactly once per
	// call.
	GMaxOfConsulted = "maxof: every part consulted exactly once per call"
	// GMaxOfWhen: MaxOf's When is not the largest of its parts' delays.
	GMaxOfWhen = "maxof: When is the largest delay of the parts"
	// GMaxOfNumRequeues: MaxOf's NumRequeues is not the largest of its
	// parts'.
	GMaxOfNumRequeues = "maxof: NumRequeues is the largest of the parts'"
	// GMaxWaitConsulted: MaxWait did not consult the wrapped limiter
	// exactly once per call.
	GMaxWaitConsulted = "maxwait: the wrapped limiter is consulted once per call"
	// GMaxWaitNeverAbove: MaxWait returned a delay above its max.
	GMaxWaitNeverAbove = "maxwait: never above max"
	// GMaxWaitWhen: MaxWait's When is not min(inner, max).
	GMaxWaitWhen = "maxwait: When is min(inner, max)"
	// GMaxWaitNumRequeues: MaxWait's NumRequeues is not the wrapped
	// limiter's.
	GMaxWaitNumRequeues = "maxwait: NumRequeues is forwarded"
	// GMaxWaitForget: MaxWait's Forget did not reach the wrapped limiter.
	GMaxWaitForget = "maxwait: Forget is forwarded"
	// GForgetReleases: after Forget an item still has requeues or is
	// still referenced by the limiter (or one never forgotten lost its
	// count).
	GForgetReleases = "Forget releases the item"
	// GAtomic: two racing calls left the limiter in a state no serial
	// order of the two gives.
	GAtomic = "Atomic calls"
	// GLiveness: of two racing calls, one is still blocked after the
	// other returned.
	GLiveness = "Liveness"
)

// Guarantees returns every guarantee the rate limiter checks can name in
// a violation (besides checkkit's GTermination and GNoPanic, which any
// check can).
func Guarantees() []string {
	return []string{GBadInputNoPanic, GNegative, GRejected, GAccepted, GNeverAboveMax, GExponential, GExponentialClientGo,
		GFastSlow, GNumRequeues, GForget, GBucket, GBucketBurst, GBucketNumRequeues, GDefault,
		GMaxOfConsulted, GMaxOfWhen, GMaxOfNumRequeues, GMaxWaitConsulted, GMaxWaitNeverAbove, GMaxWaitWhen,
		GMaxWaitNumRequeues, GMaxWaitForget, GForgetReleases, GAtomic, GLiveness}
}
