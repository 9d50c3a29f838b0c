package workqueue

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kverify/kverify/props/checkkit"
	"k8s.io/utils/clock"
	"pgregory.net/rapid"
)

// deadlineAdd is one AddAfter of the deadline check.
type deadlineAdd struct {
	Key string
	D   time.Duration
}

var (
	deadlineKeys   = []string{"a", "b", "c", "d", "e", "f", "g", "h"}
	deadlineDelays = []time.Duration{time.Second, 0, 30 * time.Second, 1, 2 * time.Second, 5 * time.Second, maxWait, 15 * time.Second,
		time.Millisecond, -time.Second, 20 * time.Second, maxWait + 1, math.MaxInt64, math.MinInt64, math.MaxInt64 - 1}
)

// deadlineCheck adds up to 16 items (of 8 keys), each AddAfter followed by
// synctest.Wait so that the subject sees every change of its head, then
// walks the clock through every ready time r, checking Len at r-1ns, r and
// r+maxWait: it must lie between the number of items whose ready time is
// maxWait or more in the past and the number whose ready time has come.
// Nothing is taken from the queue until the end, when Gets must return the
// items in ready-time order (ties in any order).
func deadlineCheck(s Subject) func(*testing.T, checkkit.Config) error {
	addGen := rapid.Custom(func(t *rapid.T) deadlineAdd {
		return deadlineAdd{rapid.SampledFrom(deadlineKeys).Draw(t, "key"), rapid.SampledFrom(deadlineDelays).Draw(t, "d")}
	})
	return func(t *testing.T, cfg checkkit.Config) error {
		err := checkkit.Rapid(t, cfg, func(rt *rapid.T, rec *checkkit.Recorder) {
			adds := rapid.SliceOfN(addGen, 1, 16).Draw(rt, "adds")
			checkkit.Bubble(t, func() {
				q := s.NewDelaying(Deps{Clock: clock.RealClock{}})
				defer func() {
					stop(s.Profile, q)
					synctest.Wait()
				}()
				rec.Timed()
				// Let the clock run past the queue's creation, so that a
				// ready time computed as elapsed+d can overflow.
				rec.Step("Sleep(1ms)", "", "")
				time.Sleep(time.Millisecond)
				synctest.Wait()
				t0 := time.Now()
				ready := map[string]time.Time{}
				for _, a := range adds {
					q.AddAfter(a.Key, a.D)
					synctest.Wait()
					rec.Step(dStep{Kind: dAddAfter, Key: a.Key, D: a.D}.String(), "", "")
					at := t0
					if a.D > 0 {
						at = t0.Add(a.D).Round(0)
					}
					if old, ok := ready[a.Key]; !ok || at.Before(old) {
						ready[a.Key] = at
					}
				}
				comes := func(at time.Time) bool { return at.Sub(t0) <= time.Hour }
				var pts []time.Time
				for _, at := range ready {
					if comes(at) {
						pts = append(pts, at.Add(-1), at, at.Add(maxWait))
					}
				}
				pts = append(pts, t0.Add(2*time.Hour))
				slices.SortFunc(pts, func(a, b time.Time) int { return a.Compare(b) })
				pts = slices.Compact(pts)
				for _, pt := range pts {
					if pt.Before(t0) {
						continue
					}
					time.Sleep(time.Until(pt))
					synctest.Wait()
					lo, hi := 0, 0
					for _, at := range ready {
						if !at.After(pt) {
							hi++
						}
						if !at.Add(maxWait).After(pt) {
							lo++
						}
					}
					n := q.Len()
					rec.Step(fmt.Sprintf("@%s Len", pt.Sub(t0)), fmt.Sprintf("%d..%d", lo, hi), strconv.Itoa(n))
					if n >= lo && n <= hi {
						continue
					}
					// Find out which items are there, to name what broke.
					there := takeAll(q)
					if n > hi {
						g := GNotEarly
						for _, k := range there {
							if at := ready[k]; !comes(at) {
								g = GHugeNever
							}
						}
						rec.Fail(rt, g, "at t0+%s: Len() = %d, but only %d item(s) have reached their ready time (queued: %v; ready times %s)", pt.Sub(t0), n, hi, there, fmtReady(ready, t0))
					}
					var missing []string
					for k, at := range ready {
						if !at.Add(maxWait).After(pt) && !slices.Contains(there, k) {
							missing = append(missing, k)
						}
					}
					slices.Sort(missing)
					rec.Fail(rt, GWithinMaxWait, "at t0+%s: %v not ready %v or more after their ready time (queued: %v; ready times %s)", pt.Sub(t0), missing, maxWait, there, fmtReady(ready, t0))
				}
				var prev time.Time
				got := takeAll(q)
				for n, k := range got {
					rec.Step("Get", "", k)
					if at := ready[k]; at.Before(prev) {
						rec.Fail(rt, GReadyOrder, "Gets returned %v: %s (ready at t0+%s) after an item ready at t0+%s (ready times %s)", got[:n+1], k, at.Sub(t0), prev.Sub(t0), fmtReady(ready, t0))
					} else {
						prev = at
					}
				}
			})
		})
		return checkkit.Save(t, cfg, ComponentDelaying, CheckDelayingDeadline, err)
	}
}

func fmtReady(ready map[string]time.Time, t0 time.Time) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(ready)) {
		if d := ready[k].Sub(t0); d <= time.Hour {
			parts = append(parts, fmt.Sprintf("%s@%s", k, d))
		} else {
			parts = append(parts, k+"@never")
		}
	}
	return strings.Join(parts, " ")
}

// immediateDelays are the non-positive delays the immediate check probes.
var immediateDelays = []time.Duration{0, -1, -time.Hour, math.MinInt64}

// immediateCheck calls AddAfter(k, d <= 0) on a quiescent queue and reads
// Len right after it returns, without letting the queue's goroutines catch
// up; every other round k already waits for an hour. A queue that routes
// such an item through its waiting goroutine loses the race against Len at
// least once in 64 probes.
func immediateCheck(s Subject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, _ checkkit.Config) error {
		return checkkit.InBubble(t, func() error {
			q := s.NewDelaying(Deps{Clock: clock.RealClock{}})
			defer func() {
				stop(s.Profile, q)
				synctest.Wait()
			}()
			for i := range 64 {
				key := fmt.Sprintf("k%d", i)
				d := immediateDelays[i%len(immediateDelays)]
				waits := i/len(immediateDelays)%2 == 1
				if waits {
					q.AddAfter(key, time.Hour)
				}
				synctest.Wait()
				before := q.Len()
				q.AddAfter(key, d)
				if after := q.Len(); after != before+1 {
					return checkkit.Broke(GImmediate, "AddAfter(%s, %v) (waiting already: %v) returned with Len() = %d, want %d: the item was not added before the call returned", key, d, waits, after, before+1)
				}
			}
			// The waiting entries of items already queued collapse.
			time.Sleep(time.Hour)
			synctest.Wait()
			if n := q.Len(); n != 64 {
				return checkkit.Broke(GLenLaw, "after the hour: Len() = %d, want 64 (the waiting entries of queued items must collapse into them)", n)
			}
			return nil
		})
	}
}

// shutdownCheck runs the shutdown scenario with ShutDown and with
// ShutDownWithDrain (a worker holding an item).
func shutdownCheck(s Subject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, _ checkkit.Config) error {
		for _, drain := range []bool{false, true} {
			if err := checkkit.InBubble(t, func() error { return shutdownScenario(s, drain) }); err != nil {
				return err
			}
		}
		return nil
	}
}

func shutdownScenario(s Subject, drain bool) error {
	q := s.NewDelaying(Deps{Clock: clock.RealClock{}})
	defer func() {
		stop(s.Profile, q)
		synctest.Wait()
	}()
	stop, name := q.ShutDown, "ShutDown"
	if drain {
		stop, name = q.ShutDownWithDrain, "ShutDownWithDrain"
	}
	var held string
	if drain {
		q.Add("held")
		held, _ = q.Get()
	}
	// A panic in a goroutine would kill the test binary: report it.
	panics := make(chan string, 8)
	safe := func(what string) {
		if p := recover(); p != nil {
			panics <- fmt.Sprintf("%s panicked: %v", what, p)
		}
	}
	panicked := func() error {
		select {
		case p := <-panics:
			return checkkit.Broke(GNoPanic, "%s", p)
		default:
			return nil
		}
	}
	gets := make([]chan getResult, Workers)
	for i := range gets {
		ch := make(chan getResult, 1)
		gets[i] = ch
		go func() {
			defer safe("Get")
			k, sd := q.Get()
			ch <- getResult{k, sd}
		}()
	}
	for i, d := range []time.Duration{time.Second, time.Hour, math.MaxInt64} {
		q.AddAfter(fmt.Sprintf("w%d", i), d)
	}
	synctest.Wait()
	// More AddAfter calls than client-go's channel holds (1000), racing
	// with the shutdown.
	adders := make(chan struct{})
	go func() {
		defer close(adders)
		defer safe("AddAfter during " + name)
		for i := range 3000 {
			q.AddAfter(fmt.Sprintf("s%d", i%50), time.Duration(i+1)*time.Millisecond)
		}
	}()
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		defer safe(name)
		stop()
	}()
	synctest.Wait()
	if err := panicked(); err != nil {
		return err
	}
	if !drain || s.Profile.DrainIsShutDown {
		if !returned(stopped) {
			return checkkit.Broke(GShutdownReturns, "%s did not return", name)
		}
	}
	for i, ch := range gets {
		select {
		case r := <-ch:
			if !r.shutdown {
				return checkkit.Broke(GDropsWaiting, "a Get blocked before %s returned item %q although nothing was ready", name, r.key)
			}
		default:
			return checkkit.Broke(GShutdownUnblocks, "Get of worker %d, blocked on an empty queue, still blocked after %s", i, name)
		}
	}
	if !returned(adders) {
		return checkkit.Broke(GAddAfterReturns, "a goroutine calling AddAfter during %s is still blocked in it", name)
	}
	late := make(chan struct{})
	go func() {
		defer close(late)
		defer safe("AddAfter after " + name)
		for _, d := range []time.Duration{0, -1, 1, time.Second, math.MaxInt64} {
			q.AddAfter("late", d)
		}
	}()
	synctest.Wait()
	if err := panicked(); err != nil {
		return err
	}
	if !returned(late) {
		return checkkit.Broke(GAddAfterReturns, "AddAfter after %s is blocked", name)
	}
	if n := q.Len(); n != 0 {
		return checkkit.Broke(GDropsWaiting, "after %s and AddAfter(late, d <= 0): Len() = %d, want 0", name, n)
	}
	time.Sleep(time.Hour)
	synctest.Wait()
	if n := q.Len(); n != 0 {
		return checkkit.Broke(GDropsWaiting, "an hour after %s: Len() = %d, want 0: waiting items or AddAfter calls after it became ready", name, n)
	}
	if drain {
		if s.Profile.DrainIsShutDown {
			// The drain is a ShutDown: it returned at once (checked as
			// for ShutDown) and waits for nothing.
			if !returned(stopped) {
				return checkkit.Broke(GShutdownReturns, "ShutDownWithDrain, a ShutDown under the %s profile, did not return", s.Profile.Name)
			}
			q.Done(held)
			return nil
		}
		if returned(stopped) {
			return checkkit.Broke(GDrain, "ShutDownWithDrain returned while %q was still being processed", held)
		}
		q.Done(held)
		synctest.Wait()
		if !returned(stopped) {
			return checkkit.Broke(GShutdownReturns, "ShutDownWithDrain did not return after the last item was marked Done")
		}
	}
	if _, sd := q.Get(); !sd {
		return checkkit.Broke(GShutdownUnblocks, "Get after %s did not report shutdown", name)
	}
	return nil
}

// releaseCheck: a worker holds an item; ShutDown; ShutDownWithDrain (which
// waits for the item); ShutDown again must release the drain, as the queue
// model says (spec/workqueue: ShutDown makes a waiting drain return).
func releaseCheck(s Subject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, _ checkkit.Config) error {
		return checkkit.InBubble(t, func() error {
			q := s.NewDelaying(Deps{Clock: clock.RealClock{}})
			q.Add("a")
			held, _ := q.Get()
			q.AddAfter("b", time.Second)
			q.ShutDown()
			drained := make(chan struct{})
			go func() {
				defer close(drained)
				q.ShutDownWithDrain()
			}()
			synctest.Wait()
			q.ShutDown()
			synctest.Wait()
			ok := returned(drained)
			// Let a drain that ShutDown did not release finish, so the
			// bubble ends cleanly.
			q.Done(held)
			synctest.Wait()
			if !ok {
				return checkkit.Broke(GReleasesDrain, "ShutDownWithDrain, begun after ShutDown while %q was being processed, was still waiting after a second ShutDown", held)
			}
			return nil
		})
	}
}

// returned reports whether ch is closed, without blocking.
func returned(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// delayingLeak shuts down a delaying queue with metrics on, an item handed
// out and marked done, and items waiting (one with a huge delay), then looks
// for goroutines that outlive it. It runs in a synctest bubble, so that the
// queue has taken in every AddAfter before the shutdown (synctest.Wait) and
// FindLeaks' retries (about half a second) pass on the fake clock, well short
// of client-go's 10s heartbeat.
func delayingLeak(s Subject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, _ checkkit.Config) error {
		for _, drain := range []bool{false, true} {
			err := checkkit.InBubble(t, func() error {
				before := checkkit.CurrentGoroutines()
				q := s.NewDelaying(Deps{Clock: clock.RealClock{}, Metrics: true})
				// Release what the stop left running, so that a leak is
				// reported as such and not as the bubble's deadlock.
				defer func() {
					stop(s.Profile, q)
					synctest.Wait()
				}()
				q.AddAfter("a", 0)
				q.AddAfter("b", time.Hour)
				q.AddAfter("c", math.MaxInt64)
				k, _ := q.Get()
				q.Done(k)
				synctest.Wait()
				stop, name := q.ShutDown, "ShutDown"
				if drain {
					stop, name = q.ShutDownWithDrain, "ShutDownWithDrain"
				}
				if !checkkit.ReturnsWithin(checkkit.Watchdog, stop) {
					return checkkit.Broke(GShutdownReturns, "%s did not return within %v with nothing queued or processing", name, checkkit.Watchdog)
				}
				if err := checkkit.FindLeaks(before); err != nil {
					return checkkit.Broke(GNoLeak, "after %s returned: %v", name, err)
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
		return nil
	}
}
