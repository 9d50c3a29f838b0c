package lasso

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kverify/kverify/internal/kvenv"
	pctrl "github.com/kverify/kverify/props/controller"
	"github.com/kverify/kverify/props/modelserver"
	"github.com/kverify/kverify/spec/apiserver"
	"github.com/kverify/kverify/subjects/ours"
	"github.com/kverify/kverify/subjects/upstream"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
)

// benchObjects and benchWorkers are BenchmarkController's workload: 10,000
// objects, reconciled by 8 workers.
const (
	benchObjects = 10_000
	benchWorkers = 8
)

// BenchmarkController runs lasso's controller stack beside ours
// (impl/controller, subjects/ours) and client-go's parts composed as its
// sample controller composes them (subjects/upstream), in one run, through
// the same props/controller Subject API and on the same work: a model
// server (props/modelserver) holding benchObjects objects, and a Setup
// with it as Server, benchWorkers workers, client-go's per-item limiter
// (5ms, 1000s), no watch-list, and a reconciler that reads the key's
// object from the controller's cache and counts it.
//
//   - phase=list, one op: New, Run, and every object listed, handed to the
//     handler, queued and reconciled once, reading it (timed); then the
//     controller is stopped (untimed).
//   - phase=watch, one op: a controller as above, its first list
//     reconciled (untimed); then every object updated once on the server
//     and reconciled reading its new version (timed).
//
// The same Setup reaches the server in each one's own way: ours and
// client-go's informers take the model server as their ListerWatcher, in
// process; lasso lists and watches only through its REST client, so its
// requests go over HTTP, in memory (props/wire's server and transport:
// JSON encoded and decoded, as a kube-apiserver would serve them, its
// LIST paged by 500 since lasso turns client-go's LIST from "0" into one
// from ""), and its Reader turns each cached ConfigMap into the metadata
// the check reads (a deep copy of its ObjectMeta). So lasso's numbers
// include the wire, which the in-process ones do not: they are the cost of
// lasso as an application runs it, against ours as it runs in process.
// ns/object is ns/op per object of the op (allocs/op and B/op divide by
// benchObjects the same way).
//
//	go test -run '^$' -bench Controller -benchmem -count 3 -p 1 . > ctl.out
//	benchstat -col /impl ctl.out
//
// impl=lasso is the subject as the checks build it, whose client keeps
// client-go's default client-side rate limit (5 requests a second after a
// burst of 10: rest.Config sets none); impl=lasso-ratelimit-none is the
// same stack with that limit off, as wrangler applications configure their
// clients (restConfig.RateLimiter = ratelimit.None, wrangler's name for
// client-go's flowcontrol.NewFakeAlwaysRateLimiter).
func BenchmarkController(b *testing.B) {
	impls := []struct {
		name    string
		subject func() pctrl.Subject
	}{{"ours", ours.Controller}, {"upstream", upstream.Controller}, {Name, Controller}, {Name + "-ratelimit-none", unthrottled}}
	k := max(benchRound(b), 0) % len(impls)
	impls = append(slices.Clone(impls[k:]), impls[:k]...)
	for _, phase := range []string{"list", "watch"} {
		for _, impl := range impls {
			b.Run("phase="+phase+"/impl="+impl.name, func(b *testing.B) {
				benchController(b, impl.subject(), phase == "watch", benchObjects, benchWorkers)
			})
		}
	}
}

// unthrottled is Controller with lasso's client unthrottled.
func unthrottled() pctrl.Subject {
	s := Controller()
	s.New = func(setup pctrl.Setup) (pctrl.Controller, error) {
		return build(setup, variant{rest: func(c *rest.Config) { c.RateLimiter = flowcontrol.NewFakeAlwaysRateLimiter() }})
	}
	return s
}

// benchRound is the round of kverify bench this process runs
// (KVERIFY_BENCH_ROUND), which rotates the implementations so that each
// runs first in its process as often as the others.
func benchRound(b *testing.B) int {
	c, err := kvenv.Lookup("KVERIFY_BENCH_ROUND")
	if err != nil {
		b.Fatal(err)
	}
	return c.BenchRound
}

func benchController(b *testing.B, s pctrl.Subject, watchPhase bool, objects, workers int) {
	b.ReportAllocs()
	b.StopTimer()
	// One op untimed first: the first op of a process runs with the GC's
	// heap goal at its start, slower than every later one.
	if b.N == 1 {
		if err := benchControllerOnce(b, s, watchPhase, objects, workers, false); err != nil {
			b.Fatal(err)
		}
	}
	for range b.N {
		if err := benchControllerOnce(b, s, watchPhase, objects, workers, true); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*objects), "ns/object")
}

// benchControllerOnce is one op: see BenchmarkController. With timed
// false it runs the op without starting the timer.
func benchControllerOnce(b *testing.B, s pctrl.Subject, watchPhase bool, objects, workers int, timed bool) error {
	baseline := runtime.NumGoroutine()
	srv := modelserver.NewServer(apiserver.Config{}, nil)
	keys := make([]string, objects)
	index := make(map[string]int, objects)
	for i := range keys {
		keys[i] = fmt.Sprintf("default/o%05d", i)
		index[keys[i]] = i
		if err := srv.Create(keys[i]); err != nil {
			return err
		}
	}
	// phase[i] is the last phase key i was reconciled in (1: listed, 2:
	// updated), at version seen[i]; left counts the keys behind.
	phase := make([]atomic.Int32, objects)
	seen := make([]atomic.Int64, objects)
	var left atomic.Int64
	left.Store(int64(objects))
	var want atomic.Int32
	want.Store(1)
	reached := make(chan struct{}, 2)
	var bad atomic.Value
	reconcile := func(_ context.Context, key string, cache pctrl.Reader) (pctrl.Result, error) {
		obj, ok, err := cache.Get(key)
		m, isMeta := obj.(*metav1.PartialObjectMetadata)
		if err != nil || !ok || !isMeta {
			bad.CompareAndSwap(nil, fmt.Sprintf("the cache's Get(%s): %T, %v, %v", key, obj, ok, err))
			return pctrl.Result{}, nil
		}
		rv, _ := strconv.ParseInt(m.ResourceVersion, 10, 64)
		i, p := index[key], want.Load()
		if p == 2 && rv <= seen[i].Load() {
			return pctrl.Result{}, nil // the listed version again
		}
		if phase[i].CompareAndSwap(p-1, p) {
			seen[i].Store(rv)
			if left.Add(-1) == 0 {
				reached <- struct{}{}
			}
		}
		return pctrl.Result{}, nil
	}
	wait := func(what string) error {
		select {
		case <-reached:
			return nil
		case <-time.After(5 * time.Minute):
			return fmt.Errorf("%s: %d of %d keys not reconciled after 5 minutes", what, left.Load(), objects)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() {
		b.StopTimer()
		cancel()
		wg.Wait()
		srv.Close()
		settle(baseline)
	}()
	setup := pctrl.Setup{Server: srv, Workers: workers, BaseDelay: 5 * time.Millisecond, MaxDelay: 1000 * time.Second, Reconcile: reconcile}
	if timed && !watchPhase {
		b.StartTimer()
	}
	c, err := s.New(setup)
	if err != nil {
		return err
	}
	wg.Go(func() { c.Run(ctx) })
	if err := wait("the first list"); err != nil {
		return err
	}
	if !watchPhase {
		return checkBad(&bad)
	}
	want.Store(2)
	left.Store(int64(objects))
	if timed {
		b.StartTimer()
	}
	for _, k := range keys {
		if err := srv.Update(k); err != nil {
			return err
		}
	}
	if err := wait("the updates"); err != nil {
		return err
	}
	return checkBad(&bad)
}

func checkBad(bad *atomic.Value) error {
	if v := bad.Load(); v != nil {
		return fmt.Errorf("%s", v)
	}
	return nil
}

// settle waits, for up to 10 seconds, until no more goroutines run than
// before the op: lasso's Run returns before the goroutines it started
// (its informer's, its workers') have ended, and they must not run into
// the next op's timed part.
func settle(baseline int) {
	for deadline := time.Now().Add(10 * time.Second); runtime.NumGoroutine() > baseline && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
}
