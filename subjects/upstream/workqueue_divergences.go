package upstream

import (
	"slices"

	"github.com/kverify/kverify/props/checkkit"
	prl "github.com/kverify/kverify/props/ratelimit"
	pwq "github.com/kverify/kverify/props/workqueue"
)

// The work-queue family's divergences, shared by every API era's adapters
// (workqueue.go and its older twins workqueue_v0_*.go).

// WorkqueueDivergences are client-go's known differences from the
// workqueue family's contract: queue, delaying queue and rate limiters.
var WorkqueueDivergences = slices.Concat(QueueDivergences, DelayingDivergences, LimiterDivergences)

// QueueDivergences are client-go's known differences from the plain
// queue's contract.
var QueueDivergences = append([]checkkit.Divergence{
	// A defect fixed by a backport within the minor lines (kverify matrix
	// --patches shows it on v0.20.0, v0.21.0 and v0.22.0 and not on
	// their newest patches).
	{Check: pwq.CheckRetention, Releases: "<v0.20.15 || >=v0.21.0 <v0.21.9 || >=v0.22.0 <v0.22.6",
		Guarantees: []string{pwq.GNoRetention},
		Shape:      `^No retention: \d+ of \d+ items handed out by Get and marked Done are still referenced by the queue`,
		Reason:     "Get takes the head with q.queue[1:] and leaves the item in the slice's backing array, so an item handed out stays referenced until enough Adds reallocate it",
		Upstream:   "k8s.io/client-go@v0.21.0/util/workqueue/queue.go:158",
		Class:      checkkit.ClassDefect,
		Evidence: "https://github.com/kubernetes/kubernetes/pull/105031 (\"workqueue: fix leak in queue preventing objects from being GCed\", merged 2021-09; a real case leaked 2 GB, grpc/grpc-go#4758) clears the slot; " +
			"backported to v0.20.15, v0.21.9 and v0.22.6 (the first patches whose queue.go has it), in v0.23.0 from the start"},
	drainSkipsQueued(pwq.CheckDrain),
	// The exhaustive search meets the same drain in its first runs (Add,
	// ShutDownWithDrain), and goes on past it to every other state; before
	// v0.23 there is no drain (the adapter's is a ShutDown).
	func() checkkit.Divergence {
		d := drainSkipsQueued(pwq.CheckExhaustive)
		d.Releases = ">=v0.23.0"
		return d
	}(),
	{
		Check:      pwq.CheckDoneUnheld,
		Releases:   ">=v0.21.0", // v0.20: old_releases.go
		Guarantees: []string{pwq.GLenLaw},
		Shape:      `^Len law: Len\(\) = \d+, model \d+ \(\d+ more;`,
		Reason:     "Done re-queues a dirty item without checking that it was being processed, so Add(x); Done(x) holds x twice in the FIFO (Len 2) and hands it out twice",
		Upstream:   Version + "/util/workqueue/queue.go:289-302",
		Class:      checkkit.ClassPrecondition,
		Evidence: "liggitt in https://github.com/kubernetes/kubernetes/issues/79934 (closed): \"Get()/Done() calls *must* be paired 1:1\"; " +
			"the Get doc (" + Version + "/util/workqueue/queue.go:262-264) says \"You must call Done with item when you have finished processing it.\"",
	},
}, unfinishedLoopDivergences[pwq.Component]...)

// DelayingDivergences are client-go's known differences from the delaying
// queue contract (component delaying); they are part of
// WorkqueueDivergences.
var DelayingDivergences = append([]checkkit.Divergence{
	{
		Check:      pwq.CheckDelayingTies,
		Guarantees: []string{pwq.GTieOrder},
		Shape:      `^Tie order: Gets returned \[\w+\], the model\'s FIFO head is \[\w+\] \(queue \[[\w ]+\], ready times \[[\w@. ]+\]\)$`,
		Reason:     "the waiting heap orders entries by readyAt only (Less is readyAt.Before) and container/heap is not stable, so items set for the same time come out in heap order: a, b, c all set for +1s are handed out a, c, b",
		Upstream:   Version + "/util/workqueue/delaying_queue.go:204-206",
		Class:      checkkit.ClassDesign,
		Evidence: Version + "/util/workqueue/delaying_queue.go:193-194 orders the waiting heap by readyAt alone (\"the item with the smallest readyAt) is at the root\") and AddAfter (:39) promises only \"after the indicated duration has passed\"; " +
			"no order among equal ready times is promised",
	},
	{
		Check:      pwq.CheckDelayingRelease,
		Guarantees: []string{pwq.GReleasesDrain},
		Shape:      `^ShutDown releases drain: ShutDownWithDrain, begun after ShutDown while "\w+" was being processed, was still waiting after a second ShutDown`,
		Reason:     "ShutDown runs the inner queue's ShutDown only once (stopOnce), so a second ShutDown does not release a ShutDownWithDrain begun after the first; the drain waits for Done",
		Upstream:   Version + "/util/workqueue/delaying_queue.go:240-246",
		Class:      checkkit.ClassDefect,
		Evidence: Version + "/util/workqueue/queue.go:323-324: \"ShutDown can be called after ShutDownWithDrain to force ShutDownWithDrain to stop waiting\", and delaying_queue.go:238-239 says ShutDown \"may be invoked more than once\"; " +
			"the delaying queue's stopOnce swallows that second ShutDown",
	},
	{
		Check: pwq.CheckDelayingLeak,
		// No drain before v0.23; old_releases.go for the others. Not
		// observed on v0.38.0-beta.0 in every run of 2026-12-06, though its
		// ShutDownWithDrain still leaves stopCh open: what changed is not
		// read yet (issue 41's matrix rerun).
		Releases:   ">=v0.23.0 <v0.27.0 || >=v0.35.0 <v0.38.0-0",
		Guarantees: []string{pwq.GNoLeak},
		Shape:      `^No leak: after ShutDownWithDrain returned: found unexpected goroutines:(?s:.*)delaying_queue\.go`,
		Reason:     "ShutDownWithDrain is the inner queue's (delayingType does not override it): stopCh is not closed nor the heartbeat stopped, so waitingLoop runs on until its next wake-up (the 10s heartbeat, a timer or an AddAfter) finds the queue shutting down",
		Upstream:   Version + "/util/workqueue/delaying_queue.go:240-246,290-293,320-324",
		Class:      checkkit.ClassDefect,
		Evidence: "no doc allows it: " + Version + "/util/workqueue/delaying_queue.go:168 says stopCh \"lets us signal a shutdown to the waiting loop\" and :275 that waitingLoop \"runs until the workqueue is shutdown\", " +
			"but the inherited ShutDownWithDrain never closes stopCh, so the loop outlives the returned drain",
	},
	{
		Check:      pwq.CheckDelayingRetention,
		Guarantees: []string{pwq.GNoRetention},
		Shape:      `^No retention: \d+ of \d+ items the queue no longer needs are still referenced by it; the first: AddAfter\(`,
		Reason:     "the waiting heap's Pop shortens the slice without clearing the vacated slot, so every entry moved to the queue (with its item) stays referenced by the heap's backing array until a later push overwrites the slot: after a burst of 300 waiting items became ready and were marked Done, all 300 are still held",
		Upstream:   Version + "/util/workqueue/delaying_queue.go:224-230",
		Class:      checkkit.ClassDefect,
		Evidence: "no doc allows the heap to keep entries it has popped (" + Version + "/util/workqueue/delaying_queue.go:222-230); upstream fixed earlier retention in this file as a bug " +
			"(https://github.com/kubernetes/kubernetes/pull/83945, \"Fix memory and timer leak in work queue\", merged); no issue for this slot found",
	},
	{
		Check:      pwq.CheckDelayingOneTimer,
		Guarantees: []string{pwq.GOneTimer},
		Shape:      `^At most one timer: (after|before|while)[^:]*: \d+ live timers \((ticker every 10s made at [\d:.]+(; )?|timer due in [^;)]+ made at [\d:.]+(; )?)+\)$`,
		Reason:     "besides the timer for the heap's head, every delaying queue holds a 10s heartbeat ticker from creation to ShutDown; and waitingLoop returns on stopCh without stopping its timer, which stays armed after ShutDown (with ShutDownWithDrain the ticker stays too)",
		Upstream:   Version + "/util/workqueue/delaying_queue.go:151,244,311-324",
		Class:      checkkit.ClassDefect,
		Evidence: "the heartbeat ticker itself is deliberate (liggitt in https://github.com/kubernetes/kubernetes/pull/83945: \"it serves as a backstop to ensure the workqueue doesn't get stuck\"), " +
			"but no doc allows the head timer left armed after ShutDown (waitingLoop returns on stopCh without stopping it, delaying_queue.go:311-324) or the ticker kept after ShutDownWithDrain",
	},
}, unfinishedLoopDivergences[pwq.ComponentDelaying]...)

// LimiterDivergences are client-go's known differences from the rate
// limiter contract.
var LimiterDivergences = append([]checkkit.Divergence{
	{
		Check:      prl.CheckExponentialOverflow,
		Guarantees: []string{prl.GNegative, prl.GExponential},
		Shape:      `^(never negative: When\(\w+\) (after \d+ retries )?returned -2562047h47m16\.854775808s \(-9223372036854775808ns\)|exponential: delay min\(base\*2\^n, max\): When\(\w+\) after \d+ retries returned \S+ \(\d{16,}ns\), want \S+ \(\d{16,}ns\)$)`,
		Reason:     "ItemExponential computes baseDelay*2^failures in float64 and guards only backoff > math.MaxInt64; a product of exactly 2^63 (1ns base on the 64th When, 2^62ns base on the 2nd, any base that float64 rounds to 2^63 on the 1st) passes the guard and time.Duration(backoff) gives math.MinInt64, a negative delay; bases above 2^53ns are also rounded by the float64 conversion",
		Upstream:   Version + "/util/workqueue/default_rate_limiters.go:116-135",
		Class:      checkkit.ClassDefect,
		Evidence: Version + "/util/workqueue/default_rate_limiters.go:123 says \"The backoff is capped such that 'calculated' value never overflows\" and :82 promises \"a simple baseDelay*2^<num-failures> limit\"; " +
			"the guard, added to fix an earlier overflow (https://github.com/kubernetes/kubernetes/pull/31396), misses a product of exactly 2^63",
	},
	{
		Check:      prl.CheckBadInput,
		Guarantees: []string{prl.GNegative, prl.GBadInputNoPanic, prl.GRejected},
		Shape:      `^(invalid parameters rejected: .* was accepted$|never negative: .* accepted, then When\(a\) #\d+ = -|no panic: (MaxOf|MaxWait)\(.*nil.*\) accepted, then When\(a\) #\d+: panic: runtime error: invalid memory address or nil pointer dereference)`,
		Reason:     "the constructors cannot reject anything: a negative base (or max, fast, slow, MaxWait max) gives negative delays, and a nil limiter in MaxOf or MaxWait makes When panic with a nil dereference",
		Upstream:   Version + "/util/workqueue/default_rate_limiters.go:99-105,116-135,172-192,222-241,276-287",
		Class:      checkkit.ClassPrecondition,
		Evidence: "sane parameters are left to the caller: the constructors (" + Version + "/util/workqueue/default_rate_limiters.go:99-105,172-179,239-241,276-278) take plain durations and limiters, return no error and document no validation, " +
			"and the queue treats a negative When as no delay (delaying_queue.go:257-260); no upstream doc or maintainer statement names the obligation explicitly",
	},
	{
		Check: prl.CheckBucket,
		Reason: "a qps of +Inf reaches golang.org/x/time/rate as rate.Limit(+Inf), which is not rate.Inf (math.MaxFloat64): the limiter takes the token-bucket path, and with burst 0 no reservation is ever ok, so When is rate.InfDuration (never) where an infinite rate never delays; " +
			"read in x/time/rate v0.15.0 rate.go:337-381 (only lim.limit == Inf skips the bucket; n <= lim.burst fails for burst 0), and with burst > 0 the tokens become NaN but every delay is 0, as the model's",
		Upstream: Version + "/util/workqueue/default_rate_limiters.go:68-70",
		Class:    checkkit.ClassPrecondition,
		Evidence: "golang.org/x/time@v0.15.0/rate/rate.go:21-22 spells the infinite rate as the sentinel Inf = Limit(math.MaxFloat64) (\"it allows all events (even if burst is zero)\") and rate.go:37 special-cases only r == Inf, " +
			"so a caller who wants an unlimited bucket must pass rate.Inf, not a float +Inf",
		Guarantees: []string{prl.GBucket},
		Shape:      `^bucket: token bucket delays: When\([a-c]\) = 2562047h47m16\.854775807s \(9223372036854775807ns\), want 0s `,
	},
}, unfinishedLoopDivergences[pwq.ComponentRateLimit]...)

// drainSkipsQueued is client-go's drain, which does not wait for queued
// items, declared for check: the checks that start a drain with items
// queued (queue/drain, queue/exhaustive).
func drainSkipsQueued(check string) checkkit.Divergence {
	return checkkit.Divergence{
		Check:      check,
		Guarantees: []string{pwq.GDrain},
		Shape:      `^Drain: ShutDownWithDrain returned with items queued \[[^\]]+\] or processing \[\]`,
		Reason:     "ShutDownWithDrain waits only while the processing set is non-empty; items still queued are not waited for, although its doc says it \"waits until all items in the queue have been processed\"",
		Upstream:   Version + "/util/workqueue/queue.go:321-342",
		Class:      checkkit.ClassDefect,
		Evidence: Version + "/util/workqueue/queue.go:321-322: ShutDownWithDrain \"waits until all items in the queue have been processed\" (draining is \"processing every item currently in the queue\", its author in https://github.com/kubernetes/kubernetes/pull/101928); " +
			"a fix is proposed in https://github.com/kubernetes/kubernetes/pull/141079 (open)",
	}
}
