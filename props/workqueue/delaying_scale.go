package workqueue

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kverify/kverify/props/checkkit"
	"k8s.io/utils/clock"
)

// CheckDelayingScale is the check of deduplication at scale.
const CheckDelayingScale = "delaying/scale"

// scaleSizes are the numbers of keys of delaying/scale, largest first: a
// failure is retried at the smaller sizes with the same seed, and the
// smallest that still fails is reported.
var scaleSizes = []int{6000, 1500, 400, 100, 25}

// scaleSeeds are the seeds of delaying/scale's scenarios.
var scaleSeeds = []uint64{1, 2}

// scaleCheck fills a delaying queue with thousands of waiting keys, then
// for a dozen rounds steps the clock, takes every item that became ready
// and marks it done, and issues more AddAfter calls: for keys still waiting
// (earlier and later ready times), for keys that were just taken, and
// finally for every key, after the waiting set has been drained to a tenth
// or less of its peak (so that an implementation that shrinks its
// structures has done so). Deduplication must find a waiting key however many keys came and
// went before it: each round must bring exactly the keys the model says
// are due, each once, in ready-time order. A key an AddAfter failed to
// find waits twice and comes back in a later round; a key lost from the
// index comes back early or never.
//
// The scenario is a function of the seed and the number of keys, so it
// needs no rapid: small structures (hash tables, tries) need thousands of
// keys and thousands of removals before their rare paths run, more than a
// shrinking search should carry.
func scaleCheck(s Subject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, cfg checkkit.Config) error {
		for _, seed := range scaleSeeds {
			var failed error
			for _, n := range scaleSizes {
				err := checkkit.InBubble(t, func() error { return scaleRun(s, cfg, seed, n) })
				if err == nil {
					break // smaller sizes are only tried to shrink a failure
				}
				failed = err
			}
			if failed != nil {
				return checkkit.Save(t, cfg, ComponentDelaying, CheckDelayingScale, failed)
			}
		}
		return nil
	}
}

// scaleRun is one scenario of delaying/scale with n keys.
func scaleRun(s Subject, cfg checkkit.Config, seed uint64, n int) error {
	r := rand.New(rand.NewPCG(seed, uint64(n)))
	q := s.NewDelaying(Deps{Clock: clock.RealClock{}})
	defer func() {
		stop(s.Profile, q)
		synctest.Wait()
	}()
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("item-%d", i)
	}
	t0 := time.Now()
	ready := map[string]time.Duration{} // waiting keys' ready times, from t0
	now := time.Duration(0)
	span := time.Duration(n) * time.Second // delays are 1s..span
	addAfter := func(k string) {
		d := time.Duration(1+r.IntN(n)) * time.Second
		q.AddAfter(k, d)
		if at, ok := ready[k]; !ok || now+d < at {
			ready[k] = now + d
		}
	}
	where := func(round int) string {
		return fmt.Sprintf("seed %d, %d keys, round %d (t0+%s)", seed, n, round, now)
	}
	for _, k := range keys {
		addAfter(k)
	}
	const rounds = 14
	for round := 1; round <= rounds+1; round++ {
		cfg.Progress.Op(fmt.Sprintf("round %d", round))
		step := span / 8
		if round > rounds {
			step = 2 * span // past every ready time
		}
		now += step
		time.Sleep(time.Until(t0.Add(now)))
		synctest.Wait()
		if err := scaleTake(q, ready, now, where(round)); err != nil {
			return err
		}
		var again []string // keys to AddAfter this round
		switch {
		case round <= 3: // churn: a third of the keys, waiting or not
			for range n / 3 {
				again = append(again, keys[r.IntN(n)])
			}
		case round <= 8: // let the waiting set drain to a small fraction
			for range n / 200 {
				again = append(again, keys[r.IntN(n)])
			}
		case round == 9: // refill: every key, against the survivors
			again = slices.Clone(keys)
			r.Shuffle(len(again), func(i, j int) { again[i], again[j] = again[j], again[i] })
		}
		for _, k := range again {
			addAfter(k)
		}
		synctest.Wait()
	}
	if len(ready) > 0 || q.Len() > 0 {
		return checkkit.Broke(GOnTime, "%s: %d keys still waiting in the model, Len() = %d at the end", where(rounds+1), len(ready), q.Len())
	}
	return nil
}

// scaleTake takes every queued item, marking each done, and compares them
// with the keys of ready due by now, which it removes.
func scaleTake(q Queue, ready map[string]time.Duration, now time.Duration, where string) error {
	var got []string
	seen := map[string]bool{}
	var prev time.Duration
	for q.Len() > 0 {
		if len(got) == checkkit.DrainLimit {
			return &checkkit.Unfinished{What: fmt.Sprintf("%s: taking the ready items, the queue handed out %d and Len is still %d", where, len(got), q.Len())}
		}
		k, shut := q.Get()
		if shut {
			return checkkit.Broke(GNotEarly, "%s: Get reported shutdown with Len %d, before ShutDown", where, q.Len())
		}
		q.Done(k)
		got = append(got, k)
		at, ok := ready[k]
		switch {
		case seen[k]:
			return checkkit.Broke(GEarlierWins, "%s: %s became ready twice in one round (it had one waiting entry, ready at t0+%s)", where, k, at)
		case !ok:
			return checkkit.Broke(GEarlierWins, "%s: %s became ready, but it was not waiting: an AddAfter of it while it waited made a second entry, or a later AddAfter was not discarded", where, k)
		case at > now:
			return checkkit.Broke(GNotEarly, "%s: %s became ready, but its ready time is t0+%s (a lost or mixed-up index entry?)", where, k, at)
		case at < prev:
			return checkkit.Broke(GReadyOrder, "%s: %s (ready at t0+%s) came after an item ready at t0+%s", where, k, at, prev)
		}
		seen[k], prev = true, at
	}
	var missing []string
	for k, at := range ready {
		if at <= now && !seen[k] {
			missing = append(missing, fmt.Sprintf("%s@t0+%s", k, at))
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return checkkit.Broke(GOnTime, "%s: %d due key(s) did not become ready, e.g. %v (%d became ready)", where, len(missing), missing[:min(len(missing), 5)], len(got))
	}
	for k := range seen {
		delete(ready, k)
	}
	return nil
}
