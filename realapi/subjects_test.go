package realapi

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/kverify/kverify/impl/reflector"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
)

// runner is a reflector under test: ours or client-go's.
type runner interface {
	Run(ctx context.Context)
	LastSyncResourceVersion() string
}

// impl builds a reflector over lw writing to store; watchList false
// makes it list (ours: WatchListOff; client-go: a ListerWatcher that says
// its client cannot stream, client-go's per-client opt-out).
type impl struct {
	name string
	new  func(t testing.TB, lw *ListerWatcher, store cache.Store, watchList bool) runner
}

var impls = []impl{
	{"ours", func(t testing.TB, lw *ListerWatcher, store cache.Store, watchList bool) runner {
		mode := reflector.WatchListAuto
		if !watchList {
			mode = reflector.WatchListOff
		}
		r, err := reflector.New(lw, store, reflector.Options{Name: "ours", ExpectedType: &corev1.ConfigMap{}, WatchList: mode})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}},
	{"upstream", func(t testing.TB, lw *ListerWatcher, store cache.Store, watchList bool) runner {
		var l cache.ListerWatcher = lw
		if !watchList {
			l = noWatchList{lw}
		}
		return upstreamReflector{cache.NewReflectorWithOptions(l, &corev1.ConfigMap{}, store, cache.ReflectorOptions{Name: "upstream"})}
	}},
}

type upstreamReflector struct{ *cache.Reflector }

func (r upstreamReflector) Run(ctx context.Context) { r.RunWithContext(ctx) }

// noWatchList is lw for a client that cannot stream initial events.
type noWatchList struct{ *ListerWatcher }

func (noWatchList) IsWatchListSemanticsUnSupported() bool { return true }

// recordingStore is client-go's thread-safe store that also records every
// version the reflector published (Replace and UpdateResourceVersion).
type recordingStore struct {
	cache.Store
	mu        sync.Mutex
	published []string
}

func newRecordingStore() *recordingStore {
	return &recordingStore{Store: cache.NewStore(cache.MetaNamespaceKeyFunc)}
}

func (s *recordingStore) Replace(list []any, rv string) error {
	s.note(rv)
	return s.Store.Replace(list, rv)
}

func (s *recordingStore) UpdateResourceVersion(rv string) { s.note(rv) }

func (s *recordingStore) note(rv string) {
	s.mu.Lock()
	s.published = append(s.published, rv)
	s.mu.Unlock()
}

func (s *recordingStore) versions() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.published)
}

// state is the store's key -> resource version.
func (s *recordingStore) state() map[string]string {
	m := map[string]string{}
	for _, o := range s.List() {
		cm := o.(*corev1.ConfigMap)
		m[cm.Namespace+"/"+cm.Name] = cm.ResourceVersion
	}
	return m
}

// diff describes how got differs from want, shortly.
func diff(got, want map[string]string) string {
	var missing, extra, stale []string
	for k, v := range want {
		g, ok := got[k]
		switch {
		case !ok:
			missing = append(missing, k)
		case g != v:
			stale = append(stale, fmt.Sprintf("%s@%s (server @%s)", k, g, v))
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			extra = append(extra, k)
		}
	}
	if missing == nil && extra == nil && stale == nil {
		return ""
	}
	short := func(s []string) []string {
		slices.Sort(s)
		if len(s) > 5 {
			return append(s[:5:5], fmt.Sprintf("... (%d in all)", len(s)))
		}
		return s
	}
	return fmt.Sprintf("missing %v, extra %v, stale %v", short(missing), short(extra), short(stale))
}
