package workqueue

import (
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kverify/kverify/impl/ratelimit"
)

func TestRateLimitingNilLimiter(t *testing.T) {
	for name, l := range map[string]ratelimit.Limiter[string]{
		"nil interface": nil,
		"nil pointer":   (*ratelimit.ItemExponential[string])(nil),
	} {
		q, err := NewRateLimiting(RateLimitingConfig[string]{Limiter: l})
		if !errors.Is(err, ErrNilLimiter) || q != nil {
			t.Errorf("%s: NewRateLimiting = %v, %v; want nil, ErrNilLimiter", name, q, err)
		}
	}
}

// stepLimiter returns the delays it is given, in turn, and counts calls.
type stepLimiter struct {
	delays  []time.Duration
	when    map[string]int
	forgets map[string]int
}

func (l *stepLimiter) When(item string) time.Duration {
	l.when[item]++
	d := l.delays[0]
	l.delays = l.delays[1:]
	return d
}
func (l *stepLimiter) Forget(item string)          { l.forgets[item]++; l.when[item] = 0 }
func (l *stepLimiter) NumRequeues(item string) int { return l.when[item] }

func TestRateLimitingAddRateLimitedWaitsWhen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := &stepLimiter{delays: []time.Duration{time.Second, 0, -time.Second}, when: map[string]int{}, forgets: map[string]int{}}
		q, err := NewRateLimiting(RateLimitingConfig[string]{Limiter: l})
		if err != nil {
			t.Fatal(err)
		}
		defer q.ShutDown()
		q.AddRateLimited("a")
		if l.when["a"] != 1 {
			t.Fatalf("When called %d times, want 1", l.when["a"])
		}
		dlSleep(time.Second - 1)
		if n := q.Len(); n != 0 {
			t.Fatalf("ready before When's delay: Len = %d", n)
		}
		dlSleep(1)
		if n := q.Len(); n != 1 {
			t.Fatalf("not ready after When's delay: Len = %d", n)
		}
		q.AddRateLimited("b") // 0: at once
		if n := q.Len(); n != 2 {
			t.Fatalf("AddRateLimited with delay 0: Len = %d, want 2", n)
		}
		q.AddRateLimited("c") // negative: at once
		if n := q.Len(); n != 3 {
			t.Fatalf("AddRateLimited with a negative delay: Len = %d, want 3", n)
		}
	})
}

func TestRateLimitingForgetAndNumRequeues(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l, err := ratelimit.NewItemExponential[string](time.Millisecond, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		q, err := NewRateLimiting(RateLimitingConfig[string]{Limiter: l})
		if err != nil {
			t.Fatal(err)
		}
		defer q.ShutDown()
		for want := time.Millisecond; want <= 4*time.Millisecond; want *= 2 {
			q.AddRateLimited("a")
			dlSleep(want - 1)
			if n := q.Len(); n != 0 {
				t.Fatalf("ready before %v", want)
			}
			dlSleep(1)
			item, _ := q.Get()
			q.Done(item)
		}
		if n := q.NumRequeues("a"); n != 3 {
			t.Fatalf("NumRequeues = %d, want 3", n)
		}
		q.AddAfter("a", time.Hour)
		q.Forget("a")
		if n := q.NumRequeues("a"); n != 0 {
			t.Fatalf("NumRequeues after Forget = %d, want 0", n)
		}
		dlSleep(time.Hour) // Forget leaves the waiting entry alone
		if n := q.Len(); n != 1 {
			t.Fatalf("after Forget, the waiting item: Len = %d, want 1", n)
		}
	})
}

func TestRateLimitingShutDownJoins(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := &stepLimiter{delays: []time.Duration{time.Hour}, when: map[string]int{}, forgets: map[string]int{}}
		q, err := NewRateLimiting(RateLimitingConfig[string]{Limiter: l})
		if err != nil {
			t.Fatal(err)
		}
		q.AddRateLimited("a")
		q.ShutDownWithDrain()
		if !q.ShuttingDown() {
			t.Fatal("ShuttingDown = false after ShutDownWithDrain")
		}
		// synctest.Test fails if the queue's goroutine outlives the test.
	})
}
