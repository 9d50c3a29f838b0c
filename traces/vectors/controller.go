package vectors

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	pctl "github.com/kverify/kverify/props/controller"
	spec "github.com/kverify/kverify/spec/controller"
	"github.com/kverify/kverify/traces"
)

// The controller's vectors (component controller) are vectors of its
// model, spec/controller's Ledger: sequences of what a controller's
// handler was told and what its reconciles did, in the order they
// happened, with the ledger's verdict at every step and, at the end, its
// Final verdict for a server state. A replayer feeds them to its own
// account of a controller's promises (subjects/vectors_controller_test.go
// replays them into spec/controller.New): they pin which sequence breaks
// which promise, at which step, and which does not.
//
// Params: base_ns and max_ns, the rate limiter's (the delay after the
// n-th consecutive failure is base doubled n-1 times, capped at max).
// Times (ns) are nanoseconds since the vector began; steps come in
// non-decreasing time, except where a vector makes a reconcile end before
// another's start on purpose (the ledger takes events in the order they
// happened, whatever their times).
//
// Steps:
//
//   - Notify key value ns: the handler was told the key is present at
//     version value (decimal), at ns;
//   - NotifyDeleted key value ns: told the key was deleted, the deleted
//     object at version value ("0": a tombstone without its object);
//   - Start key ns [value]: a reconcile of key started at ns and read the
//     key from the cache at version value, or absent (no value);
//   - Succeed, Fail key ns: the running reconcile of key ended at ns,
//     returning success or an error (or panicking);
//   - Requeue key ns value: it ended at ns with success and asked to be
//     reconciled again after value ns (decimal);
//   - Stop: the controller was stopped (no want);
//   - Final objects: the server's state now (key and version; a key not
//     listed is absent), the ledger's eventual-reconcile verdict.
//
// Every step but Stop has a want: ok true when the ledger found every
// promise kept, or ok false and value, the promise it found broken (one of
// spec/controller's Promise* names). A vector ends at its first broken
// step: the ledger's account after a broken promise is not specified.
//
// The header names the check the vector exercises and the guarantees
// (props/controller's) its verdicts are about: the one broken, or, when
// none is, those the vector's kind aims at.

// controllerKinds are the kinds of controller vectors; vector seed is of
// kind seed % len(controllerKinds).
var controllerKinds = []struct {
	name  string
	check string
	// aims: the guarantees the kind exercises (the header's when no
	// promise breaks).
	aims []string
	gen  func(g *ctlGen)
}{
	{"converge", pctl.CheckConverge, ledgerGuarantees, (*ctlGen).converge},
	{"converge", pctl.CheckConverge, ledgerGuarantees, (*ctlGen).converge},
	{"one at a time", pctl.CheckConverge, []string{pctl.GOneAtATime}, (*ctlGen).oneAtATime},
	{"caught up", pctl.CheckConverge, []string{pctl.GCaughtUp}, (*ctlGen).caughtUp},
	{"monotonic", pctl.CheckConverge, []string{pctl.GMonotonic}, (*ctlGen).monotonic},
	{"busy loop", pctl.CheckConverge, []string{pctl.GBusyLoop}, (*ctlGen).busyLoop},
	{"retry delay", pctl.CheckRetry, []string{pctl.GRetryDelay}, (*ctlGen).retryDelay},
	{"requeue", pctl.CheckRetry, []string{pctl.GRequeue}, (*ctlGen).requeue},
	{"eventual", pctl.CheckConverge, []string{pctl.GEventual}, (*ctlGen).eventual},
	{"stop", pctl.CheckStop, []string{pctl.GNothingAfter}, (*ctlGen).stop},
	{"carry", pctl.CheckConverge, []string{pctl.GBusyLoop}, (*ctlGen).carry},
	{"schedule", pctl.CheckRetry, []string{pctl.GRetryDelay, pctl.GRequeue, pctl.GBusyLoop}, (*ctlGen).schedule},
}

// ledgerGuarantees are the guarantees the ledger's promises are.
var ledgerGuarantees = []string{pctl.GOneAtATime, pctl.GCaughtUp, pctl.GMonotonic,
	pctl.GBusyLoop, pctl.GRetryDelay, pctl.GRequeue, pctl.GEventual}

// controllerEpoch is the instant a controller vector's ns count from.
var controllerEpoch = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

func controllerVector(seed uint64) traces.Vector {
	r := rng(seed)
	bases := []time.Duration{time.Millisecond, 5 * time.Millisecond, time.Second, 10 * time.Second}
	base := bases[r.IntN(len(bases))]
	lim := spec.Limiter{Base: base, Max: base << r.IntN(7)}
	g := &ctlGen{r: r, lim: lim, led: spec.New(lim), server: map[string]int64{}, rv: 1 + int64(r.IntN(20))}
	kind := controllerKinds[seed%uint64(len(controllerKinds))]
	kind.gen(g)
	if !g.ended {
		g.final(g.server)
	}
	gs := kind.aims
	if g.broken != "" {
		gs = []string{pctl.GuaranteeOf(g.broken)}
	}
	return traces.Vector{Header: traces.Header{Profile: "spec/controller ledger",
		Params: map[string]float64{"base_ns": float64(lim.Base), "max_ns": float64(lim.Max)},
		Check:  kind.check, Guarantees: slices.Clone(gs)}, Steps: g.steps}
}

// ctlGen builds one vector: each event goes to the ledger as it is
// recorded, its verdict becoming the step's want. After a broken promise,
// or Final, it records nothing more.
type ctlGen struct {
	r      *rand.Rand
	lim    spec.Limiter
	led    *spec.Ledger
	steps  []traces.VStep
	broken string
	ended  bool
	// now is the time of the next event; server the server's state (the
	// honest runs' cache is the server: a notification comes at the write).
	now    time.Duration
	server map[string]int64
	rv     int64
}

func (g *ctlGen) done() bool { return g.broken != "" || g.ended }

func (g *ctlGen) record(s traces.VStep, err error) {
	ok := err == nil
	w := &traces.Want{OK: &ok}
	if !ok {
		b, isBroken := err.(*spec.Broken)
		if !isBroken {
			panic("vectors: the ledger returned " + err.Error())
		}
		g.broken = b.Promise
		w.Value = str(b.Promise)
	}
	s.Want = w
	g.steps = append(g.steps, s)
}

func (g *ctlGen) at(d time.Duration) time.Time { return controllerEpoch.Add(d) }

// notify records a notification of k at version rv (deleted: of its
// deletion) at the current time.
func (g *ctlGen) notify(k string, rv int64, deleted bool) {
	if g.done() {
		return
	}
	op := "Notify"
	if deleted {
		op = "NotifyDeleted"
	}
	g.record(traces.VStep{Op: op, Key: str(k), Value: str(strconv.FormatInt(rv, 10)), NS: i64d(g.now)},
		g.led.Notify(k, spec.Seen{Present: !deleted, RV: rv}, g.at(g.now)))
}

// start records a reconcile of k starting now and reading r.
func (g *ctlGen) start(k string, r spec.Seen) {
	if g.done() {
		return
	}
	s := traces.VStep{Op: "Start", Key: str(k), NS: i64d(g.now)}
	if r.Present {
		s.Value = str(strconv.FormatInt(r.RV, 10))
	}
	g.record(s, g.led.Start(k, g.at(g.now), r))
}

// startRead starts a reconcile of k reading the server's state.
func (g *ctlGen) startRead(k string) { g.start(k, g.read(k)) }

func (g *ctlGen) read(k string) spec.Seen {
	rv, ok := g.server[k]
	return spec.Seen{Present: ok, RV: rv}
}

// end records the running reconcile of k ending now with o.
func (g *ctlGen) end(k string, o spec.Outcome) {
	if g.done() {
		return
	}
	s := traces.VStep{Op: "Succeed", Key: str(k), NS: i64d(g.now)}
	switch {
	case o.Failed:
		s.Op = "Fail"
	case o.RequeueAfter > 0:
		s.Op, s.Value = "Requeue", str(strconv.FormatInt(int64(o.RequeueAfter), 10))
	}
	g.record(s, g.led.End(k, g.at(g.now), o))
}

func (g *ctlGen) stopNow() {
	if g.done() {
		return
	}
	g.led.Stop()
	g.steps = append(g.steps, traces.VStep{Op: "Stop"})
}

// final records the Final verdict for server and ends the vector.
func (g *ctlGen) final(server map[string]int64) {
	if g.done() {
		return
	}
	var objs []traces.VObject
	for k, rv := range server {
		objs = append(objs, traces.VObject{Key: k, Value: strconv.FormatInt(rv, 10)})
	}
	slices.SortFunc(objs, func(a, b traces.VObject) int { return cmp.Compare(a.Key, b.Key) })
	g.record(traces.VStep{Op: "Final", Objects: objs}, g.led.Final(server))
	g.ended = true
}

// write changes k on the server (create or update; delete) and notifies
// it at once.
func (g *ctlGen) write(k string, del bool) {
	g.rv++
	if del {
		old, ok := g.server[k]
		delete(g.server, k)
		if !ok {
			old = 0
		}
		g.notify(k, old, true)
		return
	}
	g.server[k] = g.rv
	g.notify(k, g.rv, false)
}

func (g *ctlGen) pick(xs []time.Duration) time.Duration { return xs[g.r.IntN(len(xs))] }

func (g *ctlGen) key() string { return ctlKeys[g.r.IntN(len(ctlKeys))] }

var ctlKeys = []string{"default/a", "default/b", "default/c", "ns/d"}

// outcome is a random reconcile outcome.
func (g *ctlGen) outcome() spec.Outcome {
	switch g.r.IntN(5) {
	case 0:
		return spec.Outcome{Failed: true}
	case 1:
		return spec.Outcome{RequeueAfter: g.pick([]time.Duration{time.Millisecond, time.Second, time.Minute})}
	}
	return spec.Outcome{}
}
