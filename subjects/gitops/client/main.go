// Command client is the kverify-client/v1 adapter (traces/client.schema.json
// in kverify) for argoproj/gitops-engine's cluster cache
// (github.com/argoproj/gitops-engine/pkg/cache, v0.7.3 on k8s.io/* v0.23.1),
// the live-state cache under Argo CD's application controller.
//
// It builds the cache as Argo CD builds one per cluster (NewClusterCache
// with a rest.Config for KVERIFY_SERVER_URL), restricted to ConfigMaps
// (core/v1) in KVERIFY_NAMESPACE: SetNamespaces, and a ResourcesFilter
// that excludes every other kind from the cache's discovery. It runs it
// as an application does: EnsureSynced, called every second (Argo CD calls
// it before every use of a cluster's cache, getSyncedCluster), and reports:
//
//	add / update / delete  <- OnResourceUpdated(newRes, oldRes, namespaceResources):
//	                          add when oldRes is nil, delete when newRes is nil,
//	                          update (with oldRv) otherwise; and, once, an add
//	                          for every resource of the first synced state (see
//	                          announce: the cache's sync fills it without calling
//	                          any handler)
//	synced                 <- the first EnsureSynced that returns nil
//	error                  <- each new error EnsureSynced returns
//	state.rv               <- "": the cache reports no version
//	state.cache            <- FindResources(namespace)
//	stop                   <- Invalidate (the cache has no Stop; Argo CD
//	                          drops a cluster's cache by invalidating it)
//
// OnEvent sees every watch event before the cache applies it; it is logged
// on stderr. See README.md.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/argoproj/gitops-engine/pkg/cache"
	"github.com/argoproj/gitops-engine/pkg/utils/kube"
	"github.com/argoproj/gitops-engine/pkg/utils/tracing"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2/klogr"
	"k8s.io/kubectl/pkg/util/openapi"
)

// protocol is the kverify client protocol this adapter speaks.
const protocol = "kverify-client/v1"

// module is the library under test, as hello names it.
const module = "github.com/argoproj/gitops-engine"

// ensurePeriod is how often the adapter calls EnsureSynced, as an
// application that uses the cache would: cheap once synced (a lock and a
// time comparison); after a failed sync the cache answers the same error
// until its cluster sync retry timeout (10 s, ClusterRetryTimeout) passes,
// then syncs again.
const ensurePeriod = time.Second

// line is one output line of the protocol.
type line struct {
	Type     string   `json:"type"`
	Protocol string   `json:"protocol,omitempty"`
	Client   string   `json:"client,omitempty"`
	Key      string   `json:"key,omitempty"`
	RV       *string  `json:"rv,omitempty"`
	OldRV    string   `json:"oldRv,omitempty"`
	Message  string   `json:"message,omitempty"`
	Cache    []object `json:"cache,omitempty"`
	hasCache bool
}

type object struct {
	Key string `json:"key"`
	RV  string `json:"rv"`
}

// MarshalJSON writes a state line's cache even when it is empty.
func (l line) MarshalJSON() ([]byte, error) {
	type plain line
	if !l.hasCache {
		return json.Marshal(plain(l))
	}
	if l.Cache == nil {
		l.Cache = []object{}
	}
	return json.Marshal(struct {
		plain
		Cache []object `json:"cache"`
	}{plain(l), l.Cache})
}

func str(s string) *string { return &s }

// reporter writes the protocol's lines, one at a time, in the order of
// the handler calls that produce them.
type reporter struct {
	mu        sync.Mutex
	out       *bufio.Writer
	announced bool // the first synced state's adds are written
	synced    bool
	stopped   bool
	lastErr   string
}

func (r *reporter) writeLocked(l line) {
	if r.stopped {
		return
	}
	b, err := json.Marshal(l)
	if err != nil {
		logf("encoding %+v: %v", l, err)
		return
	}
	r.out.Write(append(b, '\n'))
	r.out.Flush()
}

// key is the protocol's key of a cached resource: namespace/name, whatever
// its kind (the cache is keyed by group, kind, namespace and name; only
// ConfigMaps are watched).
func key(res *cache.Resource) string { return res.Ref.Namespace + "/" + res.Ref.Name }

// objects is a namespace's resources as the protocol lists them, in key
// order.
func objects(rs map[kube.ResourceKey]*cache.Resource) []object {
	out := make([]object, 0, len(rs))
	for _, res := range rs {
		out = append(out, object{Key: key(res), RV: res.ResourceVersion})
	}
	slices.SortFunc(out, func(a, b object) int {
		if a.Key != b.Key {
			return compare(a.Key, b.Key)
		}
		return compare(a.RV, b.RV)
	})
	return out
}

func compare(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// announceLocked writes an add for every resource of state, the cache's
// first synced state, once. The cache's sync (clusterCache.sync) fills the
// cache without calling OnResourceUpdated: an application reads the
// synced state with FindResources and the handler tells it what changes
// after. The protocol asks for an add per object of the first sync, so
// the adapter announces that state, exactly once, before the first
// handler call that changes it.
func (r *reporter) announceLocked(state []object) {
	if r.announced {
		return
	}
	r.announced = true
	for _, o := range state {
		r.writeLocked(line{Type: "add", Key: o.Key, RV: str(o.RV)})
	}
}

// onResourceUpdated is the cache's OnResourceUpdated handler. The cache
// calls it holding its lock, after applying the change: namespaceResources
// is the namespace's state with the change applied.
func (r *reporter) onResourceUpdated(newRes, oldRes *cache.Resource, namespaceResources map[kube.ResourceKey]*cache.Resource) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.announced {
		// The first call after the first sync: the state before it is
		// namespaceResources without the change.
		before := make(map[kube.ResourceKey]*cache.Resource, len(namespaceResources))
		for k, v := range namespaceResources {
			before[k] = v
		}
		if newRes != nil {
			delete(before, newRes.ResourceKey())
		}
		if oldRes != nil {
			before[oldRes.ResourceKey()] = oldRes
		}
		r.announceLocked(objects(before))
	}
	switch {
	case oldRes == nil && newRes != nil:
		r.writeLocked(line{Type: "add", Key: key(newRes), RV: str(newRes.ResourceVersion)})
	case newRes == nil && oldRes != nil:
		r.writeLocked(line{Type: "delete", Key: key(oldRes), RV: str(oldRes.ResourceVersion)})
	case newRes != nil:
		r.writeLocked(line{Type: "update", Key: key(newRes), RV: str(newRes.ResourceVersion), OldRV: oldRes.ResourceVersion})
	}
}

// syncedWith records the first successful EnsureSynced: state is what
// FindResources returned after it (no handler call can have changed the
// cache since unless it announced the state itself).
func (r *reporter) syncedWith(state []object) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.announceLocked(state)
	if !r.synced {
		r.synced = true
		r.writeLocked(line{Type: "synced"})
	}
}

// syncError reports an error EnsureSynced returned, once per distinct
// error.
func (r *reporter) syncError(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if msg := err.Error(); msg != r.lastErr {
		r.lastErr = msg
		r.writeLocked(line{Type: "error", Message: "EnsureSynced: " + msg})
	}
}

// onlyConfigMaps is the cache's ResourcesFilter: it excludes every API
// resource but core/v1 ConfigMaps from what the cache lists and watches.
type onlyConfigMaps struct{}

func (onlyConfigMaps) IsExcludedResource(group, kind, _ string) bool {
	return group != "" || kind != "ConfigMap"
}

// kubectl is gitops-engine's own kube.KubectlCmd, except that it loads no
// OpenAPI schema: the cache's sync loads one (GET /openapi/v2, then
// /swagger-2.0.0.pb-v1) for its GetOpenAPISchema and GetGVKParser, which
// Argo CD uses to diff manifests, never to list or watch; kverify's model
// server answers neither path (404), and a failed load fails the whole
// sync. With no schema sync goes on (openAPISchema nil, gvkParser unset).
// (A server that answered /openapi/v2 with status 200 and an empty body,
// an empty OpenAPI document, would let the stock KubectlCmd sync as well:
// GITOPS_CLIENT_STOCK_KUBECTL=1 runs the adapter with it.)
type kubectl struct{ kube.Kubectl }

func (kubectl) LoadOpenAPISchema(*rest.Config) (openapi.Resources, *managedfields.GvkParser, error) {
	return nil, nil, nil
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s gitops-client: %s\n", time.Now().UTC().Format(time.RFC3339Nano), fmt.Sprintf(format, args...))
}

// version is the pinned library's version, from the build.
func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == module {
				return d.Version
			}
		}
	}
	return "unknown"
}

func main() {
	url, ns := os.Getenv("KVERIFY_SERVER_URL"), os.Getenv("KVERIFY_NAMESPACE")
	if url == "" {
		logf("KVERIFY_SERVER_URL is not set")
		os.Exit(2)
	}
	if ns == "" {
		ns = "default"
	}
	if res := os.Getenv("KVERIFY_RESOURCE"); res != "" && res != "configmaps" {
		logf("KVERIFY_RESOURCE=%s: only configmaps is supported", res)
		os.Exit(2)
	}
	r := &reporter{out: bufio.NewWriter(os.Stdout)}
	if once, _ := strconv.ParseBool(os.Getenv("GITOPS_CLIENT_SYNC_ONCE")); !once {
		r.mu.Lock()
		r.writeLocked(line{Type: "hello", Protocol: protocol, Client: module + "@" + version()})
		r.mu.Unlock()
	}

	log := klogr.New()
	// Argo CD's client settings for a cluster's cache (QPS 50, burst 100:
	// its ARGOCD_K8S_CLIENT_QPS and ARGOCD_K8S_CLIENT_BURST defaults);
	// plain HTTP, no credentials.
	config := &rest.Config{Host: url, QPS: 50, Burst: 100}
	var kc kube.Kubectl = &kube.KubectlCmd{Log: log, Tracer: tracing.NopTracer{}}
	if stock, _ := strconv.ParseBool(os.Getenv("GITOPS_CLIENT_STOCK_KUBECTL")); !stock {
		kc = kubectl{kc}
	}
	c := cache.NewClusterCache(config,
		cache.SetNamespaces([]string{ns}),
		cache.SetSettings(cache.Settings{ResourceHealthOverride: cache.NewNoopSettings(), ResourcesFilter: onlyConfigMaps{}}),
		cache.SetKubectl(kc),
		cache.SetLogr(log),
	)
	c.OnResourceUpdated(r.onResourceUpdated)
	c.OnEvent(func(t watch.EventType, un *unstructured.Unstructured) {
		logf("event %s %s %s/%s@%s", t, un.GetKind(), un.GetNamespace(), un.GetName(), un.GetResourceVersion())
	})

	state := func() []object { return objects(c.FindResources(ns)) }

	if once, _ := strconv.ParseBool(os.Getenv("GITOPS_CLIENT_SYNC_ONCE")); once {
		syncOnce(c, ns)
		return
	}

	quit := make(chan struct{})
	loopDone := make(chan struct{})
	go func() {
		defer close(loopDone)
		t := time.NewTicker(ensurePeriod)
		defer t.Stop()
		for {
			if err := c.EnsureSynced(); err != nil {
				r.syncError(err)
				logf("EnsureSynced: %v", err)
			} else {
				r.syncedWith(state())
			}
			select {
			case <-quit:
				return
			case <-t.C:
			}
		}
	}()

	stop := func(why string) {
		logf("stopping (%s)", why)
		close(quit)
		select {
		case <-loopDone:
		case <-time.After(5 * time.Second):
			logf("EnsureSynced has not returned within 5s; invalidating anyway")
		}
		done := make(chan struct{})
		go func() { c.Invalidate(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			logf("Invalidate has not returned within 5s (the cache's lock is held)")
		}
		r.mu.Lock()
		r.writeLocked(line{Type: "stopped"})
		r.stopped = true
		r.mu.Unlock()
		os.Exit(0)
	}

	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		var op struct {
			Op string `json:"op"`
		}
		if err := json.Unmarshal(in.Bytes(), &op); err != nil {
			logf("ignoring input that is not JSON: %q", in.Text())
			continue
		}
		switch op.Op {
		case "state":
			st := state()
			r.mu.Lock()
			r.writeLocked(line{Type: "state", RV: str(""), Cache: st, hasCache: true})
			r.mu.Unlock()
		case "stop":
			stop("stop")
		default:
			logf("ignoring unknown input %q", in.Text())
		}
	}
	stop("end of stdin")
}

// syncOnce is the benchmark's mode (GITOPS_CLIENT_SYNC_ONCE=1; kverify's
// BenchmarkSync100k in subjects/gitops): instead of the protocol, one
// EnsureSynced, the cache's first sync as Argo CD's controller runs it,
// then one JSON line on stdout, {"objects": the namespace's resources
// cached, "syncNs": the call's duration, "error": its error if any}, and
// exit. The handlers are registered as in the protocol's mode, so the
// sync pays for what they cost (nothing: the first sync calls neither).
func syncOnce(c cache.ClusterCache, ns string) {
	t0 := time.Now()
	err := c.EnsureSynced()
	out := struct {
		Objects int    `json:"objects"`
		SyncNs  int64  `json:"syncNs"`
		Error   string `json:"error,omitempty"`
	}{Objects: len(c.FindResources(ns)), SyncNs: time.Since(t0).Nanoseconds()}
	if err != nil {
		out.Error = err.Error()
	}
	b, _ := json.Marshal(out)
	os.Stdout.Write(append(b, '\n'))
	c.Invalidate()
}
