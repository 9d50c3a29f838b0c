package ratelimit

import (
	"fmt"
	"testing"
	"time"
	"weak"

	"github.com/kverify/kverify/props/checkkit"
)

// CheckForgetReleases is the per-item state check.
const CheckForgetReleases = "ratelimit/forget-releases"

// namedLimiter is a limiter with how it was made, for messages.
type namedLimiter struct {
	name string
	l    Limiter
}

// perItem lists the limiters of s that keep per-item state, fresh.
func perItem(s Subject) []namedLimiter {
	var out []namedLimiter
	add := func(name string, l Limiter, err error) {
		if err == nil && l != nil {
			out = append(out, namedLimiter{name, l})
		}
	}
	exp := func() (Limiter, error) { return s.Exponential(time.Millisecond, time.Second) }
	l, err := exp()
	add("Exponential(1ms, 1s)", l, err)
	if s.FastSlow != nil {
		l, err := s.FastSlow(time.Millisecond, time.Second, 3)
		add("FastSlow(1ms, 1s, 3)", l, err)
		if s.MaxOf != nil {
			a, errA := exp()
			b, errB := s.FastSlow(time.Millisecond, time.Second, 3)
			if errA == nil && errB == nil {
				l, err := s.MaxOf(a, b)
				add("MaxOf(Exponential(1ms, 1s), FastSlow(1ms, 1s, 3))", l, err)
			}
		}
	}
	if s.MaxWait != nil {
		if a, err := exp(); err == nil {
			l, err := s.MaxWait(a, 100*time.Millisecond)
			add("MaxWait(Exponential(1ms, 1s), 100ms)", l, err)
		}
	}
	if s.DefaultItemBased != nil {
		add("DefaultItemBased()", s.DefaultItemBased(), nil)
	}
	if s.DefaultController != nil {
		add("DefaultController()", s.DefaultController(), nil)
	}
	return out
}

// forgetReleases checks that a limiter keeps nothing for an item after
// Forget: for 1, 64 and 2000 items retried 1 to 3 times and forgotten
// (while other items stay tracked), and for items forgotten twice or never
// seen, the item's key is collectable, NumRequeues is 0, and the items not
// forgotten keep their counts. Keys are probes (checkkit.Probe): a limiter
// that keeps a map entry, even with a zero count, keeps the key.
func forgetReleases(s Subject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, cfg checkkit.Config) error {
		for _, m := range perItem(s) {
			for round, n := range []int{1, 64, 2000} {
				what := fmt.Sprintf("%s: When 1 to 3 times for %d items, then Forget of each (twice for every other one), while 10 other items stay tracked", m.name, n)
				cfg.Progress.Op(what)
				keys := make([]string, n)
				probes := make([]weak.Pointer[byte], n)
				for i := range keys {
					keys[i], probes[i] = checkkit.Probe(fmt.Sprintf("%d-%d", n, i))
				}
				for i := range 10 {
					m.l.When(fmt.Sprint("kept-", i))
				}
				for i, k := range keys {
					for range i%3 + 1 {
						m.l.When(k)
					}
				}
				for i, k := range keys {
					m.l.Forget(k)
					if i%2 == 1 {
						m.l.Forget(k)
					}
					if got := m.l.NumRequeues(k); got != 0 {
						return checkkit.Broke(GForgetReleases, "%s: NumRequeues is %d after Forget, want 0", what, got)
					}
				}
				clear(keys)
				if held := checkkit.Held(probes...); len(held) > 0 {
					return checkkit.Broke(GForgetReleases, "%s: %d of the %d forgotten items are still referenced by the limiter (the %dth first)", what, len(held), n, held[0])
				}
				for i := range 10 {
					if got := m.l.NumRequeues(fmt.Sprint("kept-", i)); got != round+1 {
						return checkkit.Broke(GForgetReleases, "%s: an item retried %d times and never forgotten has NumRequeues %d", what, round+1, got)
					}
				}
			}
			// Forget of an item never seen must not create state for it.
			what := m.name + ": Forget and NumRequeues of an item never seen"
			cfg.Progress.Op(what)
			k, p := checkkit.Probe("never-seen")
			m.l.Forget(k)
			m.l.NumRequeues(k)
			k = ""
			if len(checkkit.Held(p)) > 0 {
				return checkkit.Broke(GForgetReleases, "%s: the item is referenced by the limiter afterwards", what)
			}
		}
		return nil
	}
}
