package upstream

import (
	"github.com/kverify/kverify/props/checkkit"
	pwq "github.com/kverify/kverify/props/workqueue"
)

// Declarations that hold only for older releases: what the behaviour
// matrix (kverify matrix, docs/matrix.md) found there, each with the
// upstream change that fixed it or changed it on purpose. They live in
// the component lists beside the pinned release's declarations (release
// ranges keep at most one per check and release); this file holds what
// they share.

// The work queue's unfinished-work goroutine (updateUnfinishedWorkLoop).
const (
	// unfinishedLoopReleases: the releases where the suite meets it. v0.20
	// starts it for every queue; v0.21 to v0.34 start it for a queue with
	// metrics and do not stop it on ShutDown. From v0.27 that is a queue
	// given a provider (QueueConfig), as the metrics checks give it; from
	// v0.21 to v0.26 it is a named queue while a global provider is set
	// (workqueue.SetProvider), which the suite never sets, so the range
	// the suite declares starts again at v0.27.
	unfinishedLoopReleases = "<v0.21.0 || >=v0.27.0 <v0.35.0"
	unfinishedLoopReason   = "ShutDown does not stop the queue's updateUnfinishedWorkLoop goroutine: it ticks on the queue's clock every 500ms and returns only on its next tick after ShutDown, so it outlives ShutDown (a goroutine leak) and, in a testing/synctest bubble, keeps the bubble from ending (the deadlock panic); " +
		"v0.20 starts it for every queue, metrics or not, and v0.21 to v0.34 for a queue with metrics (from v0.27 a queue given a provider; before, a named queue while a global provider is set with SetProvider, which the suite does not set)"
	unfinishedLoopEvidence = "fixed upstream: https://github.com/kubernetes/kubernetes/pull/94813 (\"Don't start goroutine for noMetrics\", /kind bug, merged; first in v0.21.0) stopped starting it without metrics, " +
		"and https://github.com/kubernetes/kubernetes/pull/135072 (\"Gracefully shutdown typed queue\", /kind bug, merged 2025-11; first in v0.35.0): \"q.Shutdown() could be called and returned when the goroutine updateUnfinishedWorkLoop() has not terminated\""
	// deadlockShape is a synctest bubble that ended with a goroutine of
	// the subject still blocked.
	deadlockShape = `^(No panic|Termination)(: the subject panicked or deadlocked)?: (.*: )?deadlock: main bubble goroutine has exited but blocked goroutines remain`
	// loopLeakShape is the goroutine leak check finding the loop.
	loopLeakShape = `^No leak: after ShutDown( \(drain=false\)| returned): found unexpected goroutines:(?s:.*)updateUnfinishedWorkLoop`
)

// unfinishedLoop declares the unfinished-work goroutine on check for the
// releases that have it (only <v0.21.0 where v0.27 to v0.34 do not reach
// the check: their queues have metrics only in the metrics checks).
func unfinishedLoop(check, releases string, guarantees []string, shape string) checkkit.Divergence {
	return checkkit.Divergence{
		Check: check, Releases: releases, Guarantees: guarantees, Shape: shape,
		Reason:   unfinishedLoopReason,
		Upstream: "k8s.io/client-go@v0.20.15/util/workqueue/queue.go:55-62,230-251; k8s.io/client-go@v0.34.13/util/workqueue/queue.go:171-182,325-350",
		Class:    checkkit.ClassDefect, Evidence: unfinishedLoopEvidence,
	}
}

// unfinishedLoopDivergences are the work-queue family's declarations of
// the unfinished-work goroutine, by component.
var unfinishedLoopDivergences = map[string][]checkkit.Divergence{
	pwq.Component: {
		unfinishedLoop(pwq.CheckLeak, unfinishedLoopReleases, []string{pwq.GNoLeak}, loopLeakShape),
		unfinishedLoop(pwq.CheckLifecycle, unfinishedLoopReleases, deadlockGuarantees, deadlockShape),
		unfinishedLoop(pwq.CheckMetrics, ">=v0.27.0 <v0.35.0", deadlockGuarantees, deadlockShape),
		unfinishedLoop(pwq.CheckModel, "<v0.21.0", deadlockGuarantees, deadlockShape),
		unfinishedLoop("queue/liveness", "<v0.21.0", deadlockGuarantees, deadlockShape),
		unfinishedLoop("queue/race", "<v0.21.0", deadlockGuarantees, deadlockShape),
		unfinishedLoop(pwq.CheckExhaustive, "<v0.21.0", deadlockGuarantees, deadlockShape),
		// done-unheld: the pinned release's declaration (Len law) holds
		// from v0.21; on v0.20 the same check meets the goroutine too.
		func() checkkit.Divergence {
			d := unfinishedLoop(pwq.CheckDoneUnheld, "<v0.21.0", append([]string{pwq.GLenLaw}, deadlockGuarantees...), `^Len law: Len\(\) = \d+, model \d+ \(\d+ more;|`+deadlockShape)
			d.Reason = "Done re-queues a dirty item it never handed out (as on the pinned release, a caller precondition), and " + unfinishedLoopReason
			return d
		}(),
	},
	pwq.ComponentDelaying: {
		unfinishedLoop(pwq.CheckDelayingMetrics, ">=v0.27.0 <v0.35.0", deadlockGuarantees, deadlockShape),
		unfinishedLoop(pwq.CheckDelayingModel, "<v0.21.0", deadlockGuarantees, deadlockShape),
		unfinishedLoop(pwq.CheckDelayingDeadline, "<v0.21.0", deadlockGuarantees, deadlockShape),
		unfinishedLoop(pwq.CheckDelayingImmediate, "<v0.21.0", deadlockGuarantees, deadlockShape),
		unfinishedLoop(pwq.CheckDelayingLifecycle, "<v0.21.0", deadlockGuarantees, deadlockShape),
		unfinishedLoop("delaying/fake-clock", "<v0.21.0", deadlockGuarantees, deadlockShape),
		unfinishedLoop("delaying/liveness", "<v0.21.0", deadlockGuarantees, deadlockShape),
		unfinishedLoop("delaying/race", "<v0.21.0", deadlockGuarantees, deadlockShape),
		unfinishedLoop("delaying/scale", "<v0.21.0", deadlockGuarantees, deadlockShape),
		unfinishedLoop(pwq.CheckDelayingExhaustive, "<v0.21.0", deadlockGuarantees, deadlockShape),
		// leak: the pinned release's declaration (the waiting loop after
		// ShutDownWithDrain) holds where this one does not.
		func() checkkit.Divergence {
			d := unfinishedLoop(pwq.CheckDelayingLeak, unfinishedLoopReleases, []string{pwq.GNoLeak}, loopLeakShape+`|^No leak: after ShutDownWithDrain returned: found unexpected goroutines:(?s:.*)delaying_queue\.go`)
			d.Reason = unfinishedLoopReason + "; and (from v0.23, as on the pinned release) ShutDownWithDrain leaves the delaying queue's waitingLoop running"
			return d
		}(),
	},
	pwq.ComponentRateLimit: {
		unfinishedLoop(pwq.CheckRateLimitingDelegate, unfinishedLoopReleases, deadlockGuarantees, deadlockShape),
		unfinishedLoop(pwq.CheckRateLimitingModel, "<v0.21.0", deadlockGuarantees, deadlockShape),
		unfinishedLoop(pwq.CheckRateLimitingExhaustive, "<v0.21.0", deadlockGuarantees, deadlockShape),
	},
}

var deadlockGuarantees = []string{checkkit.GNoPanic, checkkit.GTermination}

// DeltaFIFO's transformer on Sync deltas (v0.24 to v0.30).
const (
	syncTransformReleases = ">=v0.24.0 <v0.31.0"
	syncTransformReason   = "Resync and Replace queue Sync deltas for the objects of the known store, which were transformed when they were added, and pass them through the transformer again: a Sync delta carries an object transformed twice (t2 where t1 is due), or one the known store held untransformed comes out transformed"
	syncTransformEvidence = "a reported regression, https://github.com/kubernetes/kubernetes/issues/124337 (\"DeltaFIFO TransformFunc can result in a data race on re-sync\", kind/regression, priority/critical-urgent: \"on a re-sync ... it also invokes the transform function\" on objects already in the cache), " +
		"fixed by https://github.com/kubernetes/kubernetes/pull/124344 (\"Fix race in informer transformers\", merged 2024-04; first in v0.31.0); the TransformFunc doc of those releases says it \"sees the object before any other actor\""
	// syncTransformShape is a popped Sync delta whose object carries a
	// transform mark (/tN) the model does not give it.
	syncTransformShape = `^(Deltas|Known-objects faults|Failed call): popped \[[^\]]*Sync\([^)\]]*/t\d\)[^\]]*\], want \[`
)

func syncTransform(check string, guarantees ...string) checkkit.Divergence {
	return checkkit.Divergence{
		Check: "deltafifo/" + check, Releases: syncTransformReleases,
		Guarantees: guarantees, Shape: syncTransformShape,
		Reason:   syncTransformReason,
		Upstream: "k8s.io/client-go@v0.30.14/tools/cache/delta_fifo.go:456-475,736-760",
		Class:    checkkit.ClassDefect, Evidence: syncTransformEvidence,
	}
}

// RealFIFO's PopBatch in v0.38.0-beta.0: a batch may hold one key twice.
const (
	batchKeysReleases = ">=v0.38.0-beta.0"
	batchKeysReason   = "v0.38.0-beta.0 dropped PopBatch's rule that a batch holds no key twice (the unique set and its 'close the batch if a duplicate item is encountered', the_real_fifo.go:502-537 at v0.37.2): consecutive deltas of one key now go into one batch, which the controller's processDeltasInBatch applies in order"
	batchKeysEvidence = "a deliberate change of the pre-release: k8s.io/client-go@v0.38.0-beta.0/tools/cache/controller.go:887-897 documents processDeltasInBatch: \"The batch may contain multiple Deltas for the same object.\"; the model (spec/fifo) states the v0.37 rule, so these checks hold the pre-release to it until the release settles"
	batchKeysShape    = `^(PopBatch|Known-objects faults|Failed call): PopBatch took \[[^\]]*\], want \[[^\]]*\] \(up to 1000 consecutive deltas, not past the initial population, not past a delta that cannot be batched, no key twice\)`
)

func batchKeys(check string, guarantees ...string) checkkit.Divergence {
	return checkkit.Divergence{
		Check: "realfifo/" + check, Releases: batchKeysReleases,
		Guarantees: guarantees, Shape: batchKeysShape,
		Reason:   batchKeysReason,
		Upstream: "k8s.io/client-go@v0.38.0-beta.0/tools/cache/the_real_fifo.go:486-540",
		Class:    checkkit.ClassDesign, Evidence: batchKeysEvidence,
	}
}

// The informer's registration before v0.37: no way to learn when a
// removed handler will not be called again.
const (
	handlerDoneReleases = "<v0.37.0"
	handlerDoneReason   = "before v0.37 a handler's registration says nothing about when the handler stops being called after RemoveEventHandler or the informer's stop (no ShutdownChan): the adapter's Done channel is nil, so the checks see it open"
	handlerDoneEvidence = "fixed upstream: https://github.com/kubernetes/kubernetes/pull/139755 (\"Expose a way to wait for a controller listener to be fully shutdown\", /kind bug, merged 2026-06; first in v0.37.0) added ResourceEventHandlerRegistrationWithShutdown"
)

func handlerDone(check, guarantee, shape string) checkkit.Divergence {
	return checkkit.Divergence{
		Check: check, Releases: handlerDoneReleases, Guarantees: []string{guarantee}, Shape: shape,
		Reason:   handlerDoneReason,
		Upstream: "k8s.io/client-go@v0.36.6/tools/cache/shared_informer.go:250-270",
		Class:    checkkit.ClassDefect, Evidence: handlerDoneEvidence,
	}
}
