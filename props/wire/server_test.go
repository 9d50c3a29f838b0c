package wire_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/kverify/kverify/props/reflector"
	"github.com/kverify/kverify/props/wire"
	"github.com/kverify/kverify/spec/apiserver"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

func clientset(t *testing.T, rt http.RoundTripper, host string) *kubernetes.Clientset {
	t.Helper()
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: host, Transport: rt, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// A stock clientset lists, pages and watches the served ConfigMaps in
// memory, inside a bubble.
func TestStockClientInMemory(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := reflector.NewServer(apiserver.Config{}, nil)
		defer m.Close()
		for _, k := range []string{"default/a", "default/b", "default/c"} {
			if err := m.Create(k); err != nil {
				t.Fatal(err)
			}
		}
		srv := wire.NewServer(m)
		cm := clientset(t, wire.Transport(srv), "http://kverify.invalid").CoreV1().ConfigMaps(wire.Namespace)
		ctx := context.Background()
		l, err := cm.List(ctx, metav1.ListOptions{Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		if len(l.Items) != 2 || l.Continue == "" || l.ResourceVersion != "4" {
			t.Fatalf("first page: %d items, continue %q, rv %q", len(l.Items), l.Continue, l.ResourceVersion)
		}
		l2, err := cm.List(ctx, metav1.ListOptions{Limit: 2, Continue: l.Continue})
		if err != nil || len(l2.Items) != 1 || l2.Items[0].Name != "c" {
			t.Fatalf("second page: %v %v", l2, err)
		}
		w, err := cm.Watch(ctx, metav1.ListOptions{ResourceVersion: "4", AllowWatchBookmarks: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Update("default/b"); err != nil {
			t.Fatal(err)
		}
		e := <-w.ResultChan()
		if e.Type != watch.Modified {
			t.Fatalf("event %v", e)
		}
		if got := e.Object.(metav1.Object); got.GetName() != "b" || got.GetResourceVersion() != "5" {
			t.Fatalf("object %s@%s", got.GetName(), got.GetResourceVersion())
		}
		w.Stop()
		m.Compact()
		_, err = cm.List(ctx, metav1.ListOptions{ResourceVersion: "2", ResourceVersionMatch: metav1.ResourceVersionMatchExact})
		if !apierrors.IsResourceExpired(err) {
			t.Fatalf("exact list at a compacted version: %v", err)
		}
		_, err = cm.List(ctx, metav1.ListOptions{ResourceVersion: "x"})
		if !apierrors.IsBadRequest(err) {
			t.Fatalf("malformed version: %v", err)
		}
		synctest.Wait()
		for _, r := range srv.Requests() {
			t.Logf("%+v", r)
		}
	})
}

// Over a real listener, curl's view: discovery, a list and an unknown path.
func TestServeOverHTTP(t *testing.T) {
	m := reflector.NewServer(apiserver.Config{}, nil)
	defer m.Close()
	_ = m.Create("default/a")
	hs := httptest.NewServer(wire.NewServer(m))
	defer hs.Close()
	for path, want := range map[string]string{
		"/version":                              `"gitVersion":"v1.37.2-kverify"`,
		"/api/v1":                               `"name":"configmaps"`,
		"/api/v1/namespaces/default/configmaps": `"kind":"ConfigMapList"`,
		"/api/v1/namespaces/default/configmaps/a":       `"name":"a"`,
		"/api/v1/namespaces/other/configmaps":           `"code":404`,
		"/api/v1/namespaces/default/configmaps?limit=x": `"code":400`,
	} {
		resp, err := http.Get(hs.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		_, _ = ioCopy(&b, resp)
		if !strings.Contains(b.String(), want) {
			t.Errorf("GET %s: %d %s, want %s", path, resp.StatusCode, b.String(), want)
		}
	}
}
