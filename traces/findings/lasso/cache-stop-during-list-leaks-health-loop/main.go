// Command cache-stop-during-list-leaks-health-loop shows that stopping a
// lasso cache while its LIST is in flight leaves a goroutine behind for
// good: the LIST fails (its context is the cache's, cancelled on stop), and
// the cache then waits for the API server's health with that same,
// cancelled context, in a loop that only a successful ping ends.
//
// lasso's cache lists through its client with a context it cancels when
// the informer stops (pkg/cache/cache.go:124-145); on a LIST error it
// calls the factory's health check, ensureHealthy(ctx), which takes the
// factory's healthcheck lock and runs pingUntilGood: ping (a GET /version
// with a timeout derived from ctx), time.Sleep(15s), again, until a ping
// succeeds (pkg/cache/healthcheck.go:52-74). With ctx cancelled every
// ping fails at once, so the loop never ends: the reflector's list
// goroutine stays in it for as long as the process lives, waking every
// 15s, and holds the lock, so any later failed LIST of another cache of
// the same factory blocks on it for good.
//
// Sequence: caches := cache.NewSharedCachedFactory(clients,
// &cache.SharedCacheFactoryOptions{DefaultDisableWatchList: true});
// caches.ForResourceKind(configmaps, "ConfigMap", true);
// caches.Start(ctx); (the LIST is in flight) cancel(); 16s later a
// goroutine of the cache is still in healthcheck.pingUntilGood.
package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"
	"time"
)

// grace is how long the cache may take to stop: one more second than the
// health loop's sleep, so that a goroutine still there has been through a
// whole round of it.
const grace = 16 * time.Second

// server answers /version and holds every LIST of ConfigMaps until the
// client gives up on it; listing is closed when the first LIST arrives.
func server(listing chan<- struct{}) *httptest.Server {
	first := true
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/version":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"major":"1","minor":"37","gitVersion":"v1.37.0"}`)
		case strings.HasSuffix(r.URL.Path, "/configmaps") && r.URL.Query().Get("watch") == "":
			if first {
				first = false
				close(listing)
			}
			<-r.Context().Done() // a slow LIST: the client gives up first
		default:
			http.NotFound(w, r)
		}
	}))
	srv.Config.SetKeepAlivesEnabled(false)
	srv.Start()
	return srv
}

// leftovers are the stacks of the goroutines that run code of the cache
// under test (lasso's or ours) or of client-go's informer machinery.
func leftovers() []string {
	buf := make([]byte, 1<<22)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "main.leftovers") {
			continue
		}
		for _, mark := range []string{"github.com/rancher/lasso/", "github.com/kverify/kverify/impl/", "k8s.io/client-go/tools/cache."} {
			if strings.Contains(g, mark) {
				out = append(out, g)
				break
			}
		}
	}
	return out
}

// frames is the stack's function names, innermost first.
func frames(g string) string {
	var fs []string
	for _, l := range strings.Split(g, "\n")[1:] {
		if l != "" && !strings.HasPrefix(l, "\t") {
			if i := strings.LastIndex(l, "("); i > 0 {
				l = l[:i]
			}
			fs = append(fs, l)
		}
	}
	return strings.Join(fs[:min(len(fs), 4)], " < ")
}

func main() {
	listing := make(chan struct{})
	srv := server(listing)
	defer srv.Close()

	ctx, cancel := context.WithCancel(context.Background())
	if err := startCache(ctx, srv.URL); err != nil {
		fmt.Printf("ERROR: starting the cache: %v\n", err)
		os.Exit(2)
	}
	select {
	case <-listing:
	case <-time.After(10 * time.Second):
		fmt.Println("ERROR: the cache sent no LIST within 10s")
		os.Exit(2)
	}
	cancel() // stop the cache while its LIST is in flight

	deadline := time.Now().Add(grace)
	for {
		left := leftovers()
		if len(left) == 0 {
			fmt.Println("OK: every goroutine of the cache ended after it was stopped during its LIST")
			return
		}
		if time.Now().After(deadline) {
			fmt.Printf("DEFECT: %v after the cache was stopped during its LIST, %d goroutine(s) of it still run: %s\n", grace, len(left), frames(left[0]))
			os.Exit(1)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
