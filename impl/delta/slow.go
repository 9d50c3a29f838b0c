package delta

import (
	"time"

	utiltrace "k8s.io/utils/trace"
)

// TraceSlowPop logs a FIFO pop that was slow the way client-go does, as a
// k8s.io/utils/trace trace named name (which klog prints at verbosity 2 or
// more), with the fields client-go gives it, the extra fields, and Took,
// the time the process func took. It is what DeltaFIFO and RealFIFO do
// with a slow pop when no SlowProcess is set.
//
// client-go makes its trace before every pop that leaves more than 10 keys
// queued and logs it afterwards if the pop took long (delta_fifo.go:591-602,
// the_real_fifo.go:424-439): seven allocations per pop under a backlog,
// about half of what a pop costs, even when klog's verbosity means nothing
// can be printed. Here the FIFO only reads the clock around such a pop and
// makes the trace when the pop was slow, after the fact: the trace's own
// total time is therefore about zero, and the time process took is its
// Took field.
func TraceSlowPop(name, key string, depth int, took time.Duration, extra ...utiltrace.Field) {
	fields := append([]utiltrace.Field{
		{Key: "ID", Value: key},
		{Key: "Depth", Value: depth},
		{Key: "Reason", Value: "slow event handlers blocking the queue"},
	}, extra...)
	fields = append(fields, utiltrace.Field{Key: "Took", Value: took})
	utiltrace.New(name, fields...).Log()
}
