//go:build unix

package gitops

// BenchmarkSync100k: the first sync of 100,000 ConfigMaps over HTTP
// (props/wire's served model on a loopback httptest server), by
// gitops-engine's cluster cache (the adapter's GITOPS_CLIENT_SYNC_ONCE
// mode: one EnsureSynced, as Argo CD's controller calls it, with Argo CD's
// client settings, QPS 50 and burst 100), by ours (impl/informer) and by
// client-go v0.37.2's shared informer, each syncing the way it does by
// default: the cluster cache lists in pages of 500 (its pager), the two
// informers open one watch-list stream. Every implementation runs as a
// process of its own, started per op, so that its memory is measured the
// same way: peak-RSS-MB is the process's largest resident set (the
// kernel's ru_maxrss: the Go runtime, the client's libraries, the cache,
// and what the sync allocated before the collector freed it). The
// informers' process is this test binary (syncChild), the cluster
// cache's the adapter (which links kubectl's libraries; its resident set
// before a sync is larger). sync-ms is the sync alone as the process
// timed it (from the cache's or informer's start to a synced cache of
// every object); an op's time adds the process's start and exit.
// wire-MB is what the server wrote per sync.
//
//	make bench-gitops
//	go test -run '^$' -bench Sync100k -benchtime 1x -count 6 ./subjects/gitops | benchstat -col /impl -

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/kverify/kverify/impl/informer"
	"github.com/kverify/kverify/impl/reflector"
	"github.com/kverify/kverify/props/modelserver"
	"github.com/kverify/kverify/props/wire"
	"github.com/kverify/kverify/spec/apiserver"
	"github.com/kverify/kverify/subjects/upstream"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
)

// syncObjects is how many objects BenchmarkSync100k syncs.
const syncObjects = 100_000

// syncChildEnv names the informer a child process of the benchmark syncs
// ("ours" or "client-go"); unset, the test binary runs its tests.
const syncChildEnv = "KVERIFY_SYNC_CHILD"

// syncResult is the line a syncing process writes: the adapter's
// GITOPS_CLIENT_SYNC_ONCE mode and syncChild write the same.
type syncResult struct {
	Objects int    `json:"objects"`
	SyncNs  int64  `json:"syncNs"`
	Error   string `json:"error,omitempty"`
}

func BenchmarkSync100k(b *testing.B) {
	bin, err := Build()
	if err != nil {
		b.Fatal(err)
	}
	model := modelserver.NewServer(apiserver.Config{}, nil)
	defer model.Close()
	srv := wire.NewServer(model)
	if err := srv.Populate(syncObjects); err != nil {
		b.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	env := append(os.Environ(), "KVERIFY_SERVER_URL="+hs.URL, "KVERIFY_NAMESPACE="+wire.Namespace, "KVERIFY_RESOURCE="+wire.Resource)
	impls := []struct {
		name string
		cmd  func() *exec.Cmd
	}{
		{"gitops", func() *exec.Cmd {
			c := exec.Command(bin)
			c.Dir, c.Env = clientDir(), append(env, "GITOPS_CLIENT_SYNC_ONCE=1")
			return c
		}},
		{"ours", func() *exec.Cmd {
			c := exec.Command(os.Args[0], "-test.run=^$")
			c.Env = append(env, syncChildEnv+"=ours")
			return c
		}},
		{"client-go", func() *exec.Cmd {
			c := exec.Command(os.Args[0], "-test.run=^$")
			c.Env = append(env, syncChildEnv+"=client-go")
			return c
		}},
	}
	for _, impl := range impls {
		b.Run("impl="+impl.name, func(b *testing.B) {
			var rss, syncMs, wireMB float64
			for range b.N {
				sent := srv.Bytes()
				cmd := impl.cmd()
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				out, err := cmd.Output()
				if err != nil {
					b.Fatalf("%s: %v\n%s", impl.name, err, tailOf(stderr.Bytes()))
				}
				var r syncResult
				if err := json.Unmarshal(out, &r); err != nil || r.Error != "" || r.Objects != syncObjects {
					b.Fatalf("%s: the sync was not clean: %q (%v)\n%s", impl.name, out, err, tailOf(stderr.Bytes()))
				}
				if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
					rss += float64(ru.Maxrss) / 1024 // KiB on Linux
				}
				syncMs += float64(r.SyncNs) / 1e6
				wireMB += float64(srv.Bytes()-sent) / (1 << 20)
			}
			n := float64(b.N)
			b.ReportMetric(rss/n, "peak-RSS-MB")
			b.ReportMetric(syncMs/n, "sync-ms")
			b.ReportMetric(wireMB/n, "wire-MB")
		})
	}
}

// tailOf is the end of a process's stderr, for a failure's message.
func tailOf(p []byte) []byte {
	if len(p) > 2000 {
		return p[len(p)-2000:]
	}
	return p
}

// syncChild is the informer side of BenchmarkSync100k, run in a child
// process (syncChildEnv set): the informer syncs from KVERIFY_SERVER_URL,
// with one handler that counts its adds, until every object is added and
// it reports HasSynced; it writes a syncResult and the process exits.
// Unset, it returns false and the tests run.
func syncChild() bool {
	which := os.Getenv(syncChildEnv)
	if which == "" {
		return false
	}
	r := syncResult{}
	if err := runSyncChild(which, &r); err != nil {
		r.Error = err.Error()
	}
	out, _ := json.Marshal(r)
	os.Stdout.Write(append(out, '\n'))
	return true
}

// addCounter counts adds and closes done at the syncObjects-th.
type addCounter struct {
	adds, others atomic.Int64
	done         chan struct{}
}

func (c *addCounter) OnAdd(any, bool) {
	if c.adds.Add(1) == syncObjects {
		close(c.done)
	}
}
func (c *addCounter) OnUpdate(any, any) { c.others.Add(1) }
func (c *addCounter) OnDelete(any)      { c.others.Add(1) }

func runSyncChild(which string, r *syncResult) error {
	t0 := time.Now()
	lw, err := upstream.ConfigMapListWatch(os.Getenv("KVERIFY_SERVER_URL"), nil)
	if err != nil {
		return err
	}
	h := &addCounter{done: make(chan struct{})}
	var run func(context.Context)
	var hasSynced func() bool
	switch which {
	case "ours":
		inf, err := informer.NewInformer(lw, informer.InformerOptions{Reflector: reflector.Options{ExpectedType: &corev1.ConfigMap{}}})
		if err != nil {
			return err
		}
		if _, err := inf.AddEventHandler(h); err != nil {
			return err
		}
		run, hasSynced = inf.Run, inf.HasSynced
	case "client-go":
		inf := cache.NewSharedIndexInformer(lw, &corev1.ConfigMap{}, 0, cache.Indexers{})
		if _, err := inf.AddEventHandler(h); err != nil {
			return err
		}
		run, hasSynced = inf.RunWithContext, inf.HasSynced
	default:
		return fmt.Errorf("%s=%q: want ours or client-go", syncChildEnv, which)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	go run(ctx)
	select {
	case <-h.done:
	case <-ctx.Done():
		return fmt.Errorf("%d adds of %d when the sync's time ran out", h.adds.Load(), syncObjects)
	}
	// Every add came; HasSynced follows the last pop (WaitForCacheSync
	// polls every 100ms, which would swamp the difference measured).
	for !hasSynced() {
		if ctx.Err() != nil {
			return fmt.Errorf("HasSynced stayed false after every add")
		}
		time.Sleep(time.Millisecond)
	}
	r.SyncNs = time.Since(t0).Nanoseconds()
	r.Objects = int(h.adds.Load())
	if n := h.others.Load(); n > 0 {
		return fmt.Errorf("%d updates or deletes during a sync of unchanging objects", n)
	}
	return nil
}
