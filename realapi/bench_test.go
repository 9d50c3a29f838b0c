package realapi

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"sync"
	"testing"
	"time"
)

// benchObjects is the size of the sync benchmark's store; REALAPI_OBJECTS
// overrides it (writing 100,000 objects into etcd takes about 13 s, once
// per process).
func benchObjects() int {
	if n, err := strconv.Atoi(os.Getenv("REALAPI_OBJECTS")); err == nil && n > 0 {
		return n
	}
	return 100_000
}

var (
	benchOnce  sync.Once
	benchEnv   *env
	benchErr   error
	benchCount int
)

// sharedEnv is one etcd and stack for the whole benchmark run, filled with
// benchObjects ConfigMaps by 16 writers. It is torn down with the process
// (benchmarks have no package-level cleanup), so the goroutine check of
// TestMain is not run by a benchmark-only invocation.
func sharedEnv(b *testing.B) *env {
	benchOnce.Do(func() {
		dir, err := os.MkdirTemp("", "realapi-bench")
		if err != nil {
			benchErr = err
			return
		}
		e, err := StartEtcd(dir)
		if err != nil {
			benchErr = err
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		s, err := NewStack(ctx, e.Endpoint())
		if err != nil {
			benchErr = err
			return
		}
		benchCount = benchObjects()
		var wg sync.WaitGroup
		errs := make([]error, 16)
		for w := range 16 {
			wg.Go(func() {
				for i := w; i < benchCount; i += 16 {
					if _, err := s.Create(ctx, "ns-"+strconv.Itoa(i%10), fmt.Sprintf("cm-%06d", i), map[string]string{"k": "v"}); err != nil {
						errs[w] = err
						return
					}
				}
			})
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				benchErr = err
				return
			}
		}
		benchEnv = &env{etcd: e, stack: s, lw: NewListerWatcher(s)}
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchEnv
}

// teardownBench stops the shared stack and etcd and removes etcd's data.
func teardownBench() {
	if benchEnv == nil {
		return
	}
	benchEnv.lw.SetStack(nil)
	benchEnv.lw.Wait()
	benchEnv.stack.Close()
	benchEnv.etcd.Stop()
	_ = os.RemoveAll(benchEnv.etcd.dir)
}

// BenchmarkSync100k: one op is a new reflector syncing the whole store
// (benchObjects ConfigMaps) through the real stack, by a watch-list stream
// and by LIST, ours and client-go's side by side; peak-MB is the largest
// heap seen during the sync above the heap before it (both reflectors'
// peaks include the same server-side work, so the ratio understates the
// reflectors' own difference).
func BenchmarkSync100k(b *testing.B) {
	for _, mode := range []struct {
		name      string
		watchList bool
	}{{"watchlist", true}, {"list", false}} {
		for _, im := range impls {
			b.Run(fmt.Sprintf("sync=%s/impl=%s", mode.name, im.name), func(b *testing.B) {
				v := sharedEnv(b)
				var peaks float64
				b.ReportAllocs()
				for range b.N {
					b.StopTimer()
					base := liveHeap()
					store := newRecordingStore()
					stopSampling := sampleHeap()
					b.StartTimer()
					x := start(im.new(b, v.lw, store, mode.watchList), store)
					for len(store.List()) < benchCount || x.r.LastSyncResourceVersion() == "" {
						time.Sleep(time.Millisecond) // polling the store: the reflector has no synced signal of its own
					}
					b.StopTimer()
					peaks += mb(stopSampling(), base)
					x.cancel()
					<-x.done
					b.StartTimer()
				}
				b.ReportMetric(peaks/float64(b.N), "peak-MB")
			})
		}
	}
}

var heapSample = []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/gc/heap/live:bytes"}}

func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	s := heapSample[1:]
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// sampleHeap samples the heap every millisecond until stop, which returns
// the peak.
func sampleHeap() (stop func() uint64) {
	quit, done := make(chan struct{}), make(chan struct{})
	var peak uint64
	go func() {
		defer close(done)
		s := make([]metrics.Sample, 1)
		s[0].Name = heapSample[0].Name
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(s)
			peak = max(peak, s[0].Value.Uint64())
			select {
			case <-quit:
				return
			case <-t.C:
			}
		}
	}()
	return func() uint64 {
		close(quit)
		<-done
		return peak
	}
}

func mb(x, base uint64) float64 {
	if x < base {
		return 0
	}
	return float64(x-base) / (1 << 20)
}
