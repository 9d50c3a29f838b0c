package realapi

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"go.uber.org/goleak"
	"k8s.io/apiserver/pkg/features"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/klog/v2"
)

func TestMain(m *testing.M) {
	klog.SetLogger(logr.Discard())
	code := m.Run()
	teardownBench() // the benchmarks' shared stack lives until here
	if code == 0 {
		if err := goleak.Find(leakOptions...); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: goroutines left after the tests: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// leakOptions ignore what the libraries leave running for the process.
var leakOptions = []goleak.Option{
	// Process-wide goroutines of the libraries, started once and never
	// stopped: klog's flush daemon, grpc's and etcd's background loops,
	// the apiserver's feature-support checker and metrics.
	goleak.IgnoreTopFunction("k8s.io/klog/v2.(*flushDaemon).run.func1"),
	goleak.IgnoreAnyFunction("google.golang.org/grpc/internal/grpcsync.(*CallbackSerializer).run"),
	goleak.IgnoreAnyFunction("go.opencensus.io/stats/view.(*worker).start"),
	goleak.IgnoreAnyFunction("k8s.io/apimachinery/pkg/util/wait.BackoffUntilWithContext"),
	// The watch cache starts a goroutine per read at a version above 0
	// that sleeps out the 3 s freshness timeout even after the read is
	// answered (k8s.io/apiserver@v0.37.2/pkg/storage/cacher/
	// watch_cache.go:340-351): the server's, not a reflector's.
	goleak.IgnoreAnyFunction("k8s.io/apiserver/pkg/storage/cacher.(*watchCache).waitUntilFreshLocked.func2"),
}

// timeout bounds every wait on the real stack; it runs in real time.
// Convergence gets less: a sync of a few hundred objects takes well under
// a second, and after an etcd restart a few seconds.
const (
	timeout         = 60 * time.Second
	convergeTimeout = 20 * time.Second
)

// env is one etcd and one stack, torn down when the test ends.
type env struct {
	t     *testing.T
	etcd  *Etcd
	stack *Stack
	lw    *ListerWatcher
}

// newEnv starts etcd and the stack with the server's WatchList gate set
// to gate, restored when the test ends (gates are process-wide: no
// parallel tests).
func newEnv(t *testing.T, gate bool) *env {
	t.Helper()
	setGate(t, gate)
	e, err := StartEtcd(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Stop)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	s, err := NewStack(ctx, e.Endpoint())
	if err != nil {
		t.Fatal(err)
	}
	v := &env{t: t, etcd: e, stack: s, lw: NewListerWatcher(s)}
	t.Cleanup(func() { v.stack.Close() })
	return v
}

func setGate(t *testing.T, on bool) {
	t.Helper()
	was := utilfeature.DefaultFeatureGate.Enabled(features.WatchList)
	set := func(v bool) {
		if err := utilfeature.DefaultMutableFeatureGate.SetFromMap(map[string]bool{string(features.WatchList): v}); err != nil {
			t.Fatal(err)
		}
	}
	set(on)
	t.Cleanup(func() { set(was) })
}

// writer churns the ConfigMaps "ns-<w>/cm-NNN" of one writer: creates the
// absent, updates or deletes the present, with its own random source, so
// that writers never conflict.
type writer struct {
	ns      string
	r       *rand.Rand
	present map[int]bool
}

func newWriter(w int, seed uint64) *writer {
	return &writer{ns: "ns-" + strconv.Itoa(w), r: rand.New(rand.NewPCG(seed, uint64(w))), present: map[int]bool{}}
}

func (w *writer) name(i int) string { return fmt.Sprintf("cm-%03d", i) }

// populate creates n objects.
func (w *writer) populate(ctx context.Context, s *Stack, n int) error {
	for i := range n {
		if _, err := s.Create(ctx, w.ns, w.name(i), map[string]string{"v": "0"}); err != nil {
			return err
		}
		w.present[i] = true
	}
	return nil
}

// churn does n random writes over keys [0, keys).
func (w *writer) churn(ctx context.Context, s *Stack, n, keys int) error {
	for range n {
		i := w.r.IntN(keys)
		var err error
		switch {
		case !w.present[i]:
			_, err = s.Create(ctx, w.ns, w.name(i), map[string]string{"v": "0"})
			w.present[i] = err == nil
		case w.r.IntN(3) == 0:
			err = s.Delete(ctx, w.ns, w.name(i))
			w.present[i] = err != nil
		default:
			_, err = s.Update(ctx, w.ns, w.name(i), "v", strconv.Itoa(w.r.IntN(1000)))
		}
		if err != nil {
			return fmt.Errorf("%s/%s: %w", w.ns, w.name(i), err)
		}
	}
	return nil
}

// running is a reflector running in its own goroutine.
type running struct {
	r      runner
	store  *recordingStore
	cancel context.CancelFunc
	done   chan struct{}
}

func start(r runner, store *recordingStore) *running {
	ctx, cancel := context.WithCancel(context.Background())
	x := &running{r: r, store: store, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(x.done)
		r.Run(ctx)
	}()
	return x
}

// run starts a reflector of im over the env's ListerWatcher, with a new
// recording store.
func (v *env) run(im impl, watchList bool) *running {
	store := newRecordingStore()
	return start(im.new(v.t, v.lw, store, watchList), store)
}

// stop cancels Run and waits for it to return.
func (x *running) stop(t *testing.T) {
	t.Helper()
	x.cancel()
	select {
	case <-x.done:
	case <-time.After(timeout):
		t.Fatalf("Run did not return %v after its context was cancelled", timeout)
	}
}

// convergeTo waits until state() holds exactly the server's objects at
// their versions, read consistently from etcd after the writes ended, and
// more (if not nil), given the server's version, reports nothing missing.
func (v *env) convergeTo(what string, state func() map[string]string, more func(rv int64) string) {
	v.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), convergeTimeout)
	defer cancel()
	want, rv, err := v.stack.State(ctx)
	if err != nil {
		v.t.Fatalf("the server's state: %v", err)
	}
	target, _ := strconv.ParseInt(rv, 10, 64)
	for {
		last := diff(state(), want)
		if last == "" && more != nil {
			last = more(target)
		}
		if last == "" {
			return
		}
		select {
		case <-ctx.Done():
			v.t.Fatalf("convergence: %s did not reach the server's state at version %s within %v: %s\nrequests: %v", what, rv, convergeTimeout, last, v.lw.Requests())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// converge waits until the reflector's store holds the server's state and
// the reflector has published a version at least the server's.
func (v *env) converge(x *running) {
	v.t.Helper()
	v.convergeTo("the store", x.store.state, func(target int64) string {
		pub, _ := strconv.ParseInt(x.r.LastSyncResourceVersion(), 10, 64)
		if pub >= target {
			return ""
		}
		return fmt.Sprintf("published version %d, server at %d", pub, target)
	})
}

// earned fails unless every version the reflector published was served to
// it (a list's version, an event's or a bookmark's) and they never went
// back.
func (v *env) earned(x *running) {
	v.t.Helper()
	prev := int64(0)
	for _, rv := range x.store.versions() {
		if !v.lw.Served(rv) {
			v.t.Errorf("earned versions: the reflector published %q, which the server never served", rv)
		}
		n, err := strconv.ParseInt(rv, 10, 64)
		if err != nil {
			v.t.Errorf("earned versions: published %q is not a number", rv)
			continue
		}
		if n < prev {
			v.t.Errorf("earned versions: published %d after %d", n, prev)
		}
		prev = n
	}
}

// closed fails unless every watch the reflector opened was stopped by the
// time Run returned.
func (v *env) closed() {
	v.t.Helper()
	if n := v.lw.Open(); n != 0 {
		v.t.Errorf("no leak after stop: %d watches still open after Run returned", n)
		v.lw.StopAll() // as the server would at the watch's timeout, minutes later
	}
	v.lw.Wait()
}

// writers makes n writers (random source seed) and has each create per
// objects.
func (v *env) writers(ctx context.Context, seed uint64, n, per int) []*writer {
	v.t.Helper()
	ws := make([]*writer, n)
	for i := range ws {
		ws[i] = newWriter(i, seed)
		if err := ws[i].populate(ctx, v.stack, per); err != nil {
			v.t.Fatal(err)
		}
	}
	return ws
}

// writeConcurrently runs writers while fn runs and returns their error.
func writeConcurrently(ctx context.Context, s *Stack, ws []*writer, n, keys int) func() error {
	var wg sync.WaitGroup
	errs := make([]error, len(ws))
	for i, w := range ws {
		wg.Go(func() { errs[i] = w.churn(ctx, s, n, keys) })
	}
	return func() error {
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				return err
			}
		}
		return nil
	}
}

// TestSync: each reflector, streaming and listing, against the server's
// WatchList gate on and off, with two writers creating, updating and
// deleting objects while it syncs and watches. Properties: it converges
// to the server's state at the published version; it publishes only
// versions it was served; its requests have the expected shape (a
// watch-list stream and no LIST when both sides stream; a refused stream
// and a fallback LIST when only the client does; LISTs only when it
// lists); no watch is left open after Run returns.
func TestSync(t *testing.T) {
	for _, im := range impls {
		for _, client := range []bool{true, false} {
			for _, server := range []bool{true, false} {
				name := fmt.Sprintf("%s/client-watchlist=%t/server-watchlist=%t", im.name, client, server)
				t.Run(name, func(t *testing.T) {
					v := newEnv(t, server)
					ctx, cancel := context.WithTimeout(context.Background(), timeout)
					defer cancel()
					ws := v.writers(ctx, 1, 2, 100)
					x := v.run(im, client)
					wait := writeConcurrently(ctx, v.stack, ws, 200, 150)
					if err := wait(); err != nil {
						t.Fatal(err)
					}
					v.converge(x)
					x.stop(t)
					v.earned(x)
					v.closed()
					v.shapes(client, server)
				})
			}
		}
	}
}

// shapes checks the requests of a sync.
func (v *env) shapes(client, server bool) {
	v.t.Helper()
	reqs := v.lw.Requests()
	if len(reqs) == 0 {
		v.t.Fatal("request shapes: no request")
	}
	lists, streams := v.lw.Count("LIST"), v.lw.Count("WATCH-LIST")
	switch {
	case client && server:
		if lists != 0 || streams == 0 {
			v.t.Errorf("request shapes: streaming client and server: %d LISTs and %d watch-list streams, want 0 and at least 1: %v", lists, streams, reqs)
		}
	case client:
		if streams == 0 || lists == 0 {
			v.t.Errorf("request shapes: streaming client, server gate off: %d watch-list requests and %d LISTs, want a refused stream and a fallback LIST: %v", streams, lists, reqs)
		}
	default:
		if streams != 0 || lists == 0 {
			v.t.Errorf("request shapes: listing client: %d watch-list streams and %d LISTs, want none and at least 1: %v", streams, lists, reqs)
		}
	}
}

// TestRestart: an apiserver that stops delivering events (cut off), takes
// writes and an etcd compaction, and restarts: the reflector's watch is
// closed cleanly, and it watches again from its version, which the new
// watch cache (started after the writes) no longer has: 410 Expired. It
// must relist and converge. A streaming client resyncs by a new stream.
func TestRestart(t *testing.T) {
	for _, im := range impls {
		for _, client := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/client-watchlist=%t", im.name, client), func(t *testing.T) {
				v := newEnv(t, true)
				ctx, cancel := context.WithTimeout(context.Background(), timeout)
				defer cancel()
				w := v.writers(ctx, 2, 1, 50)[0]
				x := v.run(im, client)
				v.converge(x)
				// One event on the watch: a watch closed within a second
				// with no event is "very short" to both reflectors, which
				// then relist instead of watching again.
				if err := w.churn(ctx, v.stack, 1, 80); err != nil {
					t.Fatal(err)
				}
				v.converge(x)

				old := v.stack
				v.lw.Hold()
				if err := w.churn(ctx, old, 100, 80); err != nil {
					t.Fatal(err)
				}
				if _, err := old.Compact(ctx); err != nil {
					t.Fatal(err)
				}
				old.Close()
				s, err := NewStack(ctx, v.etcd.Endpoint())
				if err != nil {
					t.Fatal(err)
				}
				v.stack = s
				v.lw.SetStack(s)
				v.converge(x)
				x.stop(t)
				// A listing client watches from its version and must get
				// the 410; a streaming one resyncs by a new stream from its
				// version (not older than: no 410 is possible).
				switch {
				case client && v.lw.Count("WATCH-LIST") < 2:
					t.Errorf("restart: a streaming client did not resync by a new stream: %v", v.lw.Requests())
				case !client && v.lw.Expired() == 0:
					t.Errorf("restart: no 410 was served, so the scenario did not test the relist: %v", v.lw.Requests())
				case !client && v.lw.Count("LIST") < 2:
					t.Errorf("restart: a listing client did not relist after the 410: %v", v.lw.Requests())
				}
				v.earned(x)
				v.closed()
			})
		}
	}
}

// TestEtcdRestart: etcd restarts under a running stack and reflector; the
// stack's etcd client reconnects, and writes after the restart must reach
// the reflector's store.
func TestEtcdRestart(t *testing.T) {
	for _, im := range impls {
		t.Run(im.name, func(t *testing.T) {
			v := newEnv(t, true)
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			w := v.writers(ctx, 3, 1, 50)[0]
			x := v.run(im, true)
			v.converge(x)
			if err := v.etcd.Restart(); err != nil {
				t.Fatal(err)
			}
			// The client reconnects on its own schedule: probe with a
			// fresh object until a write goes through.
			for i := 0; ; i++ {
				_, err := v.stack.Create(ctx, "probe", fmt.Sprintf("p-%d", i), nil)
				if err == nil {
					break
				}
				if ctx.Err() != nil {
					t.Fatalf("no write went through after the etcd restart: %v", err)
				}
				time.Sleep(50 * time.Millisecond) // real time: nothing to wait on but etcd's client
			}
			if err := w.churn(ctx, v.stack, 50, 80); err != nil {
				t.Fatalf("writes after the etcd restart: %v", err)
			}
			v.converge(x)
			x.stop(t)
			v.earned(x)
			v.closed()
		})
	}
}
