package vectors

import (
	"time"

	pbo "github.com/kverify/kverify/props/backoff"
	spec "github.com/kverify/kverify/spec/backoff"
	"github.com/kverify/kverify/traces"
)

// The backoff's vectors, without jitter (whose random numbers are not an
// input a replayer controls): wait.Backoff's Step sequence
// (backoff/sequence: Duration grows by Factor while Steps last, clamped to
// Cap, the product saturating at math.MaxInt64) and a Delay that starts
// over after its reset interval (backoff/reset: more than Reset since the
// previous call; Sleep advances the clock). Params are in nanoseconds.
func backoffVector(seed uint64) traces.Vector {
	r := rng(seed)
	durations := []time.Duration{0, 1, 3, 800 * time.Millisecond, time.Second, 7 * time.Millisecond, 1 << 40, 1 << 62} // exact as JSON numbers
	factors := []float64{0, 0.5, 1, 1.5, 2, 3, 10}
	caps := []time.Duration{0, 30 * time.Second, time.Minute, 5 * time.Millisecond}
	p := spec.Backoff{Duration: durations[r.IntN(len(durations))], Factor: factors[r.IntN(len(factors))],
		Steps: r.IntN(12), Cap: caps[r.IntN(len(caps))]}
	if seed%4 == 0 {
		p = spec.Default()
		p.Jitter = 0
	}
	params := map[string]float64{"duration_ns": float64(p.Duration), "factor": p.Factor, "jitter": 0, "steps": float64(p.Steps), "cap_ns": float64(p.Cap)}
	var steps []traces.VStep
	if seed%2 == 0 {
		b := p
		for range 1 + r.IntN(25) {
			var d time.Duration
			d, b = b.Step()
			steps = append(steps, traces.VStep{Op: "Step", Want: &traces.Want{NS: i64d(d)}})
		}
		return traces.Vector{Header: traces.Header{Profile: "wait.Backoff", Params: params, Check: "backoff/sequence",
			Guarantees: []string{pbo.GSequence}}, Steps: steps}
	}
	resets := []time.Duration{0, time.Second, 2 * time.Minute}
	reset := resets[r.IntN(len(resets))]
	params["reset_ns"] = float64(reset)
	d := spec.NewDelay(p, reset, spec.SinceLastCall)
	var at time.Duration
	for range 1 + r.IntN(25) {
		if r.IntN(3) == 0 {
			sleeps := []time.Duration{time.Millisecond, time.Second, reset, reset + 1, 3 * time.Minute}
			s := sleeps[r.IntN(len(sleeps))]
			at += s
			steps = append(steps, traces.VStep{Op: "Sleep", NS: i64d(s)})
		}
		var delay time.Duration
		d, delay = d.Next(at, 0)
		steps = append(steps, traces.VStep{Op: "Next", Want: &traces.Want{NS: i64d(delay)}})
	}
	return traces.Vector{Header: traces.Header{Profile: "wait.Backoff, reset since the last call", Params: params, Check: "backoff/reset",
		Guarantees: []string{pbo.GResetSinceLastCall}}, Steps: steps}
}
