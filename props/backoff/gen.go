package backoff

import (
	"math"
	"time"

	"github.com/kverify/kverify/props/checkkit"
	spec "github.com/kverify/kverify/spec/backoff"
	"pgregory.net/rapid"
)

// maxSteps is the most steps a generated backoff has: past the reflector's
// 38, and enough for a factor of 2 to overflow any duration above 2^3ns.
const maxSteps = 60

// spread64 draws from [lo, hi] (lo >= 1) with every doubling of the range
// as likely as the others, so that huge values come up as often as small
// ones.
func spread64(t *rapid.T, label string, lo, hi int64) int64 {
	var bands [][2]int64
	for b := lo; ; {
		up := hi
		if b <= hi/2 {
			up = 2 * b
		}
		bands = append(bands, [2]int64{b, up})
		if up == hi {
			break
		}
		b = up + 1
	}
	band := rapid.SampledFrom(bands).Draw(t, label+" band")
	return rapid.Int64Range(band[0], band[1]).Draw(t, label)
}

// nearOne is the largest float64 below 1, the largest random number.
var nearOne = math.Nextafter(1, 0)

// durationGen draws base durations: landmarks, anything from 1ns to ten
// hours, and huge values near math.MaxInt64 whose products overflow.
func durationGen(t *rapid.T) time.Duration {
	switch checkkit.Choice(3, 3, 2).Draw(t, "duration kind") {
	case 0:
		return rapid.SampledFrom([]time.Duration{0, 1, 2, 3, time.Microsecond, time.Millisecond,
			spec.DefaultInitial, time.Second, time.Minute, time.Hour}).Draw(t, "duration")
	case 1:
		return time.Duration(spread64(t, "duration", 1, int64(10*time.Hour)))
	}
	if rapid.Bool().Draw(t, "extreme") {
		return rapid.SampledFrom([]time.Duration{spec.MaxDuration, spec.MaxDuration - 1, 1 << 62, 1<<62 + 1,
			spec.MaxDuration / 3, 1<<53 + 1}).Draw(t, "duration")
	}
	return time.Duration(rapid.Int64Range(1<<53, math.MaxInt64).Draw(t, "duration"))
}

// factorGen draws factors from 0 to 10: the ones that keep (0, 1), shrink
// and grow, and any in between.
func factorGen(t *rapid.T) float64 {
	if checkkit.Choice(3, 2).Draw(t, "factor kind") == 0 {
		return rapid.SampledFrom([]float64{0, 1, 2, 0.5, 1.5, 10, 3, 0.1}).Draw(t, "factor")
	}
	return rapid.Float64Range(0, 10).Draw(t, "factor")
}

// stepsGen draws Steps: 0, small, around the reflector's 38, up to
// maxSteps.
func stepsGen(t *rapid.T) int {
	if checkkit.Choice(1, 5).Draw(t, "steps kind") == 0 {
		return 0
	}
	return checkkit.Size(maxSteps, spec.DefaultSteps).Draw(t, "steps")
}

// capGen draws a cap for d, f and steps: none, one the growth reaches
// exactly (or misses by 1ns), one below d, landmarks, or anything.
func capGen(t *rapid.T, d time.Duration, f float64, steps int) time.Duration {
	switch checkkit.Choice(2, 3, 1, 1, 1).Draw(t, "cap kind") {
	case 0:
		return 0
	case 1:
		// The base after k free steps, and 1ns either side of it.
		b := spec.Backoff{Duration: d, Factor: f, Steps: steps}
		for range rapid.IntRange(0, max(steps, 1)).Draw(t, "cap after") {
			_, b = b.Step()
		}
		c := b.Duration + time.Duration(rapid.IntRange(-1, 1).Draw(t, "cap offset"))
		if b.Duration == spec.MaxDuration && c < 0 {
			c = spec.MaxDuration
		}
		return max(c, 1)
	case 2:
		return time.Duration(spread64(t, "cap", 1, max(int64(d)-1, 1)))
	case 3:
		return rapid.SampledFrom([]time.Duration{1, spec.DefaultCap, time.Hour, spec.MaxDuration}).Draw(t, "cap")
	}
	return time.Duration(spread64(t, "cap", 1, math.MaxInt64))
}

// paramsGen draws valid parameters with the given jitter generator.
func paramsGen(t *rapid.T, jitter func(*rapid.T) float64) Params {
	p := Params{Duration: durationGen(t), Factor: factorGen(t), Steps: stepsGen(t)}
	p.Cap = capGen(t, p.Duration, p.Factor, p.Steps)
	p.Jitter = jitter(t)
	return p
}

func noJitter(*rapid.T) float64 { return 0 }

// jitterGen draws jitters above 0: landmarks (the reflector's 1.0) and any
// up to 10.
func jitterGen(t *rapid.T) float64 {
	if checkkit.Choice(3, 2).Draw(t, "jitter kind") == 0 {
		return rapid.SampledFrom([]float64{1, 0.5, 0.1, 2, 1e-9, 10}).Draw(t, "jitter")
	}
	return rapid.Float64Range(1e-9, 10).Draw(t, "jitter")
}

// randGen draws the random numbers of jitter: the ends of [0, 1) and
// anything in between.
func randGen(t *rapid.T) float64 {
	if checkkit.Choice(1, 1).Draw(t, "rand kind") == 0 {
		return rapid.SampledFrom([]float64{0, nearOne, 0.5, 0.999999, 1e-9}).Draw(t, "rand")
	}
	return rapid.Float64Range(0, nearOne).Draw(t, "rand")
}

// ordinaryParamsGen draws valid parameters without jitter whose products
// stay far below math.MaxInt64 (durations up to an hour, a positive cap up
// to 1000h), for the reset checks: their subject must not fail them for
// an overflow that backoff/sequence reports.
func ordinaryParamsGen(t *rapid.T) Params {
	if checkkit.Choice(1, 4).Draw(t, "params kind") == 0 {
		p := fromSpec(spec.Default())
		p.Jitter = 0
		return p
	}
	p := Params{Factor: factorGen(t), Steps: stepsGen(t)}
	if rapid.Bool().Draw(t, "landmark duration") {
		p.Duration = rapid.SampledFrom([]time.Duration{0, 1, time.Millisecond, spec.DefaultInitial, time.Second, time.Minute}).Draw(t, "duration")
	} else {
		p.Duration = time.Duration(spread64(t, "duration", 1, int64(time.Hour)))
	}
	if rapid.Bool().Draw(t, "landmark cap") {
		p.Cap = rapid.SampledFrom([]time.Duration{1, spec.DefaultCap, time.Hour, 1000 * time.Hour}).Draw(t, "cap")
	} else {
		p.Cap = time.Duration(spread64(t, "cap", 1, int64(1000*time.Hour)))
	}
	return p
}

// resetGen draws a reset interval: 0 (never) when allowed, landmarks (the
// reflector's 2 minutes) or anything up to two hours.
func resetGen(t *rapid.T, zero bool) time.Duration {
	w0 := 0
	if zero {
		w0 = 1
	}
	switch checkkit.Choice(w0, 2, 2).Draw(t, "reset kind") {
	case 0:
		return 0
	case 1:
		return rapid.SampledFrom([]time.Duration{1, time.Second, spec.DefaultReset, time.Hour}).Draw(t, "reset")
	}
	return time.Duration(spread64(t, "reset", 1, int64(2*time.Hour)))
}

// gapGen draws the time before a call: none (a burst of failures), the
// reset interval or 1ns either side of it, less than two intervals, up to
// an hour, or a clock set back (issue 27, class 3: the Delay's clock is a
// wall clock, which NTP or an operator can move back) by 1ns, by the reset
// interval or by up to an hour. The legal domain of a gap is every
// duration: Next reads whatever the clock says.
func gapGen(t *rapid.T, reset time.Duration) time.Duration {
	switch checkkit.Choice(4, 2, 2, 2, 2, 1, 2).Draw(t, "gap kind") {
	case 6:
		return -rapid.SampledFrom([]time.Duration{1, max(reset, 1), time.Duration(spread64(t, "back", 1, int64(time.Hour)))}).Draw(t, "back kind")
	case 0:
		return 0
	case 1:
		return max(reset-1, 0)
	case 2:
		return reset
	case 3:
		return reset + 1
	case 4:
		return time.Duration(spread64(t, "gap", 1, int64(2*reset)+1))
	}
	return time.Duration(spread64(t, "gap", 1, int64(time.Hour)))
}
