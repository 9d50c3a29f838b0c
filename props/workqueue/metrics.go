package workqueue

import (
	"math"
	"sync/atomic"
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
