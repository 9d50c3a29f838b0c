// Package lasso puts github.com/rancher/lasso's controller machinery (the
// shared controllers Rancher and wrangler run on) behind the controller
// component's subject interface, and lasso's cache over HTTP behind the
// wire component's (wire.go).
//
// The whole of lasso's stack is driven, as a wrangler application builds
// it: lasso's SharedClientFactory (its REST clients, its discovery RESTMapper
// and its health check) talks to the check's model server, served over HTTP
// in memory by props/wire; lasso's SharedCacheFactory makes the informer (a
// client-go SharedIndexInformer behind lasso's deferred ListerWatcher, which
// lists and watches through lasso's client); lasso's SharedControllerFactory
// makes the SharedController, whose controller (controller.New) owns the
// work queue and the workers and whose SharedHandler calls the registered
// handlers. The adapter only registers one handler, starts the factory and
// reads the informer's store.
//
// It is a module of its own: lasso brings Prometheus into the build, which
// the main module does not need. Run its suite from this directory (go test
// ./...) or with kverify verify --subject lasso.
package lasso

import (
	"context"
	"errors"
	"fmt"
	"github.com/kverify/kverify/subjects/upstream"
	"sync"
	"time"

	pctrl "github.com/kverify/kverify/props/controller"
	"github.com/kverify/kverify/props/wire"
	"github.com/rancher/lasso/pkg/cache"
	"github.com/rancher/lasso/pkg/client"
	"github.com/rancher/lasso/pkg/controller"
	lassolog "github.com/rancher/lasso/pkg/log"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// Name is the subject's name in kverify's registry.
const Name = "lasso"

// Version is the lasso version under test: the newest the Go module proxy
// resolves.
const Version = "github.com/rancher/lasso@v0.2.10"

// configMaps is the resource props/wire serves: the model server's objects
// as ConfigMaps in namespace default.
var configMaps = corev1.SchemeGroupVersion.WithResource(wire.Resource)

// Controller is lasso's shared controller as a subject of the controller
// component. New builds, for each Setup, a wrangler application's stack over
// the check's server:
//
//   - client.NewSharedClientFactory(&rest.Config{Host, Transport:
//     wire.Transport(wire.NewServer(Setup.Server))}, {Scheme: core/v1}):
//     lasso's REST clients and its discovery RESTMapper (mapper.New);
//   - cache.NewSharedCachedFactory(clients, {DefaultDisableWatchList:
//     !Setup.WatchList}): lasso's caches (a client-go SharedIndexInformer
//     behind lasso's deferredListWatcher, default resync 600 minutes) and
//     its health check;
//   - controller.NewSharedControllerFactory(caches, {DefaultRateLimiter:
//     client-go's NewTypedItemExponentialFailureRateLimiter(BaseDelay,
//     MaxDelay), DefaultWorkers: Setup.Workers}) and its ForResourceKind(v1
//     configmaps, "ConfigMap", namespaced): the SharedController.
//
// Run registers one handler with SharedController.RegisterHandler(ctx, ...),
// calls SharedControllerFactory.Start(ctx, Workers), as wrangler's
// start.All does, and waits for ctx. The handler calls Setup.Reconcile with
// the key lasso hands it and a reader of the informer's store (the object
// lasso hands the handler is that store's, read just before); an error is
// returned to lasso (which retries with AddRateLimited), a RequeueAfter is
// the SharedController's EnqueueAfter, as wrangler's handlers requeue.
//
// Setup.Notified is called by lasso's own event handler: the cache factory
// the controller factory is given is lasso's, wrapped so that the informer
// it hands controller.New wraps each handler registered on it with a call
// of Notified (the object as a *metav1.PartialObjectMetadata; a tombstone's
// Obj too) before lasso's handleObject enqueues the key.
//
// New rejects a nil Reconcile and a negative number of workers itself, as
// client-go's sample composition (subjects/upstream) does: lasso takes both
// (RegisterHandler appends a nil handler, whose first call panics at
// sharedhandler.go:98; SharedControllerFactory.Start with workers <= 0 uses
// DefaultWorkers, sharedcontrollerfactory.go:244-247, which is 5 when 0,
// :104-106, and taken as given when negative, and controller.run starts
// that many workers, none for a negative number, controller.go:160).
// Setup.Source (benchmarks) is refused: lasso lists only through its REST
// client.
//
// lasso does not recover a handler's panic: its worker runs under
// wait.Until's HandleCrash (controller.go:161), which re-panics while
// utilruntime.ReallyCrash is true, so ContainPanics turns ReallyCrash off
// around a check, as subjects/upstream does.
func Controller() pctrl.Subject {
	return pctrl.Subject{New: newController, BadInput: pctrl.BadInputOf(newController), ContainPanics: upstream.ContainPanics}
}

func newController(s pctrl.Setup) (pctrl.Controller, error) {
	switch {
	case s.Source != nil:
		return nil, errors.New("lasso controller: lasso lists through its REST client only, not a Source")
	case s.Server == nil:
		return nil, errors.New("lasso controller: no server")
	case s.Reconcile == nil:
		return nil, errors.New("lasso controller: no reconciler")
	case s.Workers < 0:
		return nil, fmt.Errorf("lasso controller: %d workers", s.Workers)
	}
	return build(s, variant{})
}

// variant varies the stack build makes; the zero value is the subject's.
// BenchmarkController sets rest (lasso's client without client-go's default
// rate limit, as wrangler applications configure it), the adapter's
// mutants (mutants_test.go) hook.
type variant struct {
	// rest adjusts the REST config before lasso's client factory takes it.
	rest func(*rest.Config)
	// hook wraps each handler registered on the informer so that it calls
	// notified: hooked when nil (notified, then the handler).
	hook func(h toolscache.ResourceEventHandler, notified func(obj any, deleted bool)) toolscache.ResourceEventHandler
}

// build makes lasso's stack for s, as Controller documents, without
// checking s.
func build(s pctrl.Setup, v variant) (*lassoController, error) {
	if s.Server == nil {
		return nil, errors.New("lasso controller: no server")
	}
	quiet()
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	cfg := &rest.Config{Host: "http://kverify.model", Transport: wire.Transport(wire.NewServer(s.Server))}
	if v.rest != nil {
		v.rest(cfg)
	}
	clients, err := client.NewSharedClientFactory(cfg, &client.SharedClientFactoryOptions{Scheme: scheme})
	if err != nil {
		return nil, err
	}
	caches := cache.NewSharedCachedFactory(clients, &cache.SharedCacheFactoryOptions{DefaultDisableWatchList: !s.WatchList})
	hooks := hookedCaches{SharedCacheFactory: caches}
	if s.Notified != nil {
		hook := v.hook
		if hook == nil {
			hook = func(h toolscache.ResourceEventHandler, notified func(any, bool)) toolscache.ResourceEventHandler {
				return hooked{h, notified}
			}
		}
		hooks.wrap = func(h toolscache.ResourceEventHandler) toolscache.ResourceEventHandler { return hook(h, s.Notified) }
	}
	factory := controller.NewSharedControllerFactory(hooks,
		&controller.SharedControllerFactoryOptions{
			DefaultRateLimiter: workqueue.NewTypedItemExponentialFailureRateLimiter[any](s.BaseDelay, s.MaxDelay),
			DefaultWorkers:     s.Workers,
		})
	sc := factory.ForResourceKind(configMaps, "ConfigMap", true)
	// Informer makes the controller (controller.New, which registers its
	// event handler on the hooked informer), as RegisterHandler would.
	return &lassoController{setup: s, factory: factory, sc: sc, store: sc.Informer().GetStore()}, nil
}

type lassoController struct {
	setup   pctrl.Setup
	factory controller.SharedControllerFactory
	sc      controller.SharedController
	// store is the informer's store, which lasso's syncHandler reads.
	store toolscache.Store
}

// Run registers the handler and starts the factory, as wrangler's
// start.All(ctx, workers, factory) does, then waits for ctx. lasso starts
// everything on goroutines of its own and offers nothing to wait for them
// with: its informers (sharedinformerfactory.go:104,121: go informer.Run),
// its controller's run and workers (controller.go:161,188), so Run returns
// as soon as ctx has ended.
func (c *lassoController) Run(ctx context.Context) {
	c.sc.RegisterHandler(ctx, "kverify", controller.SharedControllerHandlerFunc(
		func(key string, _ runtime.Object) (runtime.Object, error) {
			res, err := c.setup.Reconcile(ctx, key, c)
			if err != nil {
				return nil, err
			}
			if res.RequeueAfter > 0 {
				c.requeue(key, res.RequeueAfter)
			}
			return nil, nil
		}))
	_ = c.factory.Start(ctx, c.setup.Workers)
	<-ctx.Done()
}

// requeue is a RequeueAfter: the SharedController's EnqueueAfter.
func (c *lassoController) requeue(key string, after time.Duration) {
	ns, name, _ := toolscache.SplitMetaNamespaceKey(key)
	c.sc.EnqueueAfter(ns, name, after)
}

// Get reads the controller's informer's store (the store lasso's
// syncHandler reads, controller.go:243), as metadata.
func (c *lassoController) Get(key string) (any, bool, error) {
	obj, ok, err := c.store.GetByKey(key)
	if err != nil || !ok {
		return nil, ok, err
	}
	return asMeta(obj), true, nil
}

// asMeta is a cached object as the check reads it: its metadata.
func asMeta(obj any) any {
	if m, err := metaOf(obj); err == nil {
		return m
	}
	return obj
}

func metaOf(obj any) (*metav1.PartialObjectMetadata, error) {
	cm, ok := obj.(*corev1.ConfigMap)
	if !ok {
		return nil, fmt.Errorf("%T is not a ConfigMap", obj)
	}
	return &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: *cm.ObjectMeta.DeepCopy()}, nil
}

// hookedCaches is lasso's SharedCacheFactory whose informers call
// Setup.Notified in every handler registered on them, before the handler:
// wrap wraps each (nil: no Notified, no hook).
type hookedCaches struct {
	cache.SharedCacheFactory
	wrap func(toolscache.ResourceEventHandler) toolscache.ResourceEventHandler
}

func (h hookedCaches) ForResourceKind(gvr schema.GroupVersionResource, kind string, namespaced bool) (toolscache.SharedIndexInformer, error) {
	return h.hook(h.SharedCacheFactory.ForResourceKind(gvr, kind, namespaced))
}

func (h hookedCaches) ForKind(gvk schema.GroupVersionKind) (toolscache.SharedIndexInformer, error) {
	return h.hook(h.SharedCacheFactory.ForKind(gvk))
}

func (h hookedCaches) ForResource(gvr schema.GroupVersionResource, namespaced bool) (toolscache.SharedIndexInformer, error) {
	return h.hook(h.SharedCacheFactory.ForResource(gvr, namespaced))
}

func (h hookedCaches) ForObject(obj runtime.Object) (toolscache.SharedIndexInformer, error) {
	return h.hook(h.SharedCacheFactory.ForObject(obj))
}

// hook wraps lasso's informer so that its handlers are hooked.
func (h hookedCaches) hook(inf toolscache.SharedIndexInformer, err error) (toolscache.SharedIndexInformer, error) {
	if err != nil || h.wrap == nil {
		return inf, err
	}
	return hookedInformer{SharedIndexInformer: inf, hook: h.wrap}, nil
}

// hookedInformer is lasso's cache with its handlers hooked.
type hookedInformer struct {
	toolscache.SharedIndexInformer
	hook func(toolscache.ResourceEventHandler) toolscache.ResourceEventHandler
}

func (i hookedInformer) AddEventHandler(h toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error) {
	return i.SharedIndexInformer.AddEventHandler(i.hook(h))
}

func (i hookedInformer) AddEventHandlerWithResyncPeriod(h toolscache.ResourceEventHandler, d time.Duration) (toolscache.ResourceEventHandlerRegistration, error) {
	return i.SharedIndexInformer.AddEventHandlerWithResyncPeriod(i.hook(h), d)
}

func (i hookedInformer) AddEventHandlerWithOptions(h toolscache.ResourceEventHandler, o toolscache.HandlerOptions) (toolscache.ResourceEventHandlerRegistration, error) {
	return i.SharedIndexInformer.AddEventHandlerWithOptions(i.hook(h), o)
}

// hooked calls notified, in the handler's goroutine, then the handler.
type hooked struct {
	h        toolscache.ResourceEventHandler
	notified func(obj any, deleted bool)
}

func (h hooked) OnAdd(obj any, initial bool) {
	h.notified(asMeta(obj), false)
	h.h.OnAdd(obj, initial)
}

func (h hooked) OnUpdate(old, obj any) {
	h.notified(asMeta(obj), false)
	h.h.OnUpdate(old, obj)
}

func (h hooked) OnDelete(obj any) {
	h.notified(deletedMeta(obj), true)
	h.h.OnDelete(obj)
}

// deletedMeta is a deleted object as the check is told of it: a tombstone
// as a tombstone (its Obj as metadata).
func deletedMeta(obj any) any {
	if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		return toolscache.DeletedFinalStateUnknown{Key: t.Key, Obj: asMeta(t.Obj)}
	}
	return asMeta(obj)
}

var quietOnce sync.Once

// quiet silences lasso's logging (log.Printf of every handler error,
// lasso's pkg/log, which it exports for applications to replace) and
// removes apimachinery's HandleError throttle, once per process, as the
// other subjects do: the throttle sleeps minPeriod minus the time since the
// last error, measured from a time.Now() taken at package init
// (k8s.io/apimachinery@v0.37.2/pkg/util/runtime/runtime.go:152-158), which
// inside a synctest bubble (its clock starts in 2000) is a sleep of decades
// at the informer's first error. Both are logging policy, not controller
// behaviour.
func quiet() {
	quietOnce.Do(func() {
		nop := func(string, ...any) {}
		lassolog.Infof, lassolog.Errorf, lassolog.Debugf = nop, nop, nop
		if len(utilruntime.ErrorHandlers) > 1 {
			utilruntime.ErrorHandlers = utilruntime.ErrorHandlers[:1]
		}
	})
}
