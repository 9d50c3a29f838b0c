package upstream

import (
	"context"
	"strconv"
	"sync"

	"github.com/kverify/kverify/props"
	pinf "github.com/kverify/kverify/props/informer"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	fcache "k8s.io/client-go/tools/cache/testing"
)

// Informer returns client-go's shared index informer as a subject: a Pod
// informer fed by fcache.FakeControllerSource, observed through the public
// handler registration API only. Objects are Pods named after the suite's
// keys. client-go does not expose its listener's pump or backlog, so the
// white-box checks are skipped for it.
func Informer() pinf.Subject {
	return pinf.Subject{New: func() pinf.FanOut { return newUpstreamInformer() }}
}

// InformerDivergences are client-go's known differences from the informer
// contract. The suite's checks hold for client-go v0.37.2: none is declared.
var InformerDivergences = []props.Divergence{}

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

func newUpstreamInformer() *upstreamInformer {
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
		informer: cache.NewSharedIndexInformer(sourceLW{src}, &v1.Pod{}, 0, cache.Indexers{}),
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
	reg, err := u.informer.AddEventHandler(cache.ResourceEventHandlerDetailedFuncs{
		AddFunc:    func(obj any, isInInitialList bool) { h.OnAdd(podName(obj), isInInitialList) },
		UpdateFunc: func(oldObj, newObj any) { h.OnUpdate(podName(oldObj), podName(newObj)) },
		DeleteFunc: func(obj any) { h.OnDelete(podName(obj)) },
	})
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
		u.informer.RunWithContext(ctx)
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
