package ours

import (
	"time"

	"github.com/kverify/kverify/impl/backoff"
	pbo "github.com/kverify/kverify/props/backoff"
	"k8s.io/utils/clock"
)

// Backoff is impl/backoff as a subject: New validates the parameters
// as a caller of backoff.Backoff would (Validate), and the jitter comes
// from the random source the suite hands in.
func Backoff() pbo.Subject {
	return pbo.Subject{
		New: func(p pbo.Params) (pbo.Backoff, error) {
			b := toOurs(p)
			if err := b.Validate(); err != nil {
				return nil, err
			}
			return &oursBackoff{b: b}, nil
		},
		NewDelay: func(p pbo.Params, c clock.Clock, reset time.Duration, rand func() float64) (pbo.Delay, error) {
			d, err := backoff.NewDelay(toOurs(p), c, reset)
			if err != nil {
				return nil, err
			}
			if rand != nil {
				d.WithRand(rand)
			}
			return d, nil
		},
		Default: func() pbo.Params { return fromOurs(backoff.Default()) },
		NilStep: func() time.Duration {
			var b *backoff.Backoff
			return b.Step(nil)
		},
		ResetRule: pbo.SinceLastCall,
		Rand:      true,
	}
}

type oursBackoff struct{ b backoff.Backoff }

func (o *oursBackoff) Step(rand func() float64) time.Duration { return o.b.Step(rand) }
func (o *oursBackoff) State() pbo.Params                      { return fromOurs(o.b) }

func toOurs(p pbo.Params) backoff.Backoff {
	return backoff.Backoff{Duration: p.Duration, Factor: p.Factor, Jitter: p.Jitter, Steps: p.Steps, Cap: p.Cap}
}

func fromOurs(b backoff.Backoff) pbo.Params {
	return pbo.Params{Duration: b.Duration, Factor: b.Factor, Jitter: b.Jitter, Steps: b.Steps, Cap: b.Cap}
}
