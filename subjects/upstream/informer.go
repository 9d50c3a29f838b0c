//go:build !clientgo_before_v0_27

package upstream

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/kverify/kverify/props/checkkit"
	pinf "github.com/kverify/kverify/props/informer"
	prefl "github.com/kverify/kverify/props/reflector"
	"github.com/kverify/kverify/subjects/suite"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	fcache "k8s.io/client-go/tools/cache/testing"
)

// Informer returns client-go's shared index informer as a subject: a Pod
// informer fed by fcache.FakeControllerSource, observed through the public
// handler registration API only. Objects are Pods named after the suite's
// keys. client-go does not expose its listener's pump or backlog, so the
// white-box checks are skipped for it. Resync goes through
// NewSharedIndexInformer's resync period and AddEventHandlerWithResyncPeriod
// (the reflector's resync timer runs on the bubble's fake clock); the
// slow-handler warning is read from klog (informer_caps.go); handler panics
// are contained with utilruntime.ReallyCrash false for the fault check.
func Informer() pinf.Subject {
	return pinf.Subject{
		New:           func() pinf.FanOut { return newUpstreamInformer(0) },
		NewResync:     func(check time.Duration) pinf.ResyncFanOut { return newUpstreamInformer(check) },
		Slow:          newSlowInformer,
		ContainPanics: ContainPanics,
		SourceRetains: "the subject's events come from client-go's FakeControllerSource, which keeps every change (with its object) for watch replay (" + Version + "/tools/cache/testing/fake_controller_source.go:62,150)",
	}
}

// InformerDivergences are client-go's known differences from the informer
// contract (impl/informer's package doc states ours and why).
var InformerDivergences = append([]checkkit.Divergence{
	{Check: pinf.CheckSlowWarning,
		Guarantees: []string{pinf.GSlowWarning},
		Shape:      `^Slow-handler warning: the call that started with \d+ notifications pending and took \S+ (warned \(reported: \d+ pending, took 100ms\); want no warning|did not warn)`,
		Reason: "client-go traces a handler call that took 100ms or more (utiltrace LogIfLong compares with >=, k8s.io/utils/trace/trace.go:262), not only longer than 100ms; " +
			"its backlog count is read by the handler goroutine racing with the pump's refill (shared_informer.go:1496 vs :1458), so at a call's start it is the backlog or one less, at random; " +
			"and the trace is logged only when klog's verbosity is 2 or more (trace.go:195)",
		Upstream: "tools/cache/shared_informer.go:1496-1503",
		Class:    checkkit.ClassDesign,
		Evidence: "the warning is a best-effort debug trace, not a contract: " + UtilsVersion + "/trace/trace.go:195 logs a trace only at klog V(2) and trace.go:262 compares its duration with >= the threshold; " +
			"slow-handler tracing was added to the listener as a logging aid (https://github.com/kubernetes/kubernetes/pull/137358, merged, release note NONE)"},
	{Check: pinf.CheckFaults,
		Guarantees: []string{pinf.GPanicContainment},
		Shape:      `^Panic containment: (after a panic in its initial add, the handler received \[[^\]]*\] at once; want all \d+ initial adds at the same instant|a handler whose initial add panicked has HasSynced\(\) false)`,
		Reason: "with utilruntime.ReallyCrash true (the default) a handler panic crashes the process (HandleCrash re-panics, apimachinery util/runtime/runtime.go:114); " +
			"with it false, the listener sleeps 1s after the panicking call before the next notification instead of delivering it at once, " +
			"and a panicking initial-list OnAdd skips syncTracker.Finished, so the handler never syncs (kubernetes#129024, shared_informer_test.go:1307)",
		Upstream: "tools/cache/shared_informer.go:1488-1491,1506-1512",
		Class:    checkkit.ClassDefect,
		Evidence: "the 1s pause is documented (" + Version + "/tools/cache/shared_informer.go:1480-1485: \"the offending item will be skipped!, and after a short delay (one second) the next notification will be attempted\"), " +
			"but a handler whose initial-list OnAdd panicked never reporting HasSynced is an acknowledged bug: https://github.com/kubernetes/kubernetes/issues/129024 (open, kind/bug; fix PR #131531 closed unmerged)"},
}, informerOldReleases...)

// sourceLW is the fake source as a ListerWatcher that says it does not
// speak WatchList (an initial list streamed over a watch): the fake's Watch
// cannot parse the empty resource version such a request carries, so the
// reflector would fail that request and fall back to LIST on every run
// (reflector.go:361-367 documents this opt-out for unit tests).
type sourceLW struct{ *fcache.FakeControllerSource }

func (sourceLW) IsWatchListSemanticsUnSupported() bool { return true }

// seedKey names the object that moves the fake source past version 0.
const seedKey = "kverify-seed"

type upstreamInformer struct {
	source   *fcache.FakeControllerSource
	informer cache.SharedIndexInformer

	mu       sync.Mutex
	versions map[string]int // key -> updates so far, to make each update a real change
	started  bool
	stopped  bool
	cancel   context.CancelFunc
	runDone  chan struct{}
}

// newUpstreamInformer makes the informer with the given resync period
// (client-go's resyncCheckPeriod and default handler period).
func newUpstreamInformer(resync time.Duration) *upstreamInformer {
	src := fcache.NewFakeControllerSource()
	// Start the fake's change log past resource version 0. The fake cannot
	// serve a watch from a version older than its oldest change
	// (fake_controller_source.go:243-283), so a LIST at version 0 followed
	// by an event before the WATCH makes the reflector relist after a
	// backoff of about a second. A real API server has no such gap; the
	// seed object is added and deleted before the informer exists.
	src.Add(pod(seedKey, 0))
	src.Delete(pod(seedKey, 0))
	return &upstreamInformer{
		source:   src,
		informer: cache.NewSharedIndexInformer(sourceLW{src}, &v1.Pod{}, resync, cache.Indexers{}),
		versions: map[string]int{},
	}
}

// pod is a fresh object each time: the fake source and the informer keep
// the pointers they are given.
func pod(key string, version int) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{
		Name:   key,
		Labels: map[string]string{"kverify/version": strconv.Itoa(version)},
	}}
}

func (u *upstreamInformer) AddHandler(h pinf.Handler) (pinf.Registration, error) {
	return register(u.informer.AddEventHandler(handlerFuncs(h)))
}

// AddHandlerWithResync is AddEventHandlerWithResyncPeriod.
func (u *upstreamInformer) AddHandlerWithResync(h pinf.Handler, period time.Duration) (pinf.Registration, error) {
	return register(u.informer.AddEventHandlerWithResyncPeriod(handlerFuncs(h), period))
}

func handlerFuncs(h pinf.Handler) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerDetailedFuncs{
		AddFunc:    func(obj any, isInInitialList bool) { h.OnAdd(podName(obj), isInInitialList) },
		UpdateFunc: func(oldObj, newObj any) { h.OnUpdate(podName(oldObj), podName(newObj)) },
		DeleteFunc: func(obj any) { h.OnDelete(podName(obj)) },
	}
}

func register(reg cache.ResourceEventHandlerRegistration, err error) (pinf.Registration, error) {
	if err != nil {
		return nil, err
	}
	return upstreamRegistration{reg}, nil
}

func podName(obj any) string {
	switch o := obj.(type) {
	case *v1.Pod:
		return o.Name
	case cache.DeletedFinalStateUnknown:
		if p, ok := o.Obj.(*v1.Pod); ok {
			return p.Name
		}
		_, name, _ := cache.SplitMetaNamespaceKey(o.Key)
		return name
	}
	return ""
}

func (u *upstreamInformer) RemoveHandler(r pinf.Registration) error {
	reg, ok := r.(upstreamRegistration)
	if !ok {
		return nil
	}
	return u.informer.RemoveEventHandler(reg.ResourceEventHandlerRegistration)
}

func (u *upstreamInformer) Emit(kind pinf.Kind, key string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.stopped {
		return // the fake source stays locked after Shutdown
	}
	switch kind {
	case pinf.Add:
		u.versions[key] = 0
		u.source.Add(pod(key, 0))
	case pinf.Update:
		u.versions[key]++
		u.source.Modify(pod(key, u.versions[key]))
	case pinf.Delete:
		v := u.versions[key]
		delete(u.versions, key)
		u.source.Delete(pod(key, v))
	}
}

func (u *upstreamInformer) Start() {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.started || u.stopped {
		return
	}
	u.started = true
	ctx, cancel := context.WithCancel(context.Background())
	u.cancel, u.runDone = cancel, make(chan struct{})
	go func() {
		defer close(u.runDone)
		runInformer(ctx, u.informer)
	}()
}

// Stop stops the informer, waits for RunWithContext to return (it waits for
// every listener goroutine, shared_informer.go:1266-1302), then shuts the
// fake source's broadcaster down.
func (u *upstreamInformer) Stop() {
	u.mu.Lock()
	if u.stopped {
		u.mu.Unlock()
		return
	}
	u.stopped = true
	cancel, done := u.cancel, u.runDone
	u.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
	u.source.Shutdown()
}

// upstreamRegistration adds Done (the listener's ShutdownChan) to
// client-go's registration.
type upstreamRegistration struct {
	cache.ResourceEventHandlerRegistration
}

func (r upstreamRegistration) Done() <-chan struct{} {
	if s, ok := r.ResourceEventHandlerRegistration.(interface{ ShutdownChan() <-chan struct{} }); ok {
		return s.ShutdownChan()
	}
	return nil
}

// informerEntries binds the shared informer (v0.27 and later, where
// kverify's model API server builds: see before_v0_27.go): the assembled
// informer's checks first, then the fan-out's.
func informerEntries() []suite.Entry {
	return []suite.Entry{entry(pinf.Component, func() []checkkit.Check {
		return append(prefl.InformerChecks(SharedInformer()), pinf.Checks(Informer())...)
	}, InformerDivergences, nil)}
}
