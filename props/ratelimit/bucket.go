package ratelimit

import (
	"fmt"
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/kverify/kverify/props/checkkit"
	spec "github.com/kverify/kverify/spec/ratelimit"
	"pgregory.net/rapid"
)

// tolerance is how far a token bucket's delay may be from the model's: the
// model repeats the rate package's float64 arithmetic, fed the same instants.
const tolerance = time.Microsecond

// bucketOp is one operation of a bucket run: N consecutive Whens, a
// NumRequeues or a Forget of Item, or a Sleep (fake time).
type bucketOp struct {
	Kind  opKind
	Item  string
	N     int
	Sleep time.Duration
}

const opSleep opKind = -1

func (o bucketOp) String() string {
	switch o.Kind {
	case opSleep:
		return "Sleep(" + o.Sleep.String() + ")"
	case opNumRequeues:
		return "NumRequeues(" + o.Item + ")"
	case opForget:
		return "Forget(" + o.Item + ")"
	default:
		return "When(" + o.Item + ")"
	}
}

// The legal domain of NewBucket (issue 27, class 1): qps any number >= 0
// including +Inf (taken as rate.Inf: never delays, whatever the burst) and
// rates so small that the wait overflows a time.Duration
// (rate.InfDuration); burst any int >= 0, 0 granting no token at a finite
// rate, and bursts larger than any run of Whens (up to math.MaxInt: the
// bucket never runs dry). TestReachConstructors measures that each edge
// comes.
var (
	bucketQPSGen = rapid.OneOf(
		rapid.SampledFrom(edgeQPS),
		rapid.SampledFrom([]float64{0, 0.5, 1, 3, 10, 100, 1000, 1e6}),
		rapid.Float64Range(0.1, 1000),
	)
	bucketBurstGen = rapid.OneOf(rapid.IntRange(0, 5), rapid.SampledFrom([]int{1, 100, 1000, math.MaxInt}))
)

var bucketOpGen = rapid.Custom(func(t *rapid.T) bucketOp {
	switch r := rapid.IntRange(0, 99).Draw(t, "op"); {
	case r < 65:
		// Runs reach past the default controller's burst of 100.
		return bucketOp{Kind: opWhen, Item: rapid.SampledFrom(items).Draw(t, "item"), N: checkkit.Size(300, 5, 100).Draw(t, "n")}
	case r < 90:
		return bucketOp{Kind: opSleep, Sleep: rapid.OneOf(
			durs(time.Nanosecond, time.Microsecond, time.Millisecond, 50*time.Millisecond, 100*time.Millisecond, time.Second, 10*time.Second),
			dur(rapid.Int64Range(1, int64(5*time.Second))),
		).Draw(t, "d")}
	case r < 95:
		return bucketOp{Kind: opNumRequeues, Item: rapid.SampledFrom(items).Draw(t, "item")}
	default:
		return bucketOp{Kind: opForget, Item: rapid.SampledFrom(items).Draw(t, "item")}
	}
})

func bucket(s Subject) func(*testing.T, checkkit.Config) error {
	qpsGen, burstGen := bucketQPSGen, bucketBurstGen
	ops := rapid.SliceOfN(bucketOpGen, 1, 40)
	return func(t *testing.T, cfg checkkit.Config) error {
		if err := bucketWitness(t, s); err != nil {
			return checkkit.Save(t, cfg, Component, CheckBucket, err)
		}
		err := checkkit.Rapid(t, cfg, func(rt *rapid.T, rec *checkkit.Recorder) {
			qps := qpsGen.Draw(rt, "qps")
			burst := burstGen.Draw(rt, "burst")
			steps := ops.Draw(rt, "ops")
			runBucket(t, rt, rec, s, qps, burst, steps)
		})
		if err == nil {
			// Every edge rate with burst 0, 1 and 3, in every run.
			for _, qps := range edgeQPS {
				for _, burst := range []int{0, 1, 3} {
					if err == nil {
						err = checkkit.Rapid(t, checkkit.Config{Checks: 1, Progress: cfg.Progress}, func(rt *rapid.T, rec *checkkit.Recorder) {
							runBucket(t, rt, rec, s, qps, burst, edgeSteps)
						})
					}
				}
			}
		}
		return checkkit.Save(t, cfg, Component, CheckBucket, err)
	}
}

// edgeQPS are the refill rates at the ends of NewBucket's domain: +Inf,
// the largest finite rate (rate.Inf itself) and one so small that any wait
// overflows a time.Duration.
var edgeQPS = []float64{math.Inf(1), math.MaxFloat64, 1e-300}

// edgeSteps drive an edge bucket: Whens at one instant, then after a
// second and after a long sleep.
var edgeSteps = []bucketOp{{Kind: opWhen, Item: "a", N: 4}, {Kind: opSleep, Sleep: time.Second}, {Kind: opWhen, Item: "b", N: 2},
	{Kind: opSleep, Sleep: 1000 * time.Hour}, {Kind: opWhen, Item: "a", N: 2}}

// runBucket makes Bucket(qps, burst) and runs steps on it and the model.
func runBucket(t *testing.T, rt *rapid.T, rec *checkkit.Recorder, s Subject, qps float64, burst int, steps []bucketOp) {
	checkkit.Bubble(t, func() {
		rec.Timed()
		l, err := s.Bucket(qps, burst)
		rec.Step(fmt.Sprintf("Bucket(%v, %d)", qps, burst), "ok", errString(err))
		if err != nil {
			rec.Fail(rt, GAccepted, "Bucket(%v, %d): %v", qps, burst, err)
		}
		m := spec.NewBucket(qps, burst)
		for _, o := range steps {
			switch o.Kind {
			case opSleep:
				time.Sleep(o.Sleep)
				rec.Step(o.String(), "", "")
			case opWhen:
				for range o.N {
					now := time.Now()
					got := l.When(o.Item)
					var want time.Duration
					m, want = m.When(now)
					rec.Step(o.String(), fmtD(want), fmtD(got))
					if got < 0 {
						rec.Fail(rt, GNegative, "%s = %s", o, fmtD(got))
					}
					if !within(got, want, tolerance) {
						rec.Fail(rt, GBucket, "%s = %s, want %s (±%v)", o, fmtD(got), fmtD(want), tolerance)
					}
				}
			case opNumRequeues:
				got := l.NumRequeues(o.Item)
				rec.Step(o.String(), "0", strconv.Itoa(got))
				if got != 0 {
					rec.Fail(rt, GBucketNumRequeues, "%s = %d", o, got)
				}
			case opForget:
				l.Forget(o.Item)
				rec.Step(o.String(), "", "")
			}
		}
	})
}

// bucketWitness pins the documented shape with literal numbers: at one
// instant, the first burst Whens return 0 and the next ones k/qps; after a
// sleep the bucket has refilled by qps per second.
func bucketWitness(t *testing.T, s Subject) error {
	var err error
	checkkit.Bubble(t, func() {
		for _, c := range []struct {
			qps   float64
			burst int
		}{{10, 3}, {4, 2}, {100, 5}} {
			sc := &script{}
			sc.timed()
			l, cerr := s.Bucket(c.qps, c.burst)
			sc.step(fmt.Sprintf("Bucket(%v, %d)", c.qps, c.burst), "ok", errString(cerr))
			if cerr != nil {
				err = sc.broke(GAccepted, "Bucket(%v, %d): %v", c.qps, c.burst, cerr)
				return
			}
			period := time.Duration(float64(time.Second) / c.qps)
			when := func(want time.Duration) bool {
				got := l.When("a")
				sc.step("When(a)", fmtD(want), fmtD(got))
				if !within(got, want, tolerance) {
					err = sc.broke(GBucketBurst, "When(a) = %s, want %s", fmtD(got), fmtD(want))
					return false
				}
				return true
			}
			for range c.burst {
				if !when(0) {
					return
				}
			}
			for k := 1; k <= 3; k++ {
				if !when(time.Duration(k) * period) {
					return
				}
			}
			// Three tokens are owed; after 5 periods two are available.
			time.Sleep(5 * period)
			sc.step("Sleep("+(5*period).String()+")", "", "")
			for _, want := range []time.Duration{0, 0, period, 2 * period} {
				if !when(want) {
					return
				}
			}
		}
	})
	return err
}

// defaultController drives DefaultController through a fixed scenario in
// fake time, against the model and literal numbers.
func defaultController(s Subject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, cfg checkkit.Config) error {
		var err error
		checkkit.Bubble(t, func() { err = defaultScenario(s) })
		return checkkit.Save(t, cfg, Component, CheckDefault, err)
	}
}

func defaultScenario(s Subject) error {
	sc := &script{}
	sc.timed()
	l := s.DefaultController()
	sc.step("DefaultController()", "", "")
	m := spec.DefaultController()
	// try makes a When and checks it against the model and, if literal >=
	// 0, against the literal number; it records the step if quiet is nil
	// or the check fails, after calling quiet.
	try := func(item string, literal time.Duration, quiet func()) error {
		now := time.Now()
		got := l.When(item)
		var want time.Duration
		m, want = m.When(item, now)
		ok := got >= 0 && within(got, want, tolerance) && (literal < 0 || within(got, literal, tolerance))
		if quiet != nil && !ok {
			quiet()
		}
		if quiet == nil || !ok {
			sc.step("When("+item+")", fmtD(want), fmtD(got))
		}
		if got < 0 {
			return sc.broke(GNegative, "When(%s) = %s", item, fmtD(got))
		}
		if !ok {
			return sc.broke(GDefault, "When(%s) = %s, want %s", item, fmtD(got), fmtD(want))
		}
		return nil
	}
	when := func(item string, literal time.Duration) error { return try(item, literal, nil) }
	// fresh makes a When for each of n fresh items prefix0, prefix1, ...,
	// recorded as one step unless one fails.
	fresh := func(prefix string, n int, literal time.Duration) error {
		summary := func(k int) {
			if k > 0 {
				sc.step(fmt.Sprintf("When(%s0) .. When(%s%d)", prefix, prefix, k-1), "", "")
			}
		}
		for i := range n {
			if err := try(prefix+strconv.Itoa(i), literal, func() { summary(i) }); err != nil {
				return err
			}
		}
		summary(n)
		return nil
	}
	requeues := func(item string) error {
		got, want := l.NumRequeues(item), m.NumRequeues(item)
		sc.step("NumRequeues("+item+")", strconv.Itoa(want), strconv.Itoa(got))
		if got != want {
			return sc.broke(GDefault, "NumRequeues(%s) = %d, want %d", item, got, want)
		}
		return nil
	}
	sleep := func(d time.Duration) {
		time.Sleep(d)
		sc.step("Sleep("+d.String()+")", "", "")
	}
	// 100 fresh items take the burst: each waits its first backoff, 5ms.
	if err := fresh("i", 100, 5*time.Millisecond); err != nil {
		return err
	}
	// The bucket is empty: the 101st item waits for a token, 1/10 s.
	if err := when("i100", 100*time.Millisecond); err != nil {
		return err
	}
	if err := requeues("i100"); err != nil {
		return err
	}
	if err := requeues("fresh"); err != nil {
		return err
	}
	// The same item again, at once: the bucket dominates (200ms, 300ms,
	// ...) its backoff (5ms, 10ms, ...).
	for k := 2; k <= 6; k++ {
		if err := when("x", time.Duration(k)*100*time.Millisecond); err != nil {
			return err
		}
	}
	// After 20s the bucket is full again: the backoff dominates, up to its
	// cap of 1000s.
	sleep(20 * time.Second)
	for n := 5; n < 25; n++ {
		if err := when("x", spec.ExponentialDelay(5*time.Millisecond, 1000*time.Second, n)); err != nil {
			return err
		}
	}
	if err := requeues("x"); err != nil {
		return err
	}
	l.Forget("x")
	m = m.Forget("x")
	sc.step("Forget(x)", "", "")
	if err := requeues("x"); err != nil {
		return err
	}
	if err := when("x", 5*time.Millisecond); err != nil {
		return err
	}
	// Spend the rest of the burst, then refill half a second's worth.
	if err := fresh("j", 78, -1); err != nil {
		return err
	}
	sleep(500 * time.Millisecond)
	if err := fresh("k", 8, -1); err != nil {
		return err
	}
	return nil
}
