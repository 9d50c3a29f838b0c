package knative

import "github.com/kverify/kverify/props/checkkit"

// QueueDivergences are the two-lane queue's declared differences from the
// plain queue's contract.
var QueueDivergences = []checkkit.Divergence{}

// DelayingDivergences are its declared differences from the delaying
// queue's.
var DelayingDivergences = []checkkit.Divergence{}

// RateLimitDivergences are its declared differences from the
// rate-limiting queue's.
var RateLimitDivergences = []checkkit.Divergence{}
