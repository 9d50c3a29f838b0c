package wire_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kverify/kverify/props/modelserver"
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
		m := modelserver.NewServer(apiserver.Config{}, nil)
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
	m := modelserver.NewServer(apiserver.Config{}, nil)
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

// FuzzServeHTTP: whatever the method, path, query and Accept header, the
// server answers with a status (a JSON Status for an error) and never
// panics: a refusal is the only unanswered request, and a fault schedule
// makes none here.
func FuzzServeHTTP(f *testing.F) {
	for _, s := range []string{"/api/v1/namespaces/default/configmaps?limit=x", "/api/v1/configmaps?watch=1&timeoutSeconds=0&resourceVersion=9",
		"/api/v1/namespaces/default/configmaps?resourceVersionMatch=Exact", "/apis/apps/v1", "/api/v1/namespaces/default/configmaps/a/b",
		"/api/v1/configmaps?continue=garbage", "/api/v1/configmaps?sendInitialEvents=true&watch=1&timeoutSeconds=1"} {
		f.Add("GET", s, "")
	}
	f.Add("POST", "/api/v1/namespaces/default/configmaps", "")
	f.Add("GET", "/api/v1/configmaps", "application/vnd.kubernetes.protobuf")
	f.Fuzz(func(t *testing.T, method, target, accept string) {
		req, err := http.NewRequest(method, "http://kverify.invalid"+target, nil)
		if err != nil || req.URL.Host != "kverify.invalid" {
			t.Skip()
		}
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		synctest.Test(t, func(t *testing.T) {
			m := modelserver.NewServer(apiserver.Config{}, nil)
			defer m.Close()
			_ = m.Create("default/a")
			// a watch that stays open is ended by the request's deadline
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			resp, err := wire.Transport(wire.NewServer(m)).RoundTrip(req.WithContext(ctx))
			if err != nil {
				t.Fatalf("%s %s: %v", method, target, err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK && !strings.Contains(string(body), `"kind":"Status"`) {
				t.Fatalf("%s %s: %d without a Status: %s", method, target, resp.StatusCode, body)
			}
			if resp.StatusCode >= 500 && resp.StatusCode != http.StatusGatewayTimeout {
				t.Fatalf("%s %s: %d %s", method, target, resp.StatusCode, body)
			}
		})
	})
}
