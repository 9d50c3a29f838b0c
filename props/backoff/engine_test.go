package backoff

import (
	"errors"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/kverify/kverify/props/checkkit"
	spec "github.com/kverify/kverify/spec/backoff"
	"github.com/kverify/kverify/traces"
	"k8s.io/utils/clock"
	"pgregory.net/rapid"
)

// modelSubject is the model itself as a subject, under rule: every check
// must pass on it (no false alarm from the checks or their generators).
func modelSubject(rule ResetRule) Subject {
	return Subject{
		New: func(p Params) (Backoff, error) {
			if err := validate(p, 0); err != nil {
				return nil, err
			}
			return &modelBackoff{b: p.spec()}, nil
		},
		NewDelay: func(p Params, c clock.Clock, reset time.Duration, rand func() float64) (Delay, error) {
			if err := validate(p, reset); err != nil {
				return nil, err
			}
			if rand == nil {
				rand = func() float64 { return 0 }
			}
			return &modelDelay{d: spec.NewDelay(p.spec(), reset, rule), c: c, start: c.Now(), rand: rand}, nil
		},
		Default:   func() Params { return fromSpec(spec.Default()) },
		ResetRule: rule,
		Rand:      true,
	}
}

// validate rejects what the model is not written for.
func validate(p Params, reset time.Duration) error {
	finite := func(f float64) bool { return f >= 0 && !math.IsInf(f, 0) } // false for NaN
	if p.Duration < 0 || p.Cap < 0 || p.Steps < 0 || reset < 0 || !finite(p.Factor) || !finite(p.Jitter) {
		return errors.New("invalid parameters")
	}
	return nil
}

type modelBackoff struct{ b spec.Backoff }

func (m *modelBackoff) Step(rand func() float64) time.Duration {
	base, next := m.b.Step()
	m.b = next
	return spec.Jittered(base, next.Jitter, rand())
}

func (m *modelBackoff) State() Params { return fromSpec(m.b) }

type modelDelay struct {
	mu    sync.Mutex
	d     spec.Delay
	c     clock.Clock
	start time.Time
	rand  func() float64
}

func (m *modelDelay) Next() time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	var v time.Duration
	m.d, v = m.d.Next(m.c.Since(m.start), m.rand())
	return v
}

func TestModelSubjectPasses(t *testing.T) {
	checkkit.Run(t, Checks(modelSubject(SinceLastCall)))
}

// TestModelSubjectDeclaredRule runs client-go's rule: the contract's reset
// check must fail, and the declared one pass.
func TestModelSubjectDeclaredRule(t *testing.T) {
	checkkit.Run(t, Checks(modelSubject(SinceLastReset)), checkkit.WithDivergences(checkkit.Divergence{
		Check: CheckReset, Reason: "the model under client-go's rule", Upstream: "spec/backoff"}))
}

// TestParamsRoundTrip: the trace notation gives every value back exactly.
func TestParamsRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p := paramsGen(t, func(t *rapid.T) float64 { return rapid.Float64Range(0, 10).Draw(t, "jitter") })
		reset := resetGen(t, true)
		got, _, err := parseParams(p.String(), false)
		if err != nil || got != p {
			t.Fatalf("parseParams(%q) = %v, %v; want %v", p.String(), got, err, p)
		}
		s := p.String() + ", Reset=" + fmtD(reset)
		got, r, err := parseParams(s, true)
		if err != nil || got != p || r != reset {
			t.Fatalf("parseParams(%q) = %v, %v, %v", s, got, r, err)
		}
	})
}

// TestReplay saves the trace of a violation on a subject that never starts
// over, then replays it: the violation again on that subject, none on the
// model.
func TestReplay(t *testing.T) {
	broken := modelSubject(SinceLastCall)
	broken.NewDelay = func(p Params, c clock.Clock, _ time.Duration, rand func() float64) (Delay, error) {
		return &modelDelay{d: spec.NewDelay(p.spec(), 0, SinceLastCall), c: c, start: c.Now(), rand: rand}, nil
	}
	var err error
	for _, check := range Checks(broken) {
		if check.Name == CheckReset {
			err = check.Run(t, checkkit.Config{TraceDir: t.TempDir()})
		}
	}
	var v *checkkit.Violation
	if !errors.As(err, &v) || v.TracePath == "" {
		t.Fatalf("backoff/reset on a subject that never starts over: %v, want a violation with a saved trace", err)
	}
	tr, rerr := traces.Read(v.TracePath)
	if rerr != nil {
		t.Fatal(rerr)
	}
	if err := Replay(t, broken, tr); err == nil {
		t.Errorf("replaying %s on the broken subject shows no violation", v.TracePath)
	}
	if err := Replay(t, modelSubject(SinceLastCall), tr); err != nil {
		t.Errorf("replaying %s on the model: %v", v.TracePath, err)
	}
}
