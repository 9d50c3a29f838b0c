package workqueue

import (
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kverify/kverify/props/checkkit"
	wq "github.com/kverify/kverify/spec/workqueue"
)

// metricsWatch's gauges are the last refresh's: every unfinishedWorkPeriod
// from the queue's creation, the sum and maximum of the ages of the items
// processed then; nothing is refreshed after shutdown; an item handed out
// at an unknown time makes the refreshes that may have seen it unknown.
func TestMetricsWatchRefreshes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := new(Metrics)
		w := newMetricsWatch(rec)
		gauges := func(unfinished, longest float64) error {
			rec.UnfinishedWork.Set(unfinished)
			rec.LongestRunning.Set(longest)
			return w.check(wantMetrics{}, time.Now(), "", func() string { return "" })
		}
		expect := func(unfinished, longest float64) {
			t.Helper()
			if err := gauges(unfinished, longest); err != nil {
				t.Fatalf("at %v: %v", time.Since(w.created), err)
			}
			if err := gauges(unfinished+0.25, longest); err == nil {
				t.Fatalf("at %v: unfinished work %g passed, want %g", time.Since(w.created), unfinished+0.25, unfinished)
			}
			if err := gauges(unfinished, longest+0.25); err == nil {
				t.Fatalf("at %v: longest running %g passed, want %g", time.Since(w.created), longest+0.25, longest)
			}
		}
		expect(0, 0)
		time.Sleep(200 * time.Millisecond)
		w.handed("a", time.Now(), false) // at 0.2s
		expect(0, 0)                     // no refresh yet
		time.Sleep(500 * time.Millisecond)
		w.handed("b", time.Now(), false) // at 0.7s; refreshed at 0.5s: a is 0.3s old
		expect(0.3, 0.3)
		time.Sleep(500 * time.Millisecond) // 1.2s; refreshed at 1s: a 0.8s, b 0.3s
		expect(1.1, 0.8)
		w.done("a", time.Now())
		expect(1.1, 0.8) // until the next refresh
		time.Sleep(300 * time.Millisecond)
		expect(0.8, 0.8) // at 1.5s: b is 0.8s old
		w.done("b", time.Now())
		time.Sleep(time.Second)
		expect(0, 0) // nothing processed: both drop to 0

		// An item handed out at a time the machine did not see: the
		// gauges are not judged until a refresh without it.
		w.handed("c", time.Now(), true)
		time.Sleep(time.Second)
		if err := gauges(123, 45); err != nil {
			t.Fatalf("judged a refresh that saw an item of unknown start: %v", err)
		}
		w.done("c", time.Now())
		time.Sleep(unfinishedWorkPeriod)
		expect(0, 0)

		// No refresh after shutdown: the values stay those before it.
		w.handed("d", time.Now(), false)
		time.Sleep(time.Second)
		expect(1, 1)
		w.shutDown(time.Now())
		time.Sleep(time.Hour)
		expect(1, 1)
	})
}

// The counts are compared one by one, each with its own message.
func TestMetricsWatchCounts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := new(Metrics)
		w := newMetricsWatch(rec)
		want := wantMetrics{depth: 1, counts: wq.Counts{Adds: 2, Gets: 1, Dones: 1}, retries: 3}
		// record makes rec match want.
		record := func() {
			*rec = Metrics{}
			rec.DepthGauge.Inc()
			rec.AddsCounter.Inc()
			rec.AddsCounter.Inc()
			rec.Latency.Observe(1)
			rec.WorkDuration.Observe(1)
			for range 3 {
				rec.RetriesCounter.Inc()
			}
		}
		record()
		if err := w.check(want, time.Now(), "", func() string { return "" }); err != nil {
			t.Fatal(err)
		}
		for _, off := range []func(){rec.DepthGauge.Inc, rec.AddsCounter.Inc, func() { rec.Latency.Observe(1) }, func() { rec.WorkDuration.Observe(1) }, rec.RetriesCounter.Inc} {
			off()
			var v *checkkit.Violation
			if err := w.check(want, time.Now(), "", func() string { return "" }); !errors.As(err, &v) || v.Guarantee != GMetrics {
				t.Fatalf("a metric off by one: %v", err)
			}
			record()
		}
	})
}

// The rate-limiting machine compares metrics only for a subject that
// declares them, and then keeps its sleeps short.
func TestDelegatesMetricsFollowSubject(t *testing.T) {
	if m := delegatesMode(Subject{}); m.Metrics || m.horizon() != time.Hour {
		t.Errorf("without Subject.Metrics: %+v, horizon %v", m, m.horizon())
	}
	if m := delegatesMode(Subject{Metrics: true}); !m.Metrics || m.horizon() != time.Minute {
		t.Errorf("with Subject.Metrics: %+v, horizon %v", m, m.horizon())
	}
}
