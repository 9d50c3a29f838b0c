package vectors

import (
	"fmt"
	"time"

	prl "github.com/kverify/kverify/props/ratelimit"
	spec "github.com/kverify/kverify/spec/ratelimit"
	"github.com/kverify/kverify/traces"
)

// The rate limiters' vectors: client-go's per-item exponential limiter
// (ratelimit/exponential: the n-th When since the last Forget is
// min(base*2^n, max), exactly, also past overflow) and fast-slow limiter
// (ratelimit/fastslow), with When, NumRequeues and Forget over a few
// items. Params are in nanoseconds.
func ratelimitVector(seed uint64) traces.Vector {
	r := rng(seed)
	items := 1 + r.IntN(5)
	item := func() string { return fmt.Sprintf("i%d", r.IntN(items)) }
	var steps []traces.VStep
	var h traces.Header
	type limiter interface {
		when(string) time.Duration
		forget(string)
		requeues(string) int
	}
	var l limiter
	if seed%2 == 0 {
		bases := []time.Duration{1, 3, 5 * time.Millisecond, time.Millisecond, 7 * time.Microsecond, 1 << 20, 3 << 40}
		maxes := []time.Duration{1000 * time.Second, time.Second, 10 * time.Millisecond, 1 << 62, 0} // params are JSON numbers: exact up to 2^53, and 2^62
		base, max := bases[r.IntN(len(bases))], maxes[r.IntN(len(maxes))]
		e := &expo{m: spec.NewExponential(base, max)}
		l = e
		h = traces.Header{Profile: "client-go", Check: "ratelimit/exponential", Guarantees: []string{prl.GExponential, prl.GNumRequeues, prl.GForget},
			Params: map[string]float64{"base_ns": float64(base), "max_ns": float64(max)}}
	} else {
		fast := time.Duration(1+r.IntN(100)) * time.Millisecond
		slow := time.Duration(1+r.IntN(10)) * time.Second
		maxFast := r.IntN(6)
		f := &fastSlow{m: spec.NewFastSlow(fast, slow, maxFast)}
		l = f
		h = traces.Header{Profile: "client-go", Check: "ratelimit/fastslow", Guarantees: []string{prl.GFastSlow, prl.GNumRequeues, prl.GForget},
			Params: map[string]float64{"fast_ns": float64(fast), "slow_ns": float64(slow), "max_fast": float64(maxFast)}}
	}
	length := 5 + r.IntN(50)
	if seed%5 == 0 {
		length = 70 + r.IntN(30) // past 64 doublings of one item
		items = 1
	}
	for range length {
		k := item()
		switch p := r.IntN(10); {
		case p < 7:
			steps = append(steps, traces.VStep{Op: "When", Key: str(k), Want: &traces.Want{NS: i64d(l.when(k))}})
		case p < 9:
			steps = append(steps, traces.VStep{Op: "NumRequeues", Key: str(k), Want: &traces.Want{N: i64(l.requeues(k))}})
		default:
			l.forget(k)
			steps = append(steps, traces.VStep{Op: "Forget", Key: str(k)})
		}
	}
	return traces.Vector{Header: h, Steps: steps}
}

type expo struct{ m spec.Exponential }

func (e *expo) when(k string) (d time.Duration) { e.m, d = e.m.When(k); return d }
func (e *expo) forget(k string)                 { e.m = e.m.Forget(k) }
func (e *expo) requeues(k string) int           { return e.m.NumRequeues(k) }

type fastSlow struct{ m spec.FastSlow }

func (f *fastSlow) when(k string) (d time.Duration) { f.m, d = f.m.When(k); return d }
func (f *fastSlow) forget(k string)                 { f.m = f.m.Forget(k) }
func (f *fastSlow) requeues(k string) int           { return f.m.NumRequeues(k) }
