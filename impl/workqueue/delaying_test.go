package workqueue

import (
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kverify/kverify/spec/delaying"
	wqspec "github.com/kverify/kverify/spec/workqueue"
	testingclock "k8s.io/utils/clock/testing"
	"pgregory.net/rapid"
)

// Every test builds its queue inside a synctest bubble, so time is fake and
// synctest.Test fails with a deadlock if a goroutine outlives the test.

func dlNew(cfg DelayingConfig[string]) *Delaying[string] { return NewDelaying(cfg) }

// dlSleep advances the bubble's clock by d and lets the queue catch up.
func dlSleep(d time.Duration) {
	time.Sleep(d)
	synctest.Wait()
}

// dlGetAll takes every queued item, in order, marking each Done.
func dlGetAll(t *testing.T, q *Delaying[string]) []string {
	t.Helper()
	var got []string
	for q.Len() > 0 {
		item, shutdown := q.Get()
		if shutdown {
			t.Fatalf("Get: shutdown with Len > 0")
		}
		got = append(got, item)
		q.Done(item)
	}
	return got
}

func dlWaiting(q *Delaying[string]) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.waiting.len()
}

func TestDelayingReadyAtBoundary(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := dlNew(DelayingConfig[string]{})
		defer q.ShutDown()
		dlSleep(3 * time.Millisecond) // the queue's creation is not time 0 of the bubble
		q.AddAfter("a", time.Second)
		dlSleep(time.Second - 1)
		if n := q.Len(); n != 0 {
			t.Fatalf("at readyAt-1ns: Len = %d, want 0", n)
		}
		dlSleep(1)
		if n := q.Len(); n != 1 {
			t.Fatalf("at readyAt: Len = %d, want 1", n)
		}
		if got := dlGetAll(t, q); !slices.Equal(got, []string{"a"}) {
			t.Fatalf("got %v", got)
		}
		if n := dlWaiting(q); n != 0 {
			t.Fatalf("%d entries still wait", n)
		}
	})
}

func TestDelayingEarlierWins(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := dlNew(DelayingConfig[string]{})
		defer q.ShutDown()
		q.AddAfter("a", 10*time.Second)
		q.AddAfter("a", time.Second)
		if n := dlWaiting(q); n != 1 {
			t.Fatalf("%d entries wait, want 1", n)
		}
		dlSleep(time.Second)
		if got := dlGetAll(t, q); !slices.Equal(got, []string{"a"}) {
			t.Fatalf("at 1s got %v", got)
		}
		dlSleep(time.Minute)
		if n := q.Len(); n != 0 {
			t.Fatalf("the discarded 10s entry fired: Len = %d", n)
		}
	})
}

func TestDelayingLaterDiscarded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := dlNew(DelayingConfig[string]{})
		defer q.ShutDown()
		q.AddAfter("a", time.Second)
		q.AddAfter("b", time.Second)
		q.AddAfter("a", 10*time.Second)
		q.AddAfter("a", time.Second) // equal: discarded too, a stays ahead of b
		if n := dlWaiting(q); n != 2 {
			t.Fatalf("%d entries wait, want 2", n)
		}
		dlSleep(time.Second)
		if got := dlGetAll(t, q); !slices.Equal(got, []string{"a", "b"}) {
			t.Fatalf("at 1s got %v", got)
		}
		dlSleep(time.Minute)
		if n := q.Len(); n != 0 {
			t.Fatalf("a later entry fired: Len = %d", n)
		}
	})
}

func TestDelayingFiresInReadyAtOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := dlNew(DelayingConfig[string]{})
		defer q.ShutDown()
		q.AddAfter("c", 3*time.Second)
		q.AddAfter("b", 2*time.Second)
		q.AddAfter("x", 2*time.Second) // tie: behind b
		q.AddAfter("a", 1*time.Second)
		q.AddAfter("y", 5*time.Second)
		q.AddAfter("y", 2*time.Second) // lowered: behind b and x
		time.Sleep(5 * time.Second)    // one wake-up for all of them
		synctest.Wait()
		if got, want := dlGetAll(t, q), []string{"a", "b", "x", "y", "c"}; !slices.Equal(got, want) {
			t.Fatalf("got %v, want %v", got, want)
		}
	})
}

func TestDelayingFiresEachAtItsTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := dlNew(DelayingConfig[string]{})
		defer q.ShutDown()
		for i := 5; i >= 1; i-- {
			q.AddAfter(fmt.Sprint(i), time.Duration(i)*time.Second)
		}
		for i := 1; i <= 5; i++ {
			dlSleep(time.Second)
			if got, want := dlGetAll(t, q), []string{fmt.Sprint(i)}; !slices.Equal(got, want) {
				t.Fatalf("at %ds got %v, want %v", i, got, want)
			}
		}
	})
}

func TestDelayingNonPositiveIsImmediate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := dlNew(DelayingConfig[string]{})
		defer q.ShutDown()
		q.AddAfter("a", 0)
		if n := q.Len(); n != 1 {
			t.Fatalf("after AddAfter(0): Len = %d", n)
		}
		q.AddAfter("b", -time.Hour)
		if n := q.Len(); n != 2 {
			t.Fatalf("after AddAfter(-1h): Len = %d", n)
		}
		if n := dlWaiting(q); n != 0 {
			t.Fatalf("%d entries wait", n)
		}
	})
}

// An item that waits can still be added at once; its waiting entry stays and
// fires later, as in client-go.
func TestDelayingAddLeavesWaitingEntry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := dlNew(DelayingConfig[string]{})
		defer q.ShutDown()
		q.AddAfter("a", time.Second)
		q.Add("a")
		if got := dlGetAll(t, q); !slices.Equal(got, []string{"a"}) {
			t.Fatalf("got %v", got)
		}
		dlSleep(time.Second)
		if got := dlGetAll(t, q); !slices.Equal(got, []string{"a"}) {
			t.Fatalf("after 1s got %v", got)
		}
	})
}

func TestDelayingHugeDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := dlNew(DelayingConfig[string]{})
		defer q.ShutDown()
		dlSleep(time.Hour) // elapsed + MaxInt64 would overflow
		q.AddAfter("max", math.MaxInt64)
		q.AddAfter("almost", math.MaxInt64-time.Minute)
		q.AddAfter("soon", time.Second)
		q.mu.Lock()
		for _, e := range q.waiting.heap {
			if item := q.waiting.slots[e.slot].item; item != "soon" && e.at != never {
				t.Errorf("%s: at = %v, want the never sentinel", item, e.at)
			}
		}
		q.mu.Unlock()
		dlSleep(time.Second)
		if got := dlGetAll(t, q); !slices.Equal(got, []string{"soon"}) {
			t.Fatalf("got %v", got)
		}
		dlSleep(100 * 365 * 24 * time.Hour)
		if n := q.Len(); n != 0 {
			t.Fatalf("a huge delay fired: Len = %d", n)
		}
		if n := dlWaiting(q); n != 2 {
			t.Fatalf("%d entries wait, want 2", n)
		}
	})
}

func TestDelayingShutDownDropsWaiting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := dlNew(DelayingConfig[string]{})
		q.AddAfter("now", 0)
		for i := range 100 {
			q.AddAfter(fmt.Sprint(i), time.Duration(i+1)*time.Second)
		}
		synctest.Wait() // the loop is parked on its timer
		q.ShutDown()    // returns only once the loop has exited
		select {
		case <-q.done:
		default:
			t.Fatal("ShutDown returned before the loop exited")
		}
		q.ShutDown() // idempotent
		if !q.ShuttingDown() {
			t.Fatal("not shutting down")
		}
		q.AddAfter("late", time.Second)
		q.AddAfter("late0", 0)
		dlSleep(time.Hour)
		if got := dlGetAll(t, q); !slices.Equal(got, []string{"now"}) {
			t.Fatalf("got %v, want the item queued before ShutDown only", got)
		}
		if _, shutdown := q.Get(); !shutdown {
			t.Fatal("Get: shutdown = false")
		}
		if n := dlWaiting(q); n != 0 {
			t.Fatalf("%d entries wait", n)
		}
	})
}

func TestDelayingShutDownWithDrain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := dlNew(DelayingConfig[string]{})
		q.AddAfter("a", 0)
		q.AddAfter("b", 0)
		q.AddAfter("later", time.Second)
		item, _ := q.Get() // a is processing, b queued

		var returned atomic.Bool
		go func() {
			q.ShutDownWithDrain()
			returned.Store(true)
		}()
		synctest.Wait()
		if returned.Load() {
			t.Fatal("ShutDownWithDrain returned with items queued and processing")
		}
		if !q.ShuttingDown() {
			t.Fatal("not shutting down during the drain")
		}
		q.Done(item)
		item, shutdown := q.Get()
		if shutdown || item != "b" {
			t.Fatalf("Get = %q, %v", item, shutdown)
		}
		dlSleep(time.Second) // "later" is ready now, but was dropped
		if returned.Load() {
			t.Fatal("ShutDownWithDrain returned with an item processing")
		}
		if n := q.Len(); n != 0 {
			t.Fatalf("a waiting item was queued during the drain: Len = %d", n)
		}
		q.Done(item)
		synctest.Wait()
		if !returned.Load() {
			t.Fatal("ShutDownWithDrain did not return")
		}
		if _, shutdown := q.Get(); !shutdown {
			t.Fatal("Get: shutdown = false")
		}
	})
}

func TestDelayingShutDownStopsDrain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := dlNew(DelayingConfig[string]{})
		q.AddAfter("a", 0)
		q.AddAfter("w", time.Hour)
		var wg sync.WaitGroup
		wg.Go(q.ShutDownWithDrain)
		synctest.Wait()
		q.ShutDown()
		wg.Wait()
	})
}

func TestDelayingManyAddAfterDoNotBlock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := dlNew(DelayingConfig[string]{})
		defer q.ShutDown()
		const n = 100_000
		// Delays descend in steps of 1ms, 1000 items per step, so that
		// most inserts become the head and poke the loop.
		delay := func(i int) time.Duration { return time.Duration(n-i)/1000*time.Millisecond + time.Second }
		const writers = 4
		var wg sync.WaitGroup
		for w := range writers {
			wg.Go(func() {
				for i := w; i < n; i += writers {
					q.AddAfter(fmt.Sprint(i), delay(i))
				}
			})
		}
		wg.Wait() // with fake time: no AddAfter waited for the loop's timer
		if got := dlWaiting(q); got != n {
			t.Fatalf("%d entries wait, want %d", got, n)
		}
		dlSleep(delay(0))
		got := dlGetAll(t, q)
		if len(got) != n {
			t.Fatalf("%d items fired, want %d", len(got), n)
		}
		last := time.Duration(0)
		for _, item := range got {
			var i int
			fmt.Sscan(item, &i)
			if d := delay(i); d < last {
				t.Fatalf("%s (delay %v) fired after an item with delay %v", item, d, last)
			} else {
				last = d
			}
		}
		w := &q.waiting
		if c := max(cap(w.heap), cap(w.slots), cap(w.free)); c > 64 {
			t.Errorf("kept capacity %d (heap %d, slots %d, free list %d) after emptying", c, cap(w.heap), cap(w.slots), cap(w.free))
		}
	})
}

// A clock whose timer fires late (a fake clock stepped past several ready
// times at once) moves every ready item, in order, and re-arms for the rest.
func TestDelayingLateTimer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fc := testingclock.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
		q := dlNew(DelayingConfig[string]{Config: Config[string]{Clock: fc}})
		defer q.ShutDown()
		q.AddAfter("d", 10*time.Second)
		q.AddAfter("c", 3*time.Second)
		q.AddAfter("b", 2*time.Second)
		q.AddAfter("a", time.Second)
		synctest.Wait()
		fc.Step(5 * time.Second)
		synctest.Wait()
		if got, want := dlGetAll(t, q), []string{"a", "b", "c"}; !slices.Equal(got, want) {
			t.Fatalf("got %v, want %v", got, want)
		}
		if !fc.HasWaiters() {
			t.Fatal("timer not re-armed for d")
		}
		fc.Step(5*time.Second - 1)
		synctest.Wait()
		if n := q.Len(); n != 0 {
			t.Fatalf("d fired early: Len = %d", n)
		}
		fc.Step(1)
		synctest.Wait()
		if got, want := dlGetAll(t, q), []string{"d"}; !slices.Equal(got, want) {
			t.Fatalf("got %v, want %v", got, want)
		}
		if fc.HasWaiters() {
			t.Fatal("timer armed with nothing waiting")
		}
	})
}

// A fake clock's timer channel can hold a stale value when the loop is woken
// by AddAfter and the timer at the same time; the loop must neither miss an
// item nor block the clock.
func TestDelayingFakeClockRaces(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fc := testingclock.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
		q := dlNew(DelayingConfig[string]{Config: Config[string]{Clock: fc}})
		defer q.ShutDown()
		for i := range 200 {
			q.AddAfter(fmt.Sprint("a", i), 5*time.Millisecond)
			synctest.Wait()
			fc.Step(5 * time.Millisecond)     // fires the timer ...
			q.AddAfter(fmt.Sprint("b", i), 1) // ... and pokes the loop
			q.AddAfter(fmt.Sprint("c", i), 2*time.Millisecond)
			synctest.Wait()
			fc.Step(2 * time.Millisecond)
			synctest.Wait()
			want := []string{fmt.Sprint("a", i), fmt.Sprint("b", i), fmt.Sprint("c", i)}
			if got := dlGetAll(t, q); !slices.Equal(got, want) {
				t.Fatalf("round %d: got %v, want %v", i, got, want)
			}
		}
	})
}

type dlCounter struct{ n atomic.Int64 }

func (c *dlCounter) Inc()            { c.n.Add(1) }
func (c *dlCounter) Dec()            { c.n.Add(-1) }
func (c *dlCounter) Set(float64)     {}
func (c *dlCounter) Observe(float64) {}

type dlProvider struct{ retries, adds dlCounter }

func (p *dlProvider) NewDepthMetric(string) GaugeMetric                         { return &dlCounter{} }
func (p *dlProvider) NewAddsMetric(string) CounterMetric                        { return &p.adds }
func (p *dlProvider) NewLatencyMetric(string) HistogramMetric                   { return &dlCounter{} }
func (p *dlProvider) NewWorkDurationMetric(string) HistogramMetric              { return &dlCounter{} }
func (p *dlProvider) NewUnfinishedWorkSecondsMetric(string) SettableGaugeMetric { return &dlCounter{} }
func (p *dlProvider) NewLongestRunningProcessorSecondsMetric(string) SettableGaugeMetric {
	return &dlCounter{}
}
func (p *dlProvider) NewRetriesMetric(string) CounterMetric { return &p.retries }

func TestDelayingRetriesMetric(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var p dlProvider
		q := dlNew(DelayingConfig[string]{Config: Config[string]{Name: "q", Metrics: &p}})
		q.AddAfter("a", 0)
		q.AddAfter("b", time.Second)
		q.AddAfter("b", time.Hour) // accepted (and discarded): counted
		q.Add("c")                 // not a retry
		if got := p.retries.n.Load(); got != 3 {
			t.Fatalf("retries = %d, want 3", got)
		}
		dlSleep(time.Second)
		if got := p.adds.n.Load(); got != 3 {
			t.Fatalf("adds = %d, want 3", got)
		}
		q.ShutDown()
		q.AddAfter("d", 0)
		q.AddAfter("e", time.Second)
		if got := p.retries.n.Load(); got != 3 {
			t.Fatalf("retries after ShutDown = %d, want 3", got)
		}

		// Without a name, no metric.
		var p2 dlProvider
		q2 := dlNew(DelayingConfig[string]{Config: Config[string]{Metrics: &p2}})
		q2.AddAfter("a", 0)
		q2.ShutDown()
		if got := p2.retries.n.Load(); got != 0 {
			t.Fatalf("unnamed queue counted %d retries", got)
		}
	})
}

// TestDelayingMatchesModel drives the queue and the spec/delaying model with
// the same random operations on fake time and compares what they return.
// Get is only called when an item is queued, so nothing blocks.
func TestDelayingMatchesModel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Not a *testing.T, so rapid does not ask for a deadline, which
		// testing forbids inside a bubble.
		rapid.Check(struct{ *testing.T }{t}, func(rt *rapid.T) {
			q := dlNew(DelayingConfig[string]{})
			defer q.ShutDown()
			var m delaying.Model
			key := rapid.SampledFrom([]string{"a", "b", "c", "d"})
			for range rapid.IntRange(1, 60).Draw(rt, "steps") {
				now := time.Now()
				switch rapid.IntRange(0, 5).Draw(rt, "op") {
				case 0, 1:
					k := key.Draw(rt, "key")
					d := time.Duration(rapid.IntRange(-1, 5).Draw(rt, "ms")) * time.Millisecond
					q.AddAfter(k, d)
					m = m.AddAfter(k, d, now)
				case 2:
					d := time.Duration(rapid.IntRange(0, 6).Draw(rt, "sleep")) * time.Millisecond / 2
					dlSleep(d)
					m = m.Advance(time.Now())
				case 3:
					k := key.Draw(rt, "key")
					q.Add(k)
					m, _ = m.Step(wqspec.Op{Kind: wqspec.Add, Key: k})
				case 4:
					if q.Len() == 0 {
						continue
					}
					item, shutdown := q.Get()
					var out wqspec.Out
					m, out = m.Step(wqspec.Op{Kind: wqspec.Get})
					if item != out.Key || shutdown != out.Shutdown {
						rt.Fatalf("Get = %q, %v; model %q, %v (model %v)", item, shutdown, out.Key, out.Shutdown, m)
					}
				case 5:
					ps := m.Queue().ProcessingKeys()
					if len(ps) == 0 {
						continue
					}
					k := rapid.SampledFrom(ps).Draw(rt, "done")
					q.Done(k)
					m, _ = m.Step(wqspec.Op{Kind: wqspec.Done, Key: k})
				}
				synctest.Wait()
				if got, want := q.Len(), len(m.Queue().Queue()); got != want {
					rt.Fatalf("Len = %d, model %d (model %v)", got, want, m)
				}
				if got, want := dlWaiting(q), len(m.Waiting()); got != want {
					rt.Fatalf("%d waiting, model %d (model %v)", got, want, m)
				}
			}
		})
	})
}

// Outside a bubble, on the real clock: Get blocks until the item is ready;
// the package's goleak TestMain checks that ShutDown joined the goroutine.
func TestDelayingRealClock(t *testing.T) {
	q := dlNew(DelayingConfig[string]{})
	defer q.ShutDown()
	start := time.Now()
	q.AddAfter("b", 20*time.Millisecond)
	q.AddAfter("a", 10*time.Millisecond)
	for _, want := range []string{"a", "b"} {
		item, shutdown := q.Get()
		if shutdown || item != want {
			t.Fatalf("Get = %q, %v; want %q", item, shutdown, want)
		}
		q.Done(item)
	}
	if el := time.Since(start); el < 20*time.Millisecond {
		t.Fatalf("b fired after %v, before its 20ms delay", el)
	}
}
