package workqueue

import (
	"fmt"
	"math"
	"testing"
	"testing/synctest"
	"time"
	"weak"

	"github.com/kverify/kverify/props/checkkit"
)

// The delaying queue's resource checks: what it lets go of and how many
// timers it holds.
const (
	CheckDelayingRetention = "delaying/retention"
	CheckDelayingOneTimer  = "delaying/one-timer"
)

// delayingRetention checks that an item the delaying queue no longer needs
// (moved to the queue, handed out and marked Done; dropped by ShutDown or
// ShutDownWithDrain; added after shutdown) is collectable while the queue
// itself is still referenced, with other items still waiting behind it,
// after its ready time was lowered, and after a burst that grew the
// waiting heap.
func delayingRetention(s Subject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, cfg checkkit.Config) error {
		return checkkit.InBubble(t, func() error {
			var (
				queues []Delaying
				probes []weak.Pointer[byte]
				cases  []string
			)
			// scenario runs body on a fresh queue on its own Timers clock;
			// body hands probe(name) items to the queue and must leave no
			// other reference to them.
			scenario := func(what string, body func(q Delaying, fc *checkkit.Timers, probe func() string)) {
				cfg.Progress.Op(what)
				fc := checkkit.NewTimers(timersEpoch)
				q := s.NewDelaying(Deps{Clock: fc})
				queues = append(queues, q)
				n := 0
				body(q, fc, func() string {
					v, wp := checkkit.Probe(fmt.Sprintf("%d-%d", len(queues), n))
					n++
					probes, cases = append(probes, wp), append(cases, what)
					return v
				})
				synctest.Wait()
			}
			step := func(fc *checkkit.Timers, d time.Duration) {
				if s.NoClock {
					time.Sleep(d) // the queue reads time.Now: the bubble's
				} else {
					fc.Step(d)
				}
				synctest.Wait()
			}
			scenario("AddAfter(p, 1s) with two items waiting for 1h and 2h; the clock steps 1s; p is taken and marked Done", func(q Delaying, fc *checkkit.Timers, probe func() string) {
				q.AddAfter("w1", time.Hour)
				q.AddAfter(probe(), time.Second)
				q.AddAfter("w2", 2*time.Hour)
				synctest.Wait()
				step(fc, time.Second)
				takeAll(q)
			})
			scenario("AddAfter(p, 3s), then AddAfter(p, 1s) lowers it, with an item waiting for 1h; the clock steps 1s; p is taken and marked Done", func(q Delaying, fc *checkkit.Timers, probe func() string) {
				p := probe()
				q.AddAfter(p, 3*time.Second)
				q.AddAfter("w", time.Hour)
				q.AddAfter(p, time.Second)
				p = ""
				synctest.Wait()
				step(fc, time.Second)
				takeAll(q)
			})
			scenario("a burst of 300 items waiting for 1s..300s, with an item waiting for 1h; the clock steps 300s; all 300 are taken and marked Done", func(q Delaying, fc *checkkit.Timers, probe func() string) {
				q.AddAfter("w", time.Hour)
				for i := range 300 {
					q.AddAfter(probe(), time.Duration(300-i)*time.Second)
				}
				synctest.Wait()
				step(fc, 300*time.Second)
				takeAll(q)
			})
			scenario("AddAfter(p, 0), taken and marked Done, with an item waiting for 1h", func(q Delaying, fc *checkkit.Timers, probe func() string) {
				q.AddAfter("w", time.Hour)
				q.AddAfter(probe(), 0)
				takeAll(q)
			})
			scenario("two items waiting for 1h and 2h when ShutDown is called", func(q Delaying, fc *checkkit.Timers, probe func() string) {
				q.AddAfter(probe(), time.Hour)
				q.AddAfter(probe(), 2*time.Hour)
				q.AddAfter(probe(), math.MaxInt64)
				synctest.Wait()
				q.ShutDown()
			})
			scenario("two items waiting for 1h and 2h when ShutDownWithDrain is called", func(q Delaying, fc *checkkit.Timers, probe func() string) {
				q.AddAfter(probe(), time.Hour)
				q.AddAfter(probe(), 2*time.Hour)
				synctest.Wait()
				q.ShutDownWithDrain()
			})
			scenario("AddAfter(p, 1s) after ShutDown", func(q Delaying, fc *checkkit.Timers, probe func() string) {
				q.ShutDown()
				q.AddAfter(probe(), time.Second)
			})
			held := checkkit.Held(probes...)
			for _, q := range queues {
				stop(s.Profile, q)
			}
			if len(held) > 0 {
				return checkkit.Broke(GNoRetention, "%d of %d items the queue no longer needs are still referenced by it; the first: %s", len(held), len(probes), cases[held[0]])
			}
			return nil
		})
	}
}

// oneTimer drives a delaying queue on a Timers clock through sequences of
// AddAfter (new heads, lowered heads, later items, huge and immediate
// delays, a burst of 200 new heads), clock steps that fire some, all or
// none of the items, and both shutdowns, counting the live timers after
// each call once the queue has settled.
func oneTimer(s Subject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, cfg checkkit.Config) error {
		return checkkit.InBubble(t, func() error {
			fc := checkkit.NewTimers(timersEpoch)
			q := s.NewDelaying(Deps{Clock: fc})
			defer stop(s.Profile, q)
			var err error
			at := func(what string, f func()) {
				if err != nil {
					return
				}
				cfg.Progress.Op(what)
				f()
				synctest.Wait()
				if n := fc.Live(); n > 1 {
					err = checkkit.Broke(GOneTimer, "after %s: %d live timers (%s)", what, n, fc.Describe())
				}
			}
			addAfter := func(k string, d time.Duration) {
				at(fmt.Sprintf("AddAfter(%s, %v)", k, d), func() { q.AddAfter(k, d) })
			}
			at("New", func() {})
			addAfter("a", 10*time.Second)
			addAfter("b", 5*time.Second)
			addAfter("c", 20*time.Second)
			addAfter("a", time.Second)
			addAfter("h", math.MaxInt64)
			addAfter("z", 0)
			at("a burst of 200 AddAfter calls, each a new head (200s down to 1s)", func() {
				for i := range 200 {
					q.AddAfter(fmt.Sprint("burst-", i), time.Duration(200-i)*time.Second)
				}
			})
			at("Step(1s) and take what is ready", func() { fc.Step(time.Second); synctest.Wait(); takeAll(q) })
			at("Step(500ms)", func() { fc.Step(500 * time.Millisecond) })
			at("Step(1h) and take what is ready", func() { fc.Step(time.Hour); synctest.Wait(); takeAll(q) })
			addAfter("y", time.Second)
			at("Step(2s) and take what is ready", func() { fc.Step(2 * time.Second); synctest.Wait(); takeAll(q) })
			addAfter("w", time.Hour)
			if err != nil {
				return err
			}
			// After a shutdown no timer may be left, however the queue
			// was stopped.
			for _, stop := range []struct {
				name string
				call func(Delaying)
			}{{"ShutDown", Delaying.ShutDown}, {"ShutDownWithDrain", Delaying.ShutDownWithDrain}} {
				fc := checkkit.NewTimers(timersEpoch)
				q := s.NewDelaying(Deps{Clock: fc})
				q.AddAfter("w", time.Hour)
				q.AddAfter("v", 2*time.Hour)
				synctest.Wait()
				cfg.Progress.Op(stop.name + " with two items waiting")
				stop.call(q)
				synctest.Wait()
				if n := fc.Live(); n > 0 {
					return checkkit.Broke(GNoTimerLeft, "after AddAfter(w, 1h), AddAfter(v, 2h) and %s: %d live timers (%s)", stop.name, n, fc.Describe())
				}
			}
			return nil
		})
	}
}
