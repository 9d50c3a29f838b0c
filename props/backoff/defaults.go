package backoff

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/kverify/kverify/props/checkkit"
	spec "github.com/kverify/kverify/spec/backoff"
	testingclock "k8s.io/utils/clock/testing"
)

// defaultSequence is the reflector's default sequence without jitter
// (reference §6.2 item 2), written out rather than computed: 0.8s doubling
// to 25.6s, then the 30s cap.
var defaultSequence = []time.Duration{800 * time.Millisecond, 1600 * time.Millisecond, 3200 * time.Millisecond,
	6400 * time.Millisecond, 12800 * time.Millisecond, 25600 * time.Millisecond, 30 * time.Second}

// defaultBase is the base of the i-th default delay (from 0).
func defaultBase(i int) time.Duration { return defaultSequence[min(i, len(defaultSequence)-1)] }

// defaultCalls is how many steps the witness takes: past the 38 steps.
const defaultCalls = spec.DefaultSteps + 7

// defaults pins the reflector's default backoff: its parameters, its
// sequence without jitter (stepped, and through a Delay with the default
// reset called without pause), and the range of its jittered delays.
func defaults(s Subject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, cfg checkkit.Config) error {
		rec := checkkit.NewRecorder(cfg.Progress)
		return checkkit.Save(t, cfg, Component, CheckDefault, rec.Attach(defaultWitness(s, rec)))
	}
}

func defaultWitness(s Subject, rec *checkkit.Recorder) error {
	want := fromSpec(spec.Default())
	var p Params
	if pe := checkkit.Protect(func() { p = s.Default() }); pe != nil {
		rec.Step("Default()", want.String(), pe.Error())
		return checkkit.Broke(GNoPanic, "Default(): %v", pe)
	}
	rec.Step("Default()", want.String(), p.String())
	if p != want {
		return checkkit.Broke(GDefaults, "Default() is {%v}, want {%v}", p, want)
	}

	// Without jitter.
	p0 := p
	p0.Jitter = 0
	b, err := newChecked(s, rec, p0)
	if err != nil {
		return err
	}
	for i := range defaultCalls {
		var got time.Duration
		if pe := checkkit.Protect(func() { got = b.Step(constRand(0)) }); pe != nil {
			rec.Step("Step", fmtD(defaultBase(i)), pe.Error())
			return checkkit.Broke(GNoPanic, "Step #%d of the defaults without jitter: %v", i+1, pe)
		}
		rec.Step("Step", fmtD(defaultBase(i)), fmtD(got))
		if got != defaultBase(i) {
			return checkkit.Broke(GDefaultSequence, "Step #%d of the defaults without jitter returned %s, want %s (sequence 0.8s, 1.6s, 3.2s, 6.4s, 12.8s, 25.6s, 30s, 30s, ...)", i+1, fmtD(got), fmtD(defaultBase(i)))
		}
	}

	// With the default jitter 1.0: [base, 2*base), exactly base*(1+r) for
	// a subject that takes the random source.
	if b, err = newChecked(s, rec, p); err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range defaultCalls {
		r := rng.Float64()
		if i == 1 {
			r = nearOne
		}
		base := defaultBase(i)
		var got time.Duration
		op := "Step(rand=" + fmtF(r) + ")"
		want := fmt.Sprintf("[%s, %s)", fmtD(base), fmtD(2*base))
		if s.Rand {
			want = fmtD(spec.Jittered(base, spec.DefaultJitter, r))
		}
		if pe := checkkit.Protect(func() { got = b.Step(constRand(r)) }); pe != nil {
			rec.Step(op, want, pe.Error())
			return checkkit.Broke(GNoPanic, "Step #%d of the defaults: %v", i+1, pe)
		}
		rec.Step(op, want, fmtD(got))
		if got < base || got >= 2*base || (s.Rand && !near(got, spec.Jittered(base, spec.DefaultJitter, r))) {
			return checkkit.Broke(GDefaultJitter, "Step #%d of the defaults (base %s) returned %s, want %s", i+1, fmtD(base), fmtD(got), want)
		}
	}

	// Through a Delay with the default reset, called without pause and
	// then after 119s: the same sequence under either reset rule.
	if s.NewDelay == nil {
		return nil
	}
	c := testingclock.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	op := fmt.Sprintf("NewDelay(%v, Reset=%s)", p0, fmtD(spec.DefaultReset))
	var d Delay
	if pe := checkkit.Protect(func() { d, err = s.NewDelay(p0, c, spec.DefaultReset, constRand(0)) }); pe != nil {
		rec.Step(op, "ok", pe.Error())
		return checkkit.Broke(GNoPanic, "%s: %v", op, pe)
	}
	rec.Step(op, "ok", errString(err))
	if err != nil {
		return checkkit.Broke(GAccepted, "%s: %v", op, err)
	}
	for i := range 11 {
		if i == 10 {
			c.Step(119 * time.Second)
			rec.Step("Sleep(1m59s)", "", "")
		}
		var got time.Duration
		if pe := checkkit.Protect(func() { got = d.Next() }); pe != nil {
			rec.Step("Next", fmtD(defaultBase(i)), pe.Error())
			return checkkit.Broke(GNoPanic, "Next #%d of the default Delay: %v", i+1, pe)
		}
		rec.Step("Next", fmtD(defaultBase(i)), fmtD(got))
		if got != defaultBase(i) {
			return checkkit.Broke(GDefaultSequence, "Next #%d of a default Delay without jitter returned %s, want %s", i+1, fmtD(got), fmtD(defaultBase(i)))
		}
	}
	return nil
}

// newChecked makes a backoff that must be accepted.
func newChecked(s Subject, rec *checkkit.Recorder, p Params) (Backoff, error) {
	var b Backoff
	var err error
	if pe := checkkit.Protect(func() { b, err = s.New(p) }); pe != nil {
		rec.Step("New("+p.String()+")", "ok", pe.Error())
		return nil, checkkit.Broke(GNoPanic, "New(%v): %v", p, pe)
	}
	rec.Step("New("+p.String()+")", "ok", errString(err))
	if err != nil {
		return nil, checkkit.Broke(GAccepted, "New(%v): %v", p, err)
	}
	return b, nil
}
