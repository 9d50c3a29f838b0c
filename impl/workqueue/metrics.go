package workqueue

import (
	"time"

	"k8s.io/utils/clock"
)

// GaugeMetric is a value that goes up and down.
type GaugeMetric interface {
	Inc()
	Dec()
}

// SettableGaugeMetric is a value that is set.
type SettableGaugeMetric interface {
	Set(float64)
}

// CounterMetric only goes up.
type CounterMetric interface {
	Inc()
}

// HistogramMetric observes values.
type HistogramMetric interface {
	Observe(float64)
}

// MetricsProvider makes a queue's metrics. It has the shape of client-go's
// workqueue.MetricsProvider (same methods, same metric semantics); since the
// metric interfaces are this package's own types, a provider written for
// client-go needs a thin adapter whose methods return its metrics as these
// types. Unlike client-go there is no global provider: metrics are on only
// when Config names the queue and passes a provider.
type MetricsProvider interface {
	NewDepthMetric(name string) GaugeMetric
	NewAddsMetric(name string) CounterMetric
	NewLatencyMetric(name string) HistogramMetric
	NewWorkDurationMetric(name string) HistogramMetric
	NewUnfinishedWorkSecondsMetric(name string) SettableGaugeMetric
	NewLongestRunningProcessorSecondsMetric(name string) SettableGaugeMetric
	NewRetriesMetric(name string) CounterMetric
}

// queueMetrics mirrors client-go's defaultQueueMetrics. It is called with
// the queue's lock held. A nil *queueMetrics records nothing.
type queueMetrics[T comparable] struct {
	clock                   clock.Clock
	depth                   GaugeMetric
	adds                    CounterMetric
	latency                 HistogramMetric
	workDuration            HistogramMetric
	unfinishedWorkSeconds   SettableGaugeMetric
	longestRunningProcessor SettableGaugeMetric
	addTimes                map[T]time.Time
	processingStartTimes    map[T]time.Time
}

func newQueueMetrics[T comparable](p MetricsProvider, name string, c clock.Clock) *queueMetrics[T] {
	if p == nil || name == "" {
		return nil
	}
	return &queueMetrics[T]{
		clock:                   c,
		depth:                   p.NewDepthMetric(name),
		adds:                    p.NewAddsMetric(name),
		latency:                 p.NewLatencyMetric(name),
		workDuration:            p.NewWorkDurationMetric(name),
		unfinishedWorkSeconds:   p.NewUnfinishedWorkSecondsMetric(name),
		longestRunningProcessor: p.NewLongestRunningProcessorSecondsMetric(name),
		addTimes:                map[T]time.Time{},
		processingStartTimes:    map[T]time.Time{},
	}
}

func (m *queueMetrics[T]) add(item T) {
	if m == nil {
		return
	}
	m.adds.Inc()
	m.depth.Inc()
	if _, ok := m.addTimes[item]; !ok {
		m.addTimes[item] = m.clock.Now()
	}
}

func (m *queueMetrics[T]) get(item T) {
	if m == nil {
		return
	}
	m.depth.Dec()
	m.processingStartTimes[item] = m.clock.Now()
	if t, ok := m.addTimes[item]; ok {
		m.latency.Observe(m.clock.Since(t).Seconds())
		delete(m.addTimes, item)
	}
}

func (m *queueMetrics[T]) done(item T) {
	if m == nil {
		return
	}
	if t, ok := m.processingStartTimes[item]; ok {
		m.workDuration.Observe(m.clock.Since(t).Seconds())
		delete(m.processingStartTimes, item)
	}
}

func (m *queueMetrics[T]) updateUnfinishedWork() {
	var total, oldest float64
	for _, t := range m.processingStartTimes {
		age := m.clock.Since(t).Seconds()
		total += age
		if age > oldest {
			oldest = age
		}
	}
	m.unfinishedWorkSeconds.Set(total)
	m.longestRunningProcessor.Set(oldest)
}
