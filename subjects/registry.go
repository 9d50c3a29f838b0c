package subjects

import (
	"slices"
	"strings"
	"testing"

	pbo "github.com/kverify/kverify/props/backoff"
	"github.com/kverify/kverify/props/checkkit"
	pctrl "github.com/kverify/kverify/props/controller"
	pfifo "github.com/kverify/kverify/props/fifo"
	pinf "github.com/kverify/kverify/props/informer"
	prefl "github.com/kverify/kverify/props/reflector"
	prw "github.com/kverify/kverify/props/retrywatcher"
	pring "github.com/kverify/kverify/props/ring"
	pwire "github.com/kverify/kverify/props/wire"
	pwq "github.com/kverify/kverify/props/workqueue"
	"github.com/kverify/kverify/subjects/ours"
	"github.com/kverify/kverify/subjects/upstream"
	"github.com/kverify/kverify/traces"
)

// Component is one row of the registry: a component and its checks bound
// to each subject built into this module. Every list keyed by component
// (Components, All, the command's --component, the nested modules'
// components) comes from Registry, and TestRegistryConsistent fails when a
// catalogue (mutants, fuzz machines, golden vectors, divergences) names a
// component or check that Registry lacks, or forgets one it has.
type Component struct {
	Name string
	// Ours and Upstream bind the component's checks to our implementation
	// (subjects/ours) and to client-go v0.37.2 (subjects/upstream).
	Ours, Upstream Binding
}

// Binding is one subject's side of a Component.
type Binding struct {
	Checks func() []checkkit.Check
	// Divergences are the subject's declared differences.
	Divergences []checkkit.Divergence
	// Replay replays a saved step trace of one of the checks; nil when
	// the component has none.
	Replay func(t *testing.T, tr *traces.Trace) error
}

// Registry is every component, in the order kverify reports them, bound
// to ours here and to client-go by upstream.Entries.
func Registry() []Component { return withUpstream(registryOurs()) }

// registryOurs is the registry with our side bound.
func registryOurs() []Component {
	ring := func(ss ...pring.Subject) []checkkit.Check {
		var cs []checkkit.Check
		for _, s := range ss {
			cs = append(cs, pring.Checks(s)...)
		}
		return cs
	}
	return []Component{
		{Name: pwq.Component,
			Ours: Binding{Checks: func() []checkkit.Check { return pwq.QueueChecks(ours.Workqueue()) }, Replay: replayWorkqueue(ours.Workqueue)}},
		{Name: pwq.ComponentDelaying,
			Ours: Binding{Checks: func() []checkkit.Check { return pwq.DelayingChecks(ours.Workqueue()) }, Replay: replayWorkqueue(ours.Workqueue)}},
		{Name: pwq.ComponentRateLimit,
			Ours: Binding{Checks: func() []checkkit.Check { return pwq.RateLimitChecks(ours.Workqueue()) }, Replay: replayWorkqueue(ours.Workqueue)}},
		// Both of our buffers are under the one "ours" subject (checks
		// ring/*, chunked/* and pooled/*), so that the gate and the kill
		// matrix cover both; upstream's TypedRingGrowing takes ring/*.
		{Name: pring.Component,
			Ours: Binding{Checks: func() []checkkit.Check { return ring(ours.Ring(), ours.Chunked(), ours.Pooled()) }, Replay: replayRing(ours.Ring(), ours.Chunked(), ours.Pooled())}},
		// The assembled informer's checks first: they take milliseconds.
		{Name: pinf.Component,
			Ours: Binding{Checks: func() []checkkit.Check {
				return append(prefl.InformerChecks(ours.Assembled()), pinf.Checks(ours.Informer())...)
			}}},
		{Name: pfifo.DeltaComponent,
			Ours: Binding{Checks: func() []checkkit.Check { return pfifo.Checks(ours.DeltaFIFO()) }, Replay: replayFIFO(ours.DeltaFIFO())}},
		{Name: pfifo.RealComponent,
			Ours: Binding{Checks: func() []checkkit.Check { return pfifo.Checks(ours.RealFIFO()) }, Replay: replayFIFO(ours.RealFIFO())}},
		{Name: prefl.Component,
			// Ours runs the checks on our reflector and on its
			// list-and-watch reduction (listwatch/*: no watch-list,
			// paging or resync, declared), so that the gate and the kill
			// matrix cover the paging-off path and the capability rules.
			// Each check is followed by its listwatch twin, so that the
			// fixed scenarios of both come before the random machines.
			Ours: Binding{Checks: func() []checkkit.Check {
				var cs []checkkit.Check
				full := prefl.Checks(ours.Reflector())
				for i, lw := range prefl.Checks(ours.ListWatchReflector()) {
					cs = append(cs, full[i], lw)
				}
				return cs
			}, Replay: func(t *testing.T, tr *traces.Trace) error {
				if strings.HasPrefix(tr.Check, ours.ListWatchName+"/") {
					return prefl.Replay(t, ours.ListWatchReflector(), tr)
				}
				return prefl.Replay(t, ours.Reflector(), tr)
			}}},
		{Name: pbo.Component,
			Ours: Binding{Checks: func() []checkkit.Check { return pbo.Checks(ours.Backoff()) }, Replay: replayBackoff(ours.Backoff)}},
		// A watch that resumes across failures (client-go's tools/watch
		// RetryWatcher, under gitops-engine and kubectl wait).
		{Name: prw.Component,
			Ours: Binding{Checks: func() []checkkit.Check { return prw.Checks(ours.RetryWatcher()) }, Replay: replayRetryWatcher(ours.RetryWatcher())}},
		// The controller: informer, rate-limited queue, workers and
		// reconciles, end to end.
		{Name: pctrl.Component,
			Ours: Binding{Checks: func() []checkkit.Check { return pctrl.Checks(ours.Controller()) }, Replay: replayController(ours.Controller())}},
		// Over the wire: the model server over HTTP (in memory, in a
		// bubble) and each side's informer on client-go's REST stack.
		{Name: pwire.Component,
			Ours: Binding{Checks: func() []checkkit.Check { return pwire.Checks(ours.Wire()) }, Replay: replayWire(ours.Wire())}},
	}
}

// withUpstream binds the registry's upstream side: client-go's entries
// (upstream.Entries), one per component, which the module kverify generates for another release
// builds from the same package.
func withUpstream(cs []Component) []Component {
	for _, e := range upstream.Entries() {
		i := slices.IndexFunc(cs, func(c Component) bool { return c.Name == e.Component })
		if i < 0 {
			panic("subjects: upstream.Entries has component " + e.Component + ", which the registry lacks")
		}
		cs[i].Upstream = Binding{Checks: e.Checks, Divergences: e.Divergences, Replay: e.Replay}
	}
	return cs
}

// External is a subject registered by a module of its own, nested in this
// repository, so that this module does not gain its dependencies. The
// module's TestSuite and TestReplay call RunSuite and RunReplay with its
// entries; kverify builds and runs them there.
type External struct {
	Name       string
	Dir        string   // the module's directory, relative to this module's root
	Components []string // the components it registers entries for
}

// Externals lists the subjects that live in nested modules.
func Externals() []External {
	return []External{
		// controller-runtime's priority queue (subjects/controllerruntime:
		// Components there).
		{Name: "controller-runtime", Dir: "subjects/controllerruntime", Components: []string{"workqueue", "delaying", "ratelimit", "controller"}},
		// JavaScript informers as kverify-client/v1 processes
		// (subjects/node: npm ci in subjects/node/js first).
		// knative.dev/pkg's two-lane controller queue and its controller.Impl
		// (subjects/knative).
		{Name: "knative", Dir: "subjects/knative", Components: []string{"workqueue", "delaying", "ratelimit", "controller"}},
		// rancher/lasso's shared controller, client and cache factories, and
		// its cache over HTTP (subjects/lasso).
		{Name: "lasso", Dir: "subjects/lasso", Components: []string{"controller", "wire"}},
		// cilium's pkg/k8s/resource Resource[T] over HTTP (subjects/cilium,
		// on client-go v0.36.4: cilium v1.20.2 does not build on v0.37.2);
		// its level-triggered check (resource/level) runs in the module's
		// go test: no component holds it until kverify has a level-triggered
		// resource of its own to be its reference.
		{Name: "cilium", Dir: "subjects/cilium", Components: []string{"wire"}},
		// argoproj/gitops-engine's cluster cache over HTTP, as a
		// kverify-client/v1 process (subjects/gitops: TestSuite builds the
		// adapter, subjects/gitops/client, a module of its own on k8s.io/*
		// v0.23.1).
		{Name: "gitops", Dir: "subjects/gitops", Components: []string{"wire"}},
		// kubectl get -w as a single-shot kverify-client/v1 process
		// (subjects/kubectl: $KVERIFY_KUBECTL, else kubectl on PATH).
		{Name: "kubectl", Dir: "subjects/kubectl", Components: []string{"wire"}},
		// The Kubernetes Python client (Debian's python3-kubernetes), as
		// its documentation tells users to watch (subjects/python).
		{Name: "python", Dir: "subjects/python", Components: []string{"wire"}},
		{Name: "client-node", Dir: "subjects/node", Components: []string{"wire"}},
		{Name: "fluent", Dir: "subjects/node", Components: []string{"wire"}},
		// @kubernetes/client-node's history: the last 0.x, 1.0.0-rc6 and
		// the last 1.x (subjects/node's ClientNodeHistory).
		{Name: "client-node@0.22.3", Dir: "subjects/node", Components: []string{"wire"}},
		{Name: "client-node@1.0.0-rc6", Dir: "subjects/node", Components: []string{"wire"}},
		{Name: "client-node@1.4.0", Dir: "subjects/node", Components: []string{"wire"}},
		// kubernetes-fluent-client's history: the last 1.x and the last 2.x
		// (subjects/node's FluentHistory).
		{Name: "fluent@1.10.0", Dir: "subjects/node", Components: []string{"wire"}},
		{Name: "fluent@2.6.5", Dir: "subjects/node", Components: []string{"wire"}},
	}
}

// Components lists the component names, in registry order.
func Components() []string {
	var out []string
	for _, c := range Registry() {
		out = append(out, c.Name)
	}
	return out
}

// ComponentByName returns the registry row called name.
func ComponentByName(name string) (Component, bool) {
	rs := Registry()
	if i := slices.IndexFunc(rs, func(c Component) bool { return c.Name == name }); i >= 0 {
		return rs[i], true
	}
	return Component{}, false
}

// All returns every entry of the subjects built into this module: each
// registry row bound to ours and to upstream.
func All() []Entry {
	var es []Entry
	for _, c := range Registry() {
		for _, b := range []struct {
			subject string
			Binding
		}{{Ours, c.Ours}, {Upstream, c.Upstream}} {
			es = append(es, Entry{Component: c.Name, Subject: b.subject, Checks: b.Checks, Divergences: b.Divergences, Replay: b.Replay})
		}
	}
	return es
}

// EntriesOf returns All's entries for one subject (Ours or Upstream).
func EntriesOf(subject string) []Entry {
	return slices.DeleteFunc(All(), func(e Entry) bool { return e.Subject != subject })
}

// EntriesFor returns subject's entry for component (ours or upstream),
// for a test that runs one component's suite (subjects/suites).
func EntriesFor(subject, component string) []Entry {
	return slices.DeleteFunc(EntriesOf(subject), func(e Entry) bool { return e.Component != component })
}

func replayWorkqueue(s func() pwq.Subject) func(*testing.T, *traces.Trace) error {
	return func(t *testing.T, tr *traces.Trace) error { return pwq.Replay(t, s(), tr) }
}

func replayRing(ss ...pring.Subject) func(*testing.T, *traces.Trace) error {
	return func(_ *testing.T, tr *traces.Trace) error { return pring.Replay(ss, tr) }
}

func replayFIFO(s pfifo.Subject) func(*testing.T, *traces.Trace) error {
	return func(_ *testing.T, tr *traces.Trace) error { return pfifo.Replay(s, tr) }
}

func replayBackoff(s func() pbo.Subject) func(*testing.T, *traces.Trace) error {
	return func(t *testing.T, tr *traces.Trace) error { return pbo.Replay(t, s(), tr) }
}

func replayRetryWatcher(s prw.Subject) func(*testing.T, *traces.Trace) error {
	return func(t *testing.T, tr *traces.Trace) error { return prw.Replay(t, s, tr) }
}

func replayWire(s pwire.Subject) func(*testing.T, *traces.Trace) error {
	return func(t *testing.T, tr *traces.Trace) error { return pwire.Replay(t, s, tr) }
}

// Unshaped returns the checks of ds whose declaration names no guarantee
// or no Shape: every declaration of ours, client-go and the nested
// modules' subjects says which guarantees and which violation shape it
// excuses, so that a second bug of the same check (or of the same
// guarantee) is reported instead of excused.
func Unshaped(ds []checkkit.Divergence) []string {
	var out []string
	for _, d := range ds {
		if len(d.Guarantees) == 0 || d.Shape == "" {
			out = append(out, d.Check)
		}
	}
	return out
}

func replayController(s pctrl.Subject) func(*testing.T, *traces.Trace) error {
	return func(t *testing.T, tr *traces.Trace) error { return pctrl.Replay(t, s, tr) }
}
