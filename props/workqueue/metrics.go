package workqueue

import (
	"fmt"
	"math"
	"sync/atomic"
	"time"

	"github.com/kverify/kverify/props/checkkit"
	wq "github.com/kverify/kverify/spec/workqueue"
)

// Metrics records what a queue reports through its metrics provider. Its
// metric types have the Inc/Dec/Set/Observe methods of client-go's and our
// metric interfaces, so an adapter's provider can hand them out as either.
type Metrics struct {
	DepthGauge, AddsCounter, RetriesCounter Counter
	Latency, WorkDuration                   Histogram
	UnfinishedWork, LongestRunning          Settable
}

// Counter counts Inc and Dec calls; it serves gauges and counters.
type Counter struct{ n atomic.Int64 }

// Inc adds one.
func (c *Counter) Inc() { c.n.Add(1) }

// Dec subtracts one.
func (c *Counter) Dec() { c.n.Add(-1) }

// Value is the current count.
func (c *Counter) Value() int64 { return c.n.Load() }

// Histogram counts observations.
type Histogram struct{ n atomic.Int64 }

// Observe records one observation.
func (h *Histogram) Observe(float64) { h.n.Add(1) }

// Count is the number of observations.
func (h *Histogram) Count() int64 { return h.n.Load() }

// Settable keeps the last value set.
type Settable struct{ bits atomic.Uint64 }

// Set stores v.
func (s *Settable) Set(v float64) { s.bits.Store(math.Float64bits(v)) }

// Value is the last value set.
func (s *Settable) Value() float64 { return math.Float64frombits(s.bits.Load()) }

// unfinishedWorkPeriod is how often a queue with metrics refreshes its
// unfinished-work and longest-running gauges, from a ticker it starts when
// it is made: client-go's (defaultUnfinishedWorkUpdatePeriod,
// util/workqueue/queue.go:184 and 359-369, refreshing only while not
// shutting down, :351-357), which ours and controller-runtime's priority
// queue (priorityqueue.go:592-602) copy.
const unfinishedWorkPeriod = 500 * time.Millisecond

// metricsWatch is what a machine needs beyond its model to judge a queue's
// metrics: the recorder the queue reports to and the expected values of
// the gauges that depend on time. The counts come from the model
// (spec/workqueue.Model.Counts, Dirties, spec/delaying.Model.Retries); the
// unfinished-work gauges are the value the last refresh set: at the last
// tick of unfinishedWorkPeriod since the queue was made, not after
// shutdown began, the sum and the maximum of the ages of the items being
// processed then.
//
// The machine tells it when an item is handed out and marked Done, and
// when shutdown begins, each at the time it happens: the processing set is
// constant between two such calls, so each call first accounts for the
// ticks since the last one with the set as it was. An item handed out at a
// tick's instant is 0s old at that tick, so whether the queue's refresh ran
// before or after the hand-out does not matter; a Done comes after the
// ticks of its instant (the machine calls Done at a quiescent point).
type metricsWatch struct {
	rec     *Metrics
	created time.Time
	// started holds when each item being processed was handed out; the
	// zero time when the machine cannot tell (it jumped over the moment).
	started  map[string]time.Time
	lastTick time.Time // the last refresh accounted for
	stopped  bool      // shutdown began: no refresh after it
	// unfinished and longest are what the last refresh set; known is false
	// while an item of unknown start was processed at that refresh.
	unfinished, longest float64
	known               bool
}

func newMetricsWatch(rec *Metrics) *metricsWatch {
	now := time.Now()
	return &metricsWatch{rec: rec, created: now, lastTick: now, started: map[string]time.Time{}, known: true}
}

// tick accounts for the refreshes up to now with the current processing set.
func (w *metricsWatch) tick(now time.Time) {
	if w == nil || w.stopped || now.Sub(w.lastTick) < unfinishedWorkPeriod {
		return
	}
	at := w.lastTick.Add(now.Sub(w.lastTick) / unfinishedWorkPeriod * unfinishedWorkPeriod)
	w.lastTick = at
	w.unfinished, w.longest, w.known = 0, 0, true
	for _, s := range w.started {
		if s.IsZero() {
			w.known = false
			continue
		}
		age := at.Sub(s).Seconds()
		w.unfinished += age
		w.longest = max(w.longest, age)
	}
}

// handed notes that key was handed out at now; unknown says only that it
// was handed out at some time since the last call, so the refreshes since
// then are not accounted for before it joins the processing set: whether
// they saw it is unknown too.
func (w *metricsWatch) handed(key string, now time.Time, unknown bool) {
	if w == nil {
		return
	}
	if unknown {
		w.started[key] = time.Time{}
		return
	}
	w.tick(now)
	w.started[key] = now
}

// done notes the Done of key, being processed, at now.
func (w *metricsWatch) done(key string, now time.Time) {
	if w == nil {
		return
	}
	w.tick(now)
	delete(w.started, key)
}

// shutDown notes that shutdown began at now: the queue refreshes no more.
func (w *metricsWatch) shutDown(now time.Time) {
	if w == nil {
		return
	}
	w.tick(now)
	w.stopped = true
}

// wantMetrics is what the model says the metrics must show now.
type wantMetrics struct {
	depth   int64 // dirty items
	counts  wq.Counts
	retries int64
}

// check compares the recorder with want and, at now, the gauges with the
// last refresh's values; where names the moment for the violation, state
// the model's state.
func (w *metricsWatch) check(want wantMetrics, now time.Time, where string, state func() string) error {
	if w == nil {
		return nil
	}
	w.tick(now)
	m := w.rec
	switch {
	case m.DepthGauge.Value() != want.depth:
		return checkkit.Broke(GMetrics, "depth = %d, model has %d dirty item(s)%s (%s)", m.DepthGauge.Value(), want.depth, where, state())
	case m.AddsCounter.Value() != want.counts.Adds:
		return checkkit.Broke(GMetrics, "adds = %d, model made items dirty %d time(s)%s (%s)", m.AddsCounter.Value(), want.counts.Adds, where, state())
	case m.Latency.Count() != want.counts.Gets:
		return checkkit.Broke(GMetrics, "%d queue-latency observation(s), %d item(s) handed out%s", m.Latency.Count(), want.counts.Gets, where)
	case m.WorkDuration.Count() != want.counts.Dones:
		return checkkit.Broke(GMetrics, "%d work-duration observation(s), %d Done(s) of held items%s", m.WorkDuration.Count(), want.counts.Dones, where)
	case m.RetriesCounter.Value() != want.retries:
		return checkkit.Broke(GMetrics, "retries = %d, want %d: one per AddAfter (or AddRateLimited) made before shutdown, as the profile counts them, and nothing else%s", m.RetriesCounter.Value(), want.retries, where)
	}
	if !w.known {
		return nil
	}
	refresh := "no refresh yet"
	if w.lastTick.After(w.created) {
		refresh = fmt.Sprintf("refreshed at %v, every %v, with %d item(s) being processed", w.lastTick.Sub(w.created), unfinishedWorkPeriod, len(w.started))
	}
	if g := m.UnfinishedWork.Value(); !near(g, w.unfinished) {
		return checkkit.Broke(GMetrics, "unfinished work = %gs, want %gs (%s)%s", g, w.unfinished, refresh, where)
	}
	if g := m.LongestRunning.Value(); !near(g, w.longest) {
		return checkkit.Broke(GMetrics, "longest running = %gs, want %gs (%s)%s", g, w.longest, refresh, where)
	}
	return nil
}

// near compares gauge values that sum float ages in the queue's own order.
func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(1, math.Abs(b)) }
