package subjects

// Benchmarks of our workqueue family side by side with client-go's. Every
// benchmark has the sub-benchmarks impl=ours and impl=upstream, so that
//
//	go test -run '^$' -bench . -benchmem -count 6 ./subjects > bench.out
//	benchstat -col /impl bench.out
//
// compares them (`kverify bench` does both). Both implementations are driven
// through the same small interfaces, so the dispatch cost is the same for
// both. Every benchmark joins every goroutine it starts, and shuts its
// queue down, before it returns.

import (
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/kverify/kverify/impl/ratelimit"
	wq "github.com/kverify/kverify/impl/workqueue"
	"github.com/kverify/kverify/internal/kvenv"
	pwq "github.com/kverify/kverify/props/workqueue"
	"k8s.io/client-go/util/workqueue"
)

// benchRound is the round of `kverify bench` this process runs (its
// KVERIFY_BENCH_ROUND, counted from 0); 0 outside it.
var benchRound = func() int {
	c, err := kvenv.Lookup("KVERIFY_BENCH_ROUND")
	if err != nil {
		panic(err) // a malformed round is kverify bench's bug: never a silent 0
	}
	return c.BenchRound
}()

// inRoundOrder returns the implementations rotated by the round, so that
// over kverify bench's rounds each runs first in its process as often as
// the others. Why: the first implementation of a benchmark in a process
// was measured slower for the whole benchmark, not only its first op
// (BenchmarkRing's grow-100k on 2 cores: ours/upstream 1.02x with ours
// first, 0.86x with upstream first), and in a fixed order that bias fell
// on ours in every round.
func inRoundOrder[E any](impls []E) []E {
	k := max(benchRound, 0) % max(len(impls), 1)
	return append(slices.Clone(impls[k:]), impls[:k]...)
}

// warm runs one op of a heavy benchmark untimed before the timed ones, in
// the probe run with b.N == 1 that the testing package starts every
// benchmark with. Why: an op that allocates tens of MiB runs in a fresh
// process with the GC's heap goal at its 4 MiB start, and measured 2.5
// times slower than the next op (FIFOAddPop at 100k keys: 265 ms against
// 108 ms). Such an op takes longer than a 200 ms benchtime, so the probe
// run is the only run, and whichever implementation ran first in the
// process was measured cold while the others were measured warm. A
// controller's informer runs warm. op must leave the timer running.
func warm(b *testing.B, op func()) {
	if b.N != 1 {
		return
	}
	op()
	b.ResetTimer()
}

// benchQueue is the part of a work queue the benchmarks drive.
type benchQueue interface {
	Add(item string)
	Get() (item string, shutdown bool)
	Done(item string)
	ShutDown()
}

// benchDelaying is a delaying queue.
type benchDelaying interface {
	benchQueue
	AddAfter(item string, delay time.Duration)
}

// benchRateLimiting is a rate-limiting queue.
type benchRateLimiting interface {
	benchDelaying
	AddRateLimited(item string)
	Forget(item string)
	NumRequeues(item string) int
}

type benchImpl struct {
	name            string
	newQueue        func() benchQueue
	newDelaying     func() benchDelaying
	newRateLimiting func(b *testing.B, base, max time.Duration) benchRateLimiting
}

var benchImpls = []benchImpl{
	{
		name:        Ours,
		newQueue:    func() benchQueue { return wq.New(wq.Config[string]{}) },
		newDelaying: func() benchDelaying { return wq.NewDelaying(wq.DelayingConfig[string]{}) },
		newRateLimiting: func(b *testing.B, base, max time.Duration) benchRateLimiting {
			lim, err := ratelimit.NewItemExponential[string](base, max)
			if err != nil {
				b.Fatal(err)
			}
			q, err := wq.NewRateLimiting(wq.RateLimitingConfig[string]{Limiter: lim})
			if err != nil {
				b.Fatal(err)
			}
			return q
		},
	},
	{
		name:        Upstream,
		newQueue:    func() benchQueue { return workqueue.NewTyped[string]() },
		newDelaying: func() benchDelaying { return workqueue.NewTypedDelayingQueue[string]() },
		newRateLimiting: func(b *testing.B, base, max time.Duration) benchRateLimiting {
			return workqueue.NewTypedRateLimitingQueue(workqueue.NewTypedItemExponentialFailureRateLimiter[string](base, max))
		},
	},
}

// benchKeys returns n distinct keys, built before any timed region so that
// string formatting is not measured.
func benchKeys(n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = "namespace-" + strconv.Itoa(i%37) + "/object-" + strconv.Itoa(i)
	}
	return keys
}

// BenchmarkQueue measures the plain queue under contention, with a backlog
// (props/workqueue.Benchmark says how), ours beside client-go's.
func BenchmarkQueue(b *testing.B) {
	for _, workers := range []int{1, 8} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			for _, impl := range inRoundOrder(benchImpls) {
				b.Run("impl="+impl.name, func(b *testing.B) {
					pwq.Benchmark(b, impl.newQueue(), workers)
				})
			}
		})
	}
}

// addAfterN is the number of AddAfter calls per op of BenchmarkAddAfter100k.
const addAfterN = 100_000

var addAfterKeys = benchKeys(addAfterN)

// BenchmarkAddAfter100k measures filling a delaying queue: one op makes a
// queue, does 100k AddAfter with distinct keys and distinct delays of
// 1h + i µs (so that nothing fires and every call inserts into the waiting
// set), and shuts the queue down. ns/AddAfter is sec/op divided by 100k.
func BenchmarkAddAfter100k(b *testing.B) {
	for _, impl := range inRoundOrder(benchImpls) {
		b.Run("impl="+impl.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				q := impl.newDelaying()
				for i, key := range addAfterKeys {
					q.AddAfter(key, time.Hour+time.Duration(i)*time.Microsecond)
				}
				q.ShutDown()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/addAfterN, "ns/AddAfter")
		})
	}
}

// Parameters of BenchmarkRateLimitedRequeue.
const (
	requeueKeys     = 32              // keys in circulation
	requeueFailures = 6               // failed attempts of a key before it succeeds
	requeueBase     = time.Nanosecond // delays 1ns, 2ns, ... 32ns: short
	requeueMax      = time.Microsecond
)

var requeueKeySet = benchKeys(requeueKeys)

// BenchmarkRateLimitedRequeue measures the retry path of a controller on the
// real clock. One op is one round: the requeueKeys keys are added, and one
// worker (the benchmark goroutine) processes them until each has failed
// requeueFailures times (Get, AddRateLimited, Done) and then succeeded
// (Get, Forget, Done). A round is thus 32 Adds, 224 Get/Done cycles, 192
// AddRateLimited and 32 Forget calls, the same for both implementations and
// every round; only when the short delays fire depends on the clock, and
// the queue and the limiter are empty again at the end of a round. The
// per-item exponential limiter (1ns base, 1µs cap) keeps the delays at most
// 32ns, so the benchmark measures the queue's own cost and latency of
// moving a ready item back.
func BenchmarkRateLimitedRequeue(b *testing.B) {
	for _, impl := range inRoundOrder(benchImpls) {
		b.Run("impl="+impl.name, func(b *testing.B) {
			b.ReportAllocs()
			q := impl.newRateLimiting(b, requeueBase, requeueMax)
			defer q.ShutDown()
			for b.Loop() {
				for _, key := range requeueKeySet {
					q.Add(key)
				}
				for left := requeueKeys; left > 0; {
					item, shutdown := q.Get()
					if shutdown {
						b.Fatal("queue shut down")
					}
					if q.NumRequeues(item) < requeueFailures {
						q.AddRateLimited(item)
					} else {
						q.Forget(item)
						left--
					}
					q.Done(item)
				}
			}
		})
	}
}
