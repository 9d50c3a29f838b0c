package lasso

import (
	"github.com/kverify/kverify/props/checkkit"
	pctrl "github.com/kverify/kverify/props/controller"
)

// The sources the declarations cite.
const (
	controllerGo    = Version + "/pkg/controller/controller.go"
	sharedHandlerGo = Version + "/pkg/controller/sharedhandler.go"
	factoryGo       = Version + "/pkg/cache/sharedinformerfactory.go"
	healthcheckGo   = Version + "/pkg/cache/healthcheck.go"
	cacheGo         = Version + "/pkg/cache/cache.go"
	clientGo        = "k8s.io/client-go@v0.37.2"
)

// deadlockShape is a synctest bubble that ended with a goroutine of the
// subject still blocked (testing/synctest's deadlock panic): as a fixed
// scenario reports it, and as a random check reports it when rapid, whose
// case it ended, cannot make it happen again while shrinking (the
// goroutine's wait is a matter of scheduling).
const deadlockShape = `^(No panic|Termination)(: the subject panicked( or deadlocked)?( during the check)?)?: (.*: )?deadlock: main bubble goroutine has exited but blocked goroutines remain` +
	`|^Termination: \[rapid\] flaky test, can not reproduce a failure[\s\S]*Original traceback \(deadlock: main bubble goroutine has exited but blocked goroutines remain\)`

// healthLoop is lasso's health wait after a failed LIST, which never looks
// at its context: a cache stopped while its LIST is in flight leaves a
// goroutine that sleeps 15s and pings, forever, holding the factory's
// health-check lock. In a synctest bubble it outlives the check (the
// bubble's deadlock panic).
var healthLoop = checkkit.Divergence{
	Guarantees: []string{checkkit.GNoPanic, checkkit.GTermination},
	Shape:      deadlockShape,
	Reason: "a cache whose LIST fails calls the factory's health check with the cache's context (cache.go:141-144), and healthcheck.pingUntilGood loops ping, time.Sleep(15s) until a ping succeeds, never looking at the context (healthcheck.go:64-74): " +
		"a LIST that fails because the cache is being stopped (its context, cancelled on stop, cache.go:125-129, is the one the ping derives from, so every ping fails at once) never returns: the reflector's list goroutine stays in the loop forever, holding the factory's healthcheck.lock (:52-56), so every later failed LIST of any cache of the factory blocks on the lock for good; " +
		"controller/stop meets it by cancelling the controller while the server holds its first LIST",
	Upstream: healthcheckGo + ":52-74; " + cacheGo + ":124-145",
	Class:    checkkit.ClassDefect,
	Evidence: "lasso hands the stop context to the health wait on purpose (cache.go:125-129 makes a context cancelled on stopCh for the list, watch and waitHealthy; healthcheck.go:21-27 derives each ping's timeout from it), and deferredCache.Run is a client-go SharedInformer's Run (cache.go:154-157), which \"starts and runs the shared informer, returning after it stops. The informer will be stopped when stopCh is closed\" (k8s.io/client-go@v0.37.2/tools/cache/shared_informer.go:195-199); " +
		"the loop's only exit is a successful ping (healthcheck.go:64-74); reproducer traces/findings/lasso/cache-stop-during-list-leaks-health-loop (a goroutine still in pingUntilGood 16s after the cancel); no upstream issue found",
}

// runReturnsEarly is the stop scenario's second half, which the health
// loop keeps the check from reaching on v0.2.10 (measured on its own: Run
// returned with 2 of 2 reconciles in flight).
var runReturnsEarly = checkkit.Divergence{
	Guarantees: []string{pctrl.GStop},
	Shape:      `: Run returned with \d+ reconciles in flight$`,
	Reason: "lasso starts everything on goroutines of its own and gives nothing to wait for them with: SharedControllerFactory.Start returns once the workers are started (controller.go:188 go c.run), the workers run under go wait.Until (controller.go:160-161) and the informers under go informer.Run (sharedinformerfactory.go:104,121); " +
		"when the context ends, controller.run shuts the queue down and returns without waiting for its workers (controller.go:152-168), so a Run built on lasso (Start, then <-ctx.Done(), as wrangler's start.All and Rancher do) returns with reconciles in flight",
	Upstream: controllerGo + ":152-168,188; " + factoryGo + ":104,121",
	Class:    checkkit.ClassDesign,
	Evidence: "the API has no Stop, Wait or done channel: Controller and SharedControllerFactory (controller.go:47-53; sharedcontrollerfactory.go:16-23) offer Start alone, and SharedHandler drops its handlers when the context ends (sharedhandler.go:65-77) instead of waiting for the ones running; " +
		"client-go's sample composition is the same (subject upstream, controller/stop)",
}

// notifiedAfterStop is runReturnsEarly seen from the informer: a handler
// call in progress when Run returns completes after it.
var notifiedAfterStop = checkkit.Divergence{
	Guarantees: []string{pctrl.GNothingAfter},
	Shape:      `: a (notification|reconcile) of \S+ (started )?after the controller stopped`,
	Reason:     "the same as controller/stop's: Run cannot wait for the goroutines lasso started (the informer's, sharedinformerfactory.go:104,121: go informer.Run(ctx.Done()); the workers', controller.go:160-161), so a handler call in progress when the context ends (a slow handler) finishes, and notifies, after Run returned",
	Upstream:   factoryGo + ":104,121; " + controllerGo + ":160-161,188",
	Class:      checkkit.ClassDesign,
	Evidence:   runReturnsEarly.Evidence,
}

// ControllerDivergences are lasso's declared differences from the
// controller component's guarantees.
var ControllerDivergences = []checkkit.Divergence{
	{Check: pctrl.CheckSync, Guarantees: []string{pctrl.GSyncFirst}, Shape: `: a reconcile of \S+ started before the handler was given .* of the first list`,
		Reason: "the controller starts its workers once the informer's HasSynced holds (controller.go:183 cache.WaitForCacheSync(ctx.Done(), c.informer.HasSynced); the factory waits the same way first, sharedinformerfactory.go:134-152), " +
			"which holds once the informer's store has the first list, not once the controller's handler has been given it: controller.New throws away the registration AddEventHandler returns (controller.go:91-104), so with a slow handler the workers reconcile the first keys while later ones are still being delivered",
		Upstream: controllerGo + ":91-104,183; " + factoryGo + ":134-152",
		Class:    checkkit.ClassDesign,
		Evidence: clientGo + "/tools/cache/shared_informer.go:203-210 documents it: \"Note that this doesn't tell you if an individual handler is synced!! For that, please call HasSynced on the handle returned by AddEventHandler\"; lasso waits on the informer's, as client-go's sample controller does"},
	{Check: pctrl.CheckIsolation, Guarantees: []string{pctrl.GIsolation}, Shape: `: with o000's reconcile held: default/o001 reconciled 0 times after its panic, want once more$`,
		Reason: "a panicking handler crashes the process by default: lasso recovers nothing (processSingleItem, controller.go:215-240; SharedHandler.OnChange, sharedhandler.go:80-127) and leaves the panic to the HandleCrash of wait.Until around each worker (controller.go:161), which re-panics while utilruntime.ReallyCrash is true; " +
			"with ReallyCrash false (as the check runs it, to stay in process) the panic unwinds processSingleItem past AddRateLimited: its deferred Done runs (controller.go:221), so the key is dropped until its object changes again, and the worker sleeps wait.Until's second before it takes the next key",
		Upstream: controllerGo + ":152,161,215-240; " + sharedHandlerGo + ":80-127",
		Class:    checkkit.ClassDesign,
		Evidence: "lasso opts into client-go's crash-on-panic policy (controller.go:152 defer utilruntime.HandleCrash(); apimachinery util/runtime/runtime.go:34-38: \"ReallyCrash controls the behavior of HandleCrash and defaults to true\"), as client-go's sample controller does; " +
			"controller-runtime recovers reconcile panics into errors and retries (RecoverPanic, default true); a panic under lasso's processSingleItem reaching HandleCrash in Rancher: https://github.com/rancher/rancher/issues/28291 (closed; fixed in Rancher, https://github.com/rancher/rancher/pull/28294)"},
	with(healthLoop.Or(runReturnsEarly), pctrl.CheckStop),
	func() checkkit.Divergence {
		d := with(notifiedAfterStop.Or(healthLoop), pctrl.CheckConverge)
		d.Intermittent = true
		return d
	}(),
}

// with returns d declared for check.
func with(d checkkit.Divergence, check string) checkkit.Divergence {
	d.Check = check
	return d
}
