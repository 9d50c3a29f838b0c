package cilium

import (
	"strings"
	"testing"

	"github.com/kverify/kverify/props/checkkit"
	"github.com/kverify/kverify/props/wire"
	presource "github.com/kverify/kverify/subjects/cilium/proposed/resource"
	"github.com/kverify/kverify/subjects/suite"
	"github.com/kverify/kverify/traces"
)

// Entries bind the proposed resource component's check to cilium's
// Resource[T] over the model server (subject.go) and the wire component's
// to the same Resource over HTTP (wire.go), with their divergences
// declared. kverify verify --subject cilium runs them through this
// module's TestSuite (the wire entry; the resource component is a proposal
// that kverify's registry does not list yet, so go test runs it here).
//
// No other component is offered. The informer component's checks hold a
// fan-out to client-go's edge-triggered contract (every event to every
// handler, once each, in order, with OnAdd/OnUpdate/OnDelete and a
// per-handler HasSynced); a Resource coalesces a key's changes into its
// latest state, hands a Delete only to a subscriber that saw an Upsert and
// marks its replay's end with a Sync event, and has no handler
// registration to remove, so listener/delivery and the rest would fail by
// design, and props/informer has no profile for it. The controller
// component's Setup needs a handler hook called after the cache write
// and before the key is queued (Notified), reconciles only after the
// first sync and a RequeueAfter: a Resource has no such hook (its Process
// writes the store and queues the key in one step, resource.go:748-810),
// hands Upserts out before its Sync, and retries only through Done(err).
func Entries() []suite.Entry {
	return []suite.Entry{
		{Component: presource.Component, Subject: Name,
			Checks: func() []checkkit.Check {
				return append(presource.Checks(Level()), presource.Checks(LevelTransformed())...)
			},
			Divergences: LevelDivergences,
			Replay: func(t *testing.T, tr *traces.Trace) error {
				if strings.HasPrefix(tr.Check, TransformName+"/") {
					return presource.Replay(t, LevelTransformed(), tr)
				}
				return presource.Replay(t, Level(), tr)
			}},
		wireEntry(),
	}
}

// divergences are every declared divergence, by component.
func divergences() map[string][]checkkit.Divergence {
	return map[string][]checkkit.Divergence{presource.Component: LevelDivergences, wire.Component: WireDivergences}
}
