package mutants

// reachMutants break inputs the API allows that the generators of the workqueue family, ring, backoff and informer did not make, and faults in their collaborators (issue 27, classes 1 and 3).
var reachMutants = []Mutant{
	// Class 3: faults in collaborators.
	{ID: "bo-delay-mark-monotonic", Component: "backoff", File: backoffGo,
		Bug: "Next moves its mark only forward (it ignores a clock that went back), so after the clock is set back the quiet spell is measured from a time that has not come yet and a caller quiet for longer than the reset interval does not start over",
		Old: "	d.last = now\n	return d.cur.Step(d.rand)", New: "	if now.After(d.last) {\n		d.last = now // never move the mark back\n	}\n	return d.cur.Step(d.rand)"},
	{ID: "bo-delay-reset-on-clock-jump", Component: "backoff", File: backoffGo,
		Bug: "Next takes a clock that went back for a quiet spell and starts over, so a clock correction sends a caller that keeps failing back to the initial delay",
		Old: "	if d.reset > 0 && now.Sub(d.last) > d.reset {", New: "	if d.reset > 0 && (now.Sub(d.last) > d.reset || now.Before(d.last)) {"},
	{ID: "rq-when-under-lock", Component: "ratelimit", File: rateLimitingGo,
		Bug: "AddRateLimited asks the limiter under the delaying queue's mutex without a defer, so a limiter whose When panics leaves the mutex locked and every later AddAfter, Get and ShutDown blocks for good",
		Old: "	r.AddAfter(item, r.limiter.When(item))\n}", New: "	r.mu.Lock() // one When at a time, in AddRateLimited order\n	delay := r.limiter.When(item)\n	r.mu.Unlock()\n	r.AddAfter(item, delay)\n}"},
	{ID: "rq-when-panic-adds", Component: "ratelimit", File: rateLimitingGo,
		Bug: "AddRateLimited swallows a panic of the limiter's When and adds the item at once, where client-go lets the panic reach the caller and adds nothing",
		Old: "	r.AddAfter(item, r.limiter.When(item))\n}", New: "	defer func() {\n		if recover() != nil {\n			r.Add(item) // a broken limiter must not lose the item: retry at once\n		}\n	}()\n	r.AddAfter(item, r.limiter.When(item))\n}"},
	// Class 1: inputs the generators did not make.
	{ID: "rl-bucket-inf-qps", Component: "ratelimit", File: ratelimitGo,
		Bug: "NewBucket hands a qps of +Inf to the rate package as is instead of as rate.Inf, so the infinite rate with burst 0 never grants a token (every When is rate.InfDuration) and with burst > 0 computes its tokens as NaN",
		Old: "	if math.IsInf(qps, 1) {\n		limit = rate.Inf\n	}\n", New: ""},
	// Class 1, measured by the reach tests (props/*/reach_test.go): an
	// initial size past the ring's default, a chunk larger than the
	// listener's 1024, and a delay of more than a day that still fits.
	{ID: "ring-initial-size-capped", Component: "ring", File: growingGo,
		Bug: "NewGrowing allocates at most DefaultSize slots however large the initial size (to grow on demand instead of reserving memory up front), so a ring made with room for 100 values starts at Cap 16 and grows in the first burst where TypedRingGrowing never does",
		Old: "		g.reset(make([]T, initialSize), 0)", New: "		g.reset(make([]T, min(initialSize, DefaultSize)), 0) // grow on demand"},
	{ID: "chunked-size-clamped", Component: "ring", File: chunkedGo,
		Bug: "NewChunked clamps a chunk size above DefaultChunkSize down to it (to bound one chunk's allocation), so a buffer made with chunks of 2000 values links a chunk every 1024 and its capacity is not the multiple of its chunk size that NewChunked documents",
		Old: "	if chunkSize <= 0 {\n		chunkSize = DefaultChunkSize\n	}\n	return &Chunked[T]{size: chunkSize}", New: "	if chunkSize <= 0 || chunkSize > DefaultChunkSize {\n		chunkSize = DefaultChunkSize\n	}\n	return &Chunked[T]{size: chunkSize}"},
	{ID: "dq-far-timer-skipped", Component: "delaying", File: delayingGo,
		Bug: "the waiting loop sets no timer for a ready time more than a day away, taking it for never (a later AddAfter re-arms the loop), so an item asked for in 25 hours, with nothing added after it, is never added",
		Old: "		case !ok || next == never:", New: "		case !ok || next == never || subSat(next, now) > 24*time.Hour: // far away: the next AddAfter re-arms"},
}
