package ratelimit

import (
	"fmt"
	"math"
	"time"

	"github.com/kverify/kverify/props/checkkit"
	"github.com/kverify/kverify/traces"
)

// items are the items the checks use: few, so that they collide.
var items = []string{"a", "b", "c"}

// script records the steps of a deterministic witness, so that its failure
// carries the steps that led to it, like a rapid counterexample.
type script struct {
	steps []traces.Step
	start time.Time
}

// timed makes later steps carry the time since now (fake time in a bubble).
func (s *script) timed() { s.start = time.Now() }

func (s *script) step(op, want, got string) {
	st := traces.Step{Op: op, Want: want, Got: got}
	if !s.start.IsZero() {
		st.At = time.Since(s.start)
	}
	s.steps = append(s.steps, st)
}

// broke returns the violation with the steps so far as its trace.
func (s *script) broke(guarantee, format string, args ...any) error {
	return &checkkit.Violation{Guarantee: guarantee, Detail: fmt.Sprintf(format, args...),
		Trace: &traces.Trace{Steps: append([]traces.Step(nil), s.steps...)}}
}

// fmtD renders a delay; extreme values also in nanoseconds, where the
// difference between a right and a wrong answer is in the last digits.
func fmtD(d time.Duration) string {
	if d >= time.Hour || d <= -time.Hour {
		return fmt.Sprintf("%v (%dns)", d, int64(d))
	}
	return d.String()
}

// within reports whether got is want up to tol; both may be huge.
func within(got, want, tol time.Duration) bool {
	if got == want {
		return true
	}
	// Compare in float64 so that InfDuration and negative values cannot
	// overflow the subtraction.
	return math.Abs(float64(got)-float64(want)) <= float64(tol)
}
