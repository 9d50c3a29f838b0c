package wire_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/kverify/kverify/props/checkkit"
	"github.com/kverify/kverify/props/wire"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/pager"
)

// shotClient is a single-shot client in process, as kubectl get -w is
// one: a list (in pages of 500), one watch from its version, each event
// applied to its cache, and done when the stream ends. bug names a
// broken variant (see TestSingleShotBroken); "" is the correct one.
type shotClient struct {
	mu     sync.Mutex
	lines  []wire.Line
	cache  map[string]string
	cancel func()
	done   chan struct{}
}

func shotSubject(bug string) wire.Subject {
	return wire.Subject{Name: "single-shot" + bug, SingleShot: true, Start: func(url string, rt http.RoundTripper) (wire.Client, error) {
		cs, err := kubernetes.NewForConfig(&rest.Config{Host: url, Transport: rt, QPS: -1})
		if err != nil {
			return nil, err
		}
		ctx, cancel := context.WithCancel(context.Background())
		c := &shotClient{lines: []wire.Line{{Type: wire.LineHello, Protocol: wire.Protocol, Client: "single-shot" + bug}},
			cache: map[string]string{}, cancel: cancel, done: make(chan struct{})}
		go c.run(ctx, cs, bug)
		return c, nil
	}}
}

func (c *shotClient) add(l wire.Line) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lines = append(c.lines, l)
}

// apply folds one event into the cache and writes its handler call.
func (c *shotClient) apply(typ watch.EventType, cm *corev1.ConfigMap) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k, rv := cm.Namespace+"/"+cm.Name, cm.ResourceVersion
	old, held := c.cache[k]
	switch {
	case typ == watch.Deleted:
		delete(c.cache, k)
		c.lines = append(c.lines, wire.Line{Type: wire.LineDelete, Key: k, RV: rv})
	case held:
		c.cache[k] = rv
		c.lines = append(c.lines, wire.Line{Type: wire.LineUpdate, Key: k, RV: rv, OldRV: old})
	default:
		c.cache[k] = rv
		c.lines = append(c.lines, wire.Line{Type: wire.LineAdd, Key: k, RV: rv})
	}
}

func (c *shotClient) run(ctx context.Context, cs *kubernetes.Clientset, bug string) {
	defer close(c.done)
	fail := func(format string, args ...any) {
		c.add(wire.Line{Type: wire.LineError, Message: fmt.Sprintf(format, args...)})
	}
	api := cs.CoreV1().ConfigMaps(wire.Namespace)
	p := pager.New(func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) { return api.List(ctx, opts) })
	obj, _, err := p.List(ctx, metav1.ListOptions{})
	if err != nil {
		fail("list: %v", err)
		return
	}
	// One page is a ConfigMapList, more an internalversion.List.
	items, err := meta.ExtractList(obj)
	if err != nil {
		fail("list: %v", err)
		return
	}
	la, err := meta.ListAccessor(obj)
	if err != nil {
		fail("list: %v", err)
		return
	}
	for _, it := range items {
		cm, ok := it.(*corev1.ConfigMap)
		if !ok {
			fail("list: an item %T", it)
			return
		}
		c.apply(watch.Added, cm)
	}
	rv := la.GetResourceVersion()
	if bug == "watch-from-next" {
		n, _ := strconv.ParseInt(rv, 10, 64)
		rv = strconv.FormatInt(n+1, 10)
	}
	w, err := api.Watch(ctx, metav1.ListOptions{ResourceVersion: rv})
	if err != nil {
		fail("watch: %v", err)
		return
	}
	defer w.Stop()
	c.add(wire.Line{Type: wire.LineSynced})
	var held *corev1.ConfigMap // bug "holds-last": an event is applied when the next one comes
	var heldType watch.EventType
	n := 0
	for e := range w.ResultChan() {
		cm, ok := e.Object.(*corev1.ConfigMap)
		if ok {
			_, err := strconv.ParseUint(cm.ResourceVersion, 10, 64)
			ok = err == nil
		}
		if e.Type == watch.Error || !ok {
			fail("the watch ended: %s %T", e.Type, e.Object)
			return
		}
		n++
		switch {
		case bug == "quits-early" && n == 2:
			fail("quits")
			return
		case bug == "holds-last":
			if held != nil {
				c.apply(heldType, held)
			}
			held, heldType = cm, e.Type
			continue
		}
		c.apply(e.Type, cm)
	}
	fail("the watch closed")
}

func (c *shotClient) Lines() []wire.Line {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.lines)
}

func (c *shotClient) State() (wire.Line, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := wire.Line{Type: wire.LineState, Cache: []wire.Object{}}
	for k, rv := range c.cache {
		st.Cache = append(st.Cache, wire.Object{Key: k, RV: rv})
	}
	slices.SortFunc(st.Cache, func(a, b wire.Object) int {
		if a.Key < b.Key {
			return -1
		}
		if a.Key > b.Key {
			return 1
		}
		return 0
	})
	return st, nil
}

func (c *shotClient) Stop() error {
	c.cancel()
	<-c.done
	return nil
}

// TestSingleShot: a correct single-shot client passes every wire check
// under the SingleShot capability, though it never reconnects.
func TestSingleShot(t *testing.T) {
	for _, c := range wire.Checks(shotSubject("")) {
		t.Run(c.Name, func(t *testing.T) {
			if err := c.Run(t, checkkit.Config{TraceDir: t.TempDir()}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestSingleShotBroken: the capability excuses only the end of the shot.
// A client that quits its own stream (the server did not end it) owes
// convergence; one that applies each event only when the next comes
// loses the last before the end; one that watches from a version after
// the list's, never sent, is judged on its requests as any client.
func TestSingleShotBroken(t *testing.T) {
	for bug, want := range map[string]string{"quits-early": wire.GConverge, "holds-last": wire.GConverge, "watch-from-next": wire.GResume} {
		t.Run(bug, func(t *testing.T) {
			for _, c := range wire.Checks(shotSubject(bug)) {
				if c.Name == wire.CheckFidelity {
					continue
				}
				err := c.Run(t, checkkit.Config{TraceDir: t.TempDir()})
				var v *checkkit.Violation
				if errors.As(err, &v) && v.Guarantee == want {
					t.Logf("%s: %v", c.Name, err)
					return
				}
			}
			t.Fatalf("no wire check names %q", want)
		})
	}
}
