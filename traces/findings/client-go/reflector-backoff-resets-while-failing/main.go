// Command reflector-backoff-resets-while-failing shows that a reflector
// whose requests keep failing drops its backoff back to the initial 800ms
// every two minutes. The reflector's defaults say "If we don't backoff for
// 2min, assume API server is healthy and we reset the backoff."
// (k8s.io/client-go@v0.37.2/tools/cache/reflector.go:64), but its delay
// function is wait.Backoff.DelayWithReset (reflector.go:336), whose
// backoffManager.Step (k8s.io/apimachinery@v0.37.2/pkg/util/wait/
// backoff.go:292-304) restarts the sequence when more than 2 minutes passed
// since its last restart, not since the last backoff. Sequence: a
// ListerWatcher whose every Watch answers 429 Too Many Requests (its List
// succeeds); r := cache.NewReflectorWithOptions(lw,
// &metav1.PartialObjectMetadata{}, store, cache.ReflectorOptions{Clock:
// fakeClock}); go r.Run(stop); then advance the fake clock in 100ms steps
// and record the clock between successive Watch calls. The delays grow to
// the 30s cap ([30s, 60s) with jitter) and then, about two minutes after
// the first failure, fall back to [800ms, 1.6s) although no attempt has
// succeeded. (The 429 path waits with r.clock.After(r.delayHandler()),
// reflector.go:612,657,817, on the reflector's clock; the wait after a
// failed ListAndWatch uses the same delay function but on wait's internal
// real clock, delay.go:39, so a fake clock cannot drive it.)
package main

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	testingclock "k8s.io/utils/clock/testing"
)

// reflector is the part of cache.Reflector the sequence uses.
type reflector interface {
	Run(stopCh <-chan struct{})
}

const (
	step    = 100 * time.Millisecond // fake clock resolution of the measured delays
	horizon = 6 * time.Minute        // three reset intervals of failing without pause
	capped  = 30 * time.Second       // defaultBackoffMax: the delay has reached the cap
	initial = 2 * time.Second        // above [800ms, 1.6s), the first delay with jitter
)

func main() {
	clk := testingclock.NewFakeClock(time.Now())
	lw := &fakeLW{clock: clk}
	r := newReflector(lw, cache.NewStore(cache.MetaNamespaceKeyFunc), clk)
	stop := make(chan struct{})
	defer close(stop)
	go r.Run(stop)

	// Each round: wait until the reflector has failed another Watch and
	// waits on its clock, then advance the clock until that wait ends.
	seen := 0
	for {
		if !waitFor(2*time.Second, func() bool { return lw.count() > seen && clk.HasWaiters() }) {
			fmt.Printf("DEFECT: setup: after %d failed watch(es) the reflector made no further watch request or does not wait on its clock\n", lw.count())
			os.Exit(1)
		}
		seen = lw.count()
		times := lw.times()
		delays := gaps(times)
		maxSoFar := time.Duration(0)
		for i, d := range delays {
			if maxSoFar >= capped && d < initial {
				fmt.Printf("DEFECT: the backoff went back to its start while every request failed: after %v of 429s the delay was %v, having reached %v (gaps: %s)\n",
					times[i].Sub(times[0]), d, maxSoFar, show(delays[:i+1]))
				os.Exit(1)
			}
			maxSoFar = max(maxSoFar, d)
		}
		if elapsed := clk.Now().Sub(times[0]); elapsed >= horizon {
			fmt.Printf("OK: the backoff never restarted during %v of continuous 429s: it stayed at the cap (max %v; gaps: %s)\n", elapsed.Round(time.Second), maxSoFar, show(delays))
			return
		}
		for clk.HasWaiters() {
			clk.Step(step)
		}
	}
}

// fakeLW is a cache.ListerWatcher whose List succeeds (empty, at
// resource version "1") and whose every Watch answers 429; it records the
// clock at each Watch.
type fakeLW struct {
	clock   *testingclock.FakeClock
	mu      sync.Mutex
	watches []time.Time
}

func (lw *fakeLW) List(metav1.ListOptions) (runtime.Object, error) {
	return &metav1.PartialObjectMetadataList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}}, nil
}

func (lw *fakeLW) Watch(metav1.ListOptions) (watch.Interface, error) {
	lw.mu.Lock()
	lw.watches = append(lw.watches, lw.clock.Now())
	lw.mu.Unlock()
	return nil, apierrors.NewTooManyRequests("too many requests, please try again later", 1)
}

func (lw *fakeLW) count() int {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return len(lw.watches)
}

func (lw *fakeLW) times() []time.Time {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return append([]time.Time(nil), lw.watches...)
}

// gaps returns the clock's advance between successive watches.
func gaps(ts []time.Time) []time.Duration {
	var ds []time.Duration
	for i := 1; i < len(ts); i++ {
		ds = append(ds, ts[i].Sub(ts[i-1]))
	}
	return ds
}

func show(ds []time.Duration) string {
	s := make([]string, len(ds))
	for i, d := range ds {
		s[i] = d.String()
	}
	return strings.Join(s, " ")
}

// waitFor polls cond for up to d of real time.
func waitFor(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(100 * time.Microsecond)
	}
	return true
}
