package realapi

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/kverify/kverify/impl/informer"
	"github.com/kverify/kverify/impl/reflector"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
)

// informerRunner is an informer under test with one handler registered.
type informerRunner interface {
	Run(ctx context.Context)
	list() []any
	// handlerSynced is the handler's registration's HasSynced: the
	// informer synced and the handler has had every initial add.
	handlerSynced() bool
}

// informerImpls build our informer (impl/informer: our reflector, RealFIFO,
// store, processor) and client-go's SharedIndexInformer over lw, with h
// registered before Run.
var informerImpls = []struct {
	name string
	new  func(t *testing.T, lw *ListerWatcher, watchList bool, h *viewHandler) informerRunner
}{
	{"ours", func(t *testing.T, lw *ListerWatcher, watchList bool, h *viewHandler) informerRunner {
		ro := reflector.Options{Name: "ours", ExpectedType: &corev1.ConfigMap{}}
		if !watchList {
			ro.WatchList = reflector.WatchListOff
		}
		i, err := informer.NewInformer(lw, informer.InformerOptions{Reflector: ro})
		if err != nil {
			t.Fatal(err)
		}
		r, err := i.AddEventHandler(h)
		if err != nil {
			t.Fatal(err)
		}
		return oursInformer{i, r}
	}},
	{"upstream", func(t *testing.T, lw *ListerWatcher, watchList bool, h *viewHandler) informerRunner {
		var l cache.ListerWatcher = lw
		if !watchList {
			l = noWatchList{lw}
		}
		i := cache.NewSharedIndexInformer(l, &corev1.ConfigMap{}, 0, cache.Indexers{})
		r, err := i.AddEventHandler(h)
		if err != nil {
			t.Fatal(err)
		}
		return upstreamInformer{i, r}
	}},
}

type oursInformer struct {
	*informer.Informer
	r *informer.Registration
}

func (o oursInformer) list() []any         { return o.List() }
func (o oursInformer) handlerSynced() bool { return o.r.HasSynced() }

type upstreamInformer struct {
	cache.SharedIndexInformer
	r cache.ResourceEventHandlerRegistration
}

func (u upstreamInformer) Run(ctx context.Context) { u.RunWithContext(ctx) }
func (u upstreamInformer) list() []any             { return u.GetStore().List() }
func (u upstreamInformer) handlerSynced() bool     { return u.r.HasSynced() }

// viewHandler keeps the view a controller builds from the notifications:
// key -> version. It records every notification that does not fit the
// view: an add of a key it holds, an update whose old object is not the
// version it holds, a delete of a key it does not hold.
type viewHandler struct {
	mu      sync.Mutex
	view    map[string]string
	misfits []string
}

func newViewHandler() *viewHandler { return &viewHandler{view: map[string]string{}} }

func cmKey(obj any) (string, string) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	cm, ok := obj.(*corev1.ConfigMap)
	if !ok {
		return fmt.Sprintf("%T", obj), ""
	}
	return cm.Namespace + "/" + cm.Name, cm.ResourceVersion
}

func (h *viewHandler) OnAdd(obj any, _ bool) {
	k, rv := cmKey(obj)
	h.mu.Lock()
	defer h.mu.Unlock()
	if old, ok := h.view[k]; ok {
		h.misfits = append(h.misfits, fmt.Sprintf("add of %s@%s, held @%s", k, rv, old))
	}
	h.view[k] = rv
}

func (h *viewHandler) OnUpdate(oldObj, newObj any) {
	k, oldRV := cmKey(oldObj)
	_, rv := cmKey(newObj)
	h.mu.Lock()
	defer h.mu.Unlock()
	if held, ok := h.view[k]; !ok || held != oldRV {
		h.misfits = append(h.misfits, fmt.Sprintf("update of %s from @%s to @%s, held @%s (%v)", k, oldRV, rv, held, ok))
	}
	h.view[k] = rv
}

func (h *viewHandler) OnDelete(obj any) {
	k, _ := cmKey(obj)
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.view[k]; !ok {
		h.misfits = append(h.misfits, "delete of "+k+", not held")
	}
	delete(h.view, k)
}

// fits reports whether every notification so far fitted the view, and
// fails t if not.
func (h *viewHandler) fits(t *testing.T) bool {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.misfits) > 0 {
		t.Errorf("notifications: %d do not fit the view built from the earlier ones, e.g. %v", len(h.misfits), h.misfits[:min(5, len(h.misfits))])
		h.misfits = nil
		return false
	}
	return true
}

func (h *viewHandler) state() map[string]string {
	h.mu.Lock()
	defer h.mu.Unlock()
	m := make(map[string]string, len(h.view))
	for k, v := range h.view {
		m[k] = v
	}
	return m
}

// storeState is the key -> version of an informer's store.
func storeState(objs []any) map[string]string {
	m := map[string]string{}
	for _, o := range objs {
		k, rv := cmKey(o)
		m[k] = rv
	}
	return m
}

// TestInformer: our informer and client-go's, streaming and listing, with
// two writers while they sync and watch. Properties: convergence of the
// informer's store and of the view built from the handler's notifications
// to the server's state; notifications that fit that view (no add of a
// held key, no update from a version not held, no delete of a key not
// held); synced; no watch left open after Run returns.
func TestInformer(t *testing.T) {
	for _, im := range informerImpls {
		for _, watchList := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/watchlist=%t", im.name, watchList), func(t *testing.T) {
				v := newEnv(t, true)
				ctx, cancel := context.WithTimeout(context.Background(), timeout)
				defer cancel()
				ws := v.writers(ctx, 4, 2, 100)
				h := newViewHandler()
				inf := im.new(t, v.lw, watchList, h)
				runCtx, stop := context.WithCancel(context.Background())
				done := make(chan struct{})
				go func() {
					defer close(done)
					inf.Run(runCtx)
				}()
				wait := writeConcurrently(ctx, v.stack, ws, 200, 150)
				if err := wait(); err != nil {
					t.Fatal(err)
				}
				defer func() { stop(); <-done }()
				v.convergeTo("the informer's store", func() map[string]string { return storeState(inf.list()) }, nil)
				if h.fits(t) {
					v.convergeTo("the handler's view", h.state, nil)
				}
				if !inf.handlerSynced() {
					t.Error("synced: the informer converged but its handler's registration does not report HasSynced")
				}
				stop()
				<-done
				h.fits(t)
				v.closed()
			})
		}
	}
}
