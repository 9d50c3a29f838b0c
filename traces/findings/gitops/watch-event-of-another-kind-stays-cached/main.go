// Command watch-event-of-another-kind-stays-cached shows that
// gitops-engine's cluster cache keeps, for good, an object of a kind it
// does not watch that arrived on one of its watches: relists of the
// watched kind never remove it.
//
// The cache watches each API resource with a RetryWatcher and applies
// every event whose object decodes as *unstructured.Unstructured
// (pkg/cache/cluster.go:612-618, processEvent :997-1016), keyed by the
// object's own group, kind, namespace and name; it never compares the
// object's kind with the watched one. A relist (after the watch fails,
// and every watch resync timeout, 10 minutes) replaces the cache's
// entries of the listed kind only (replaceResourceCache :344-347 skips
// every key of another kind), so the object stays in FindResources and in
// every OnResourceUpdated namespace map until a full cluster resync
// (24 hours by default), and in v0.7.3 even after it in the namespace
// index, which sync() never clears (:712 resets c.resources only).
//
// Sequence: a server with one ConfigMap; c := cache.NewClusterCache(cfg,
// cache.SetNamespaces([]string{"default"})); c.EnsureSynced(); the
// ConfigMap watch delivers ADDED Secret default/ghost (resourceVersion 2),
// then ERROR 410; the cache relists ConfigMaps (default/app-config only)
// and watches again; c.FindResources("default") still holds
// Secret default/ghost.
//
// It prints one line and exits: "DEFECT: ..." and 1 while the cache keeps
// the object, "OK: ..." and 0 when the relist removed it (or it was never
// cached).
package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/argoproj/gitops-engine/pkg/cache"
	"github.com/argoproj/gitops-engine/pkg/utils/kube"
	"k8s.io/client-go/rest"
)

const (
	configMap = `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"app-config","namespace":"default","uid":"u-app-config","resourceVersion":"1"}}`
	secret    = `{"kind":"Secret","apiVersion":"v1","metadata":{"name":"ghost","namespace":"default","uid":"u-ghost","resourceVersion":"2"}}`
	expired   = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 2 (3)","reason":"Expired","code":410}`
)

// server is a minimal API server with ConfigMaps in namespace default. Its
// first watch sends an ADDED event whose object is a Secret, then ERROR 410
// (the watch's version expired), then ends; its lists (the first, and the
// relist the 410 causes) hold the one ConfigMap. relisted is closed when
// the second list has been answered.
func server(relisted chan<- struct{}) *httptest.Server {
	var mu sync.Mutex
	lists, watches := 0, 0
	write := func(w http.ResponseWriter, body string) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, body)
	}
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch p := strings.TrimSuffix(r.URL.Path, "/"); {
		case p == "/version":
			write(w, `{"major":"1","minor":"23","gitVersion":"v1.23.1"}`)
		case p == "/api":
			write(w, `{"kind":"APIVersions","versions":["v1"],"serverAddressByClientCIDRs":[{"clientCIDR":"0.0.0.0/0","serverAddress":"127.0.0.1"}]}`)
		case p == "/apis":
			write(w, `{"kind":"APIGroupList","apiVersion":"v1","groups":[]}`)
		case p == "/api/v1":
			write(w, `{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"v1","resources":[{"name":"configmaps","singularName":"configmap","namespaced":true,"kind":"ConfigMap","verbs":["get","list","watch"]}]}`)
		case p == "/openapi/v2":
			// An empty OpenAPI document (an empty protobuf message): the
			// cache's sync loads the schema, for diffing, before it lists.
			w.Header().Set("Content-Type", "application/octet-stream")
		case p == "/api/v1/namespaces/default/configmaps" && r.URL.Query().Get("watch") == "":
			mu.Lock()
			lists++
			n := lists
			mu.Unlock()
			write(w, fmt.Sprintf(`{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"%d"},"items":[%s]}`, 1+2*(n-1), configMap))
			if n == 2 {
				close(relisted)
			}
		case p == "/api/v1/namespaces/default/configmaps":
			mu.Lock()
			watches++
			n := watches
			mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
			if n == 1 {
				fmt.Fprintf(w, "{\"type\":\"ADDED\",\"object\":%s}\n{\"type\":\"ERROR\",\"object\":%s}\n", secret, expired)
				return
			}
			w.(http.Flusher).Flush()
			<-r.Context().Done() // later watches stay open, quiet
		default:
			http.NotFound(w, r)
		}
	}))
}

func main() {
	relisted := make(chan struct{})
	srv := server(relisted)
	defer srv.Close()

	c := cache.NewClusterCache(&rest.Config{Host: srv.URL}, cache.SetNamespaces([]string{"default"}))
	var mu sync.Mutex
	var handed []string
	c.OnResourceUpdated(func(newRes, _ *cache.Resource, _ map[kube.ResourceKey]*cache.Resource) {
		if newRes != nil {
			mu.Lock()
			handed = append(handed, newRes.Ref.Kind+" "+newRes.Ref.Namespace+"/"+newRes.Ref.Name)
			mu.Unlock()
		}
	})
	if err := c.EnsureSynced(); err != nil {
		fmt.Printf("ERROR: EnsureSynced: %v\n", err)
		os.Exit(2)
	}
	select {
	case <-relisted:
	case <-time.After(20 * time.Second):
		fmt.Println("ERROR: the cache did not relist within 20s of the watch's 410")
		os.Exit(2)
	}
	time.Sleep(time.Second) // the relist's result applied, the next watch open
	defer c.Invalidate()

	var ghosts []string
	for k, r := range c.FindResources("default") {
		if k.Kind != "ConfigMap" {
			ghosts = append(ghosts, fmt.Sprintf("%s %s/%s@%s", k.Kind, k.Namespace, k.Name, r.ResourceVersion))
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(ghosts) > 0 {
		fmt.Printf("DEFECT: after relisting ConfigMaps (the server holds only ConfigMap default/app-config), the cache still holds %s, which came in on the ConfigMap watch; OnResourceUpdated was handed %s\n",
			strings.Join(ghosts, ", "), strings.Join(handed, ", "))
		os.Exit(1)
	}
	fmt.Println("OK: after the relist the cache holds only ConfigMaps")
}
