package cilium

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/cilium/cilium/pkg/k8s/resource"
	"github.com/cilium/cilium/pkg/k8s/utils"
	"github.com/cilium/hive/cell"
	"github.com/kverify/kverify/props/checkkit"
	"github.com/kverify/kverify/props/wire"
	"github.com/kverify/kverify/subjects/suite"
	"github.com/kverify/kverify/traces"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Wire is cilium's Resource[*corev1.ConfigMap] as a wire subject, built
// as cilium builds its resources (pkg/k8s/resource_ctors.go): resource.New
// over utils.ListerWatcherFromTyped of a typed client, here client-go's
// kubernetes clientset at the served URL (cilium's slim clientset is the
// same REST stack with smaller types), on a hive lifecycle. One
// subscription, made before Start as a cell's constructor makes it,
// handles every event at once with Done(nil) and tells the protocol: an
// Upsert of a key its view lacks as an add, of a key it holds as an update
// (old: the object it holds), a Delete as a delete; the Sync as synced.
// The client's cache is the resource's Store once synced; it reports no
// version (Resource[T] exposes none), so wire's earned-version guarantee
// has nothing to judge.
func Wire() wire.Subject {
	return wire.Subject{Name: Name, Start: func(url string, rt http.RoundTripper) (wire.Client, error) {
		quiet()
		cs, err := kubernetes.NewForConfig(&rest.Config{Host: url, Transport: rt})
		if err != nil {
			return nil, err
		}
		lc := cell.NewDefaultLifecycle(nil, 0, time.Hour)
		r := resource.New[*corev1.ConfigMap](lc, utils.ListerWatcherFromTyped(cs.CoreV1().ConfigMaps(wire.Namespace)), nil)
		c := wire.NewGoClient(Version)
		s := &wireSubscriber{c: c, r: r, view: map[string]*corev1.ConfigMap{}}
		c.Informer = wire.Informer{List: s.list, LastSyncResourceVersion: func() string { return "" }, Synced: s.synced, Tombstone: tombstone}
		c.Run(func(ctx context.Context) {
			events := r.Events(ctx)
			if err := lc.Start(discard, ctx); err == nil {
				for ev := range events {
					s.handle(ctx, ev)
				}
			}
			_ = lc.Stop(discard, context.Background())
		})
		return c, nil
	}}
}

// wireSubscriber is the one subscription of Wire's resource.
type wireSubscriber struct {
	c *wire.GoClient
	r resource.Resource[*corev1.ConfigMap]

	mu     sync.Mutex
	store  resource.Store[*corev1.ConfigMap]
	view   map[string]*corev1.ConfigMap
	isSync bool
}

func (s *wireSubscriber) handle(ctx context.Context, ev resource.Event[*corev1.ConfigMap]) {
	defer ev.Done(nil)
	k := ev.Key.String()
	switch ev.Kind {
	case resource.Sync:
		st, err := s.r.Store(ctx) // synced: returns at once
		s.mu.Lock()
		if err == nil {
			s.store = st
		}
		s.isSync = true
		s.mu.Unlock()
	case resource.Upsert:
		s.mu.Lock()
		old, held := s.view[k]
		s.view[k] = ev.Object
		s.mu.Unlock()
		if held {
			s.c.OnUpdate(old, ev.Object)
		} else {
			s.c.OnAdd(ev.Object, false)
		}
	case resource.Delete:
		s.mu.Lock()
		delete(s.view, k)
		s.mu.Unlock()
		s.c.OnDelete(ev.Object)
	}
}

func (s *wireSubscriber) synced() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.isSync
}

func (s *wireSubscriber) list() []any {
	s.mu.Lock()
	st := s.store
	s.mu.Unlock()
	if st == nil {
		return nil
	}
	var out []any
	for _, o := range st.List() {
		out = append(out, o)
	}
	return out
}

func wireEntry() suite.Entry {
	return suite.Entry{Component: wire.Component, Subject: Name,
		Checks:      func() []checkkit.Check { return wire.Checks(Wire()) },
		Divergences: WireDivergences,
		Replay:      func(t *testing.T, tr *traces.Trace) error { return wire.Replay(t, Wire(), tr) }}
}
