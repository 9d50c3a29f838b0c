package workqueue

import (
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kverify/kverify/props/checkkit"
	testingclock "k8s.io/utils/clock/testing"
)

// CheckDelayingFakeClock checks a delaying queue on an injected clock.
const CheckDelayingFakeClock = "delaying/fake-clock"

// fakeClockCheck drives a delaying queue made with an injected
// k8s.io/utils FakeClock (Deps.Clock): a step far past several ready times
// (a late timer) moves every due item in ready-time order and re-arms for
// the next; 1ns before a ready time nothing moves; and, round after round,
// AddAfter calls made right after a step that fires the timer are neither
// lost nor reordered.
func fakeClockCheck(s Subject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, cfg checkkit.Config) error {
		return checkkit.InBubble(t, func() error {
			fc := testingclock.NewFakeClock(timersEpoch)
			q := s.NewDelaying(Deps{Clock: fc})
			defer func() {
				q.ShutDown()
				synctest.Wait()
			}()
			step := func(d time.Duration) {
				cfg.Progress.Op(fmt.Sprintf("Step(%v)", d))
				fc.Step(d)
				synctest.Wait()
			}
			for _, a := range []struct {
				k string
				d time.Duration
			}{{"d", 10 * time.Second}, {"c", 3 * time.Second}, {"b", 2 * time.Second}, {"a", time.Second}} {
				q.AddAfter(a.k, a.d)
			}
			synctest.Wait()
			step(5 * time.Second)
			// Len first: a queue that moves one item per wake-up (or per
			// Get) would still hand out all three to takeAll's Gets.
			if n := q.Len(); n != 3 {
				return checkkit.Broke(GOnTime, "AddAfter d@10s, c@3s, b@2s, a@1s, then the fake clock stepped 5s at once: Len() = %d, want 3 (every due item moves when the late timer fires)", n)
			}
			if got, want := takeAll(q), []string{"a", "b", "c"}; !slices.Equal(got, want) {
				return checkkit.Broke(GReadyOrder, "AddAfter d@10s, c@3s, b@2s, a@1s, then the fake clock stepped 5s at once: took %v, want %v", got, want)
			}
			step(5*time.Second - 1)
			if n := q.Len(); n != 0 {
				return checkkit.Broke(GNotEarly, "d, due at 10s, ready at 10s-1ns (Len %d)", n)
			}
			step(1)
			if got := takeAll(q); !slices.Equal(got, []string{"d"}) {
				return checkkit.Broke(GOnTime, "after a late step the timer must be re-armed for d at 10s: took %v at 10s, want [d]", got)
			}
			for i := range 100 {
				q.AddAfter(fmt.Sprint("a", i), 5*time.Millisecond)
				synctest.Wait()
				fc.Step(5 * time.Millisecond)     // fires the timer ...
				q.AddAfter(fmt.Sprint("b", i), 1) // ... and races the loop with an AddAfter
				q.AddAfter(fmt.Sprint("c", i), 2*time.Millisecond)
				synctest.Wait()
				step(2 * time.Millisecond)
				want := []string{fmt.Sprint("a", i), fmt.Sprint("b", i), fmt.Sprint("c", i)}
				if got := takeAll(q); !slices.Equal(got, want) {
					return checkkit.Broke(GReadyOrder, "round %d: AddAfter(a,5ms), Step(5ms), AddAfter(b,1ns), AddAfter(c,2ms), Step(2ms): took %v, want %v", i, got, want)
				}
			}
			return nil
		})
	}
}
