package subjects

import (
	"slices"

	pbo "github.com/kverify/kverify/props/backoff"
	"github.com/kverify/kverify/props/checkkit"
	pctrl "github.com/kverify/kverify/props/controller"
	pfifo "github.com/kverify/kverify/props/fifo"
	pinf "github.com/kverify/kverify/props/informer"
	prl "github.com/kverify/kverify/props/ratelimit"
	prefl "github.com/kverify/kverify/props/reflector"
	prw "github.com/kverify/kverify/props/retrywatcher"
	pring "github.com/kverify/kverify/props/ring"
	pwire "github.com/kverify/kverify/props/wire"
	pwq "github.com/kverify/kverify/props/workqueue"
)

// Guarantees returns, sorted, every guarantee a violation of the
// component's checks can name: the toolkit's (checkkit.Guarantees), and
// the Guarantees of the props packages whose checks the component's
// registry row runs. A failure, a saved trace, a declared divergence
// (Divergence.Guarantees) and a golden vector (its header's guarantees)
// of the component name one of these; TestGuarantees holds the
// divergences and the vectors to it. Nil for a component the registry
// does not have.
func Guarantees(component string) []string {
	var own [][]string
	switch component {
	case pwq.Component, pwq.ComponentDelaying:
		own = [][]string{pwq.Guarantees()}
	case pwq.ComponentRateLimit:
		// RateLimitChecks: props/ratelimit's limiter checks and the
		// rate-limiting queue's.
		own = [][]string{prl.Guarantees(), pwq.Guarantees()}
	case pring.Component:
		own = [][]string{pring.Guarantees()}
	case pinf.Component:
		// The assembled informer's checks (props/reflector's
		// InformerChecks), then the fan-out's.
		own = [][]string{prefl.InformerGuarantees(), pinf.Guarantees()}
	case pfifo.DeltaComponent, pfifo.RealComponent:
		own = [][]string{pfifo.Guarantees()}
	case prefl.Component:
		own = [][]string{prefl.Guarantees()}
	case pbo.Component:
		own = [][]string{pbo.Guarantees()}
	case pwire.Component:
		own = [][]string{pwire.Guarantees()}
	case pctrl.Component:
		own = [][]string{pctrl.Guarantees()}
	case prw.Component:
		own = [][]string{prw.Guarantees()}
	default:
		return nil
	}
	gs := slices.Concat(append(own, checkkit.Guarantees())...)
	slices.Sort(gs)
	return slices.Compact(gs)
}
