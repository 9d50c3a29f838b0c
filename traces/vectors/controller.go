package vectors

import (
	"cmp"
	"maps"
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
	{"one at a time", pctl.CheckConverge, []string{pctl.GuaranteeOneAtATime}, (*ctlGen).oneAtATime},
	{"caught up", pctl.CheckConverge, []string{pctl.GuaranteeCaughtUp}, (*ctlGen).caughtUp},
	{"monotonic", pctl.CheckConverge, []string{pctl.GuaranteeMonotonic}, (*ctlGen).monotonic},
	{"busy loop", pctl.CheckConverge, []string{pctl.GuaranteeBusyLoop}, (*ctlGen).busyLoop},
	{"retry delay", pctl.CheckRetry, []string{pctl.GuaranteeRetryDelay}, (*ctlGen).retryDelay},
	{"requeue", pctl.CheckRetry, []string{pctl.GuaranteeRequeue}, (*ctlGen).requeue},
	{"eventual", pctl.CheckConverge, []string{pctl.GuaranteeEventual}, (*ctlGen).eventual},
	{"stop", pctl.CheckStop, []string{pctl.GuaranteeNothingAfter}, (*ctlGen).stop},
	{"carry", pctl.CheckConverge, []string{pctl.GuaranteeBusyLoop}, (*ctlGen).carry},
	{"schedule", pctl.CheckRetry, []string{pctl.GuaranteeRetryDelay, pctl.GuaranteeRequeue, pctl.GuaranteeBusyLoop}, (*ctlGen).schedule},
}

// ledgerGuarantees are the guarantees the ledger's promises are.
var ledgerGuarantees = []string{pctl.GuaranteeOneAtATime, pctl.GuaranteeCaughtUp, pctl.GuaranteeMonotonic,
	pctl.GuaranteeBusyLoop, pctl.GuaranteeRetryDelay, pctl.GuaranteeRequeue, pctl.GuaranteeEventual}

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

// sim is a single-worker controller as client-go's rate-limited queue runs
// it: a FIFO of ready keys (a key queued at most once, and not while it is
// processed: then it is queued again when its reconcile ends), and one
// waiting entry per key for the delayed adds (the earliest kept).
type sim struct {
	g        *ctlGen
	ready    []string
	dirty    map[string]bool
	busy     string
	waiting  map[string]time.Duration
	failures map[string]int
}

func (g *ctlGen) newSim() *sim {
	return &sim{g: g, dirty: map[string]bool{}, waiting: map[string]time.Duration{}, failures: map[string]int{}}
}

func (s *sim) add(k string) {
	if s.dirty[k] {
		return
	}
	s.dirty[k] = true
	if s.busy != k {
		s.ready = append(s.ready, k)
	}
}

func (s *sim) addAfter(k string, d time.Duration) {
	due := s.g.now + d
	if old, ok := s.waiting[k]; !ok || due < old {
		s.waiting[k] = due
	}
}

// advance lets d pass, the delayed adds due by then joining the queue in
// due order.
func (s *sim) advance(d time.Duration) {
	s.g.now += d
	var due []string
	for k, at := range s.waiting {
		if at <= s.g.now {
			due = append(due, k)
		}
	}
	slices.SortFunc(due, func(a, b string) int {
		if c := cmp.Compare(s.waiting[a], s.waiting[b]); c != 0 {
			return c
		}
		if a < b {
			return -1
		}
		return 1
	})
	for _, k := range due {
		delete(s.waiting, k)
		s.add(k)
	}
}

func (s *sim) startNext() bool {
	if s.busy != "" || len(s.ready) == 0 {
		return false
	}
	k := s.ready[0]
	s.ready = s.ready[1:]
	s.dirty[k] = false
	s.busy = k
	s.g.startRead(k)
	return true
}

func (s *sim) endBusy(o spec.Outcome) {
	k := s.busy
	if k == "" {
		return
	}
	s.busy = ""
	s.g.end(k, o)
	switch {
	case o.Failed:
		s.failures[k]++
		s.addAfter(k, s.g.lim.Delay(s.failures[k]))
	case o.RequeueAfter > 0:
		s.failures[k] = 0
		s.addAfter(k, o.RequeueAfter)
	default:
		s.failures[k] = 0
	}
	if s.dirty[k] {
		s.ready = append(s.ready, k)
	}
}

// next is the due time of the earliest waiting entry.
func (s *sim) next() (time.Duration, bool) {
	var at time.Duration
	found := false
	for _, d := range s.waiting {
		if !found || d < at {
			at, found = d, true
		}
	}
	return at, found
}

// settle runs the worker, every reconcile succeeding, until nothing is
// queued or waiting.
func (s *sim) settle() {
	for i := 0; i < 100 && !s.g.done(); i++ {
		s.endBusy(spec.Outcome{})
		if s.startNext() {
			s.advance(s.g.pick([]time.Duration{0, time.Millisecond, time.Second}))
			continue
		}
		at, ok := s.next()
		if !ok {
			return
		}
		s.advance(at - s.g.now)
	}
}

// run plays n random actions: writes, time passing, reconciles starting
// and ending.
func (s *sim) run(n int) {
	g := s.g
	for range n {
		switch g.r.IntN(6) {
		case 0, 1:
			k := g.key()
			_, live := g.server[k]
			g.write(k, live && g.r.IntN(3) == 0)
			s.add(k)
		case 2:
			s.advance(g.pick([]time.Duration{0, time.Millisecond, time.Second, 10 * time.Second, time.Minute}))
		case 3, 4:
			if !s.startNext() {
				s.endBusy(g.outcome())
			}
		case 5:
			s.endBusy(g.outcome())
		}
	}
}

// converge: an honest single-worker run, settled (every reconcile
// succeeding once writes stop) or not, maybe stopped, then Final.
func (g *ctlGen) converge() {
	s := g.newSim()
	s.run(4 + g.r.IntN(20))
	if g.r.IntN(4) != 0 {
		s.settle()
	}
	if g.r.IntN(3) == 0 {
		g.stopNow()
	}
}

// prefix is an honest run of a few actions on the keys other than k,
// settled, so that a targeted sequence on k is not alone in the vector.
func (g *ctlGen) prefix(k string) *sim {
	s := g.newSim()
	for range g.r.IntN(4) {
		o := g.key()
		if o == k {
			continue
		}
		g.write(o, false)
		s.add(o)
		if g.r.IntN(2) == 0 {
			s.startNext()
			s.advance(g.pick([]time.Duration{0, time.Millisecond}))
			s.endBusy(spec.Outcome{})
		}
	}
	s.settle()
	return s
}

// oneAtATime: a second start of a key while a reconcile of it runs (after
// a fresh notification), or the end of a reconcile that is not running.
func (g *ctlGen) oneAtATime() {
	k := g.key()
	g.prefix(k)
	g.write(k, false)
	g.startRead(k)
	g.now += g.pick([]time.Duration{0, time.Millisecond, time.Second})
	switch g.r.IntN(3) {
	case 0:
		g.write(k, false)
		g.now += g.pick([]time.Duration{0, time.Millisecond})
		g.startRead(k) // overlaps the running one
	case 1:
		g.end(k, spec.Outcome{})
		g.end(k, g.outcome()) // ends again
	default:
		g.end(k, spec.Outcome{})
		g.end(ctlKeys[(slices.Index(ctlKeys, k)+1)%len(ctlKeys)], spec.Outcome{}) // never started
	}
}

// caughtUp: reconciles reading a cache behind, at or ahead of the latest
// notification of their key (present or deleted).
func (g *ctlGen) caughtUp() {
	k := g.key()
	g.prefix(k)
	v1 := g.rv + 1
	v2 := v1 + 1 + int64(g.r.IntN(3))
	g.rv = v2 + 1
	g.notify(k, v1, false)
	g.now += g.pick([]time.Duration{0, time.Millisecond})
	deleted := g.r.IntN(3) == 0
	g.notify(k, v2, deleted)
	if deleted {
		delete(g.server, k)
	} else {
		g.server[k] = v2
	}
	g.now += g.pick([]time.Duration{0, time.Millisecond, time.Second})
	var reads []spec.Seen
	if deleted {
		// Behind: present at or before the deleted version; caught up:
		// absent, or recreated later.
		reads = []spec.Seen{{Present: true, RV: v1}, {Present: true, RV: v2}, {}, {Present: true, RV: v2 + 1}}
	} else {
		// Behind: an older version, or the key absent before its creation
		// is not behind (deleted since); caught up: v2 or later.
		reads = []spec.Seen{{Present: true, RV: v1}, {Present: true, RV: v1}, {Present: true, RV: v2}, {Present: true, RV: v2 + 1}, {}}
	}
	r := reads[g.r.IntN(len(reads))]
	g.start(k, r)
	g.now += g.pick([]time.Duration{0, time.Millisecond})
	g.end(k, spec.Outcome{})
	if r.Present {
		g.server[k] = r.RV
	} else {
		delete(g.server, k)
	}
}

// monotonic: a reconcile that read ahead of the notifications, then one
// that reads an older version, still at or after every notification.
func (g *ctlGen) monotonic() {
	k := g.key()
	g.prefix(k)
	v := g.rv + 1
	g.rv = v + 4
	g.notify(k, v, false)
	g.now += g.pick([]time.Duration{0, time.Millisecond})
	ahead := v + 2 + int64(g.r.IntN(2))
	g.start(k, spec.Seen{Present: true, RV: ahead})
	g.now += g.pick([]time.Duration{0, time.Millisecond, time.Second})
	g.end(k, spec.Outcome{})
	g.now += g.pick([]time.Duration{time.Millisecond, time.Second})
	mid := v + 1
	g.notify(k, mid, false)
	g.now += g.pick([]time.Duration{0, time.Millisecond})
	reads := []spec.Seen{{Present: true, RV: mid}, {Present: true, RV: mid}, {Present: true, RV: ahead}, {}}
	r := reads[g.r.IntN(len(reads))]
	g.start(k, r)
	g.now += time.Millisecond
	g.end(k, spec.Outcome{})
	if r.Present {
		g.server[k] = r.RV
	} else {
		delete(g.server, k)
	}
}

// busyLoop: a reconcile of a key never notified, or again after a success
// with no notification since; or, honestly, again after a notification.
func (g *ctlGen) busyLoop() {
	k := g.key()
	g.prefix(k)
	if g.r.IntN(4) == 0 {
		g.startRead(k)
		return
	}
	g.write(k, false)
	g.now += g.pick([]time.Duration{0, time.Millisecond})
	g.startRead(k)
	g.now += g.pick([]time.Duration{0, time.Millisecond, time.Second})
	g.end(k, spec.Outcome{})
	g.now += g.pick([]time.Duration{time.Millisecond, time.Second, time.Hour})
	if g.r.IntN(3) == 0 {
		g.write(k, false)
	}
	g.startRead(k)
	g.now += time.Millisecond
	g.end(k, spec.Outcome{})
}

// retryDelay: consecutive failures, each retried at the limiter's delay
// (doubled, capped), the failures forgotten on success; the last retry
// comes early, exactly on time, or late.
func (g *ctlGen) retryDelay() {
	k := g.key()
	g.prefix(k)
	g.write(k, false)
	g.now += g.pick([]time.Duration{0, time.Millisecond})
	fails := 1 + g.r.IntN(5)
	for i := 1; i <= fails; i++ {
		g.startRead(k)
		g.now += g.pick([]time.Duration{0, time.Millisecond})
		g.end(k, spec.Outcome{Failed: true})
		d := g.lim.Delay(i)
		if i == fails {
			switch g.r.IntN(3) {
			case 0:
				d -= 1 + time.Duration(g.r.Int64N(int64(d)))
			case 1:
				d += g.pick([]time.Duration{1, time.Millisecond, time.Second})
			}
		}
		g.now += d
	}
	if g.r.IntN(3) == 0 {
		// A notification owes a reconcile at once, whatever the delay.
		g.write(k, false)
	}
	g.startRead(k)
	g.end(k, spec.Outcome{})
	if g.r.IntN(2) == 0 {
		// Forgotten: the next failure is retried at the base delay.
		g.now += time.Second
		g.write(k, false)
		g.startRead(k)
		g.end(k, spec.Outcome{Failed: true})
		g.now += g.lim.Delay(1) - time.Duration(g.r.IntN(2))
		g.startRead(k)
		g.end(k, spec.Outcome{})
	}
}

// requeue: a requested requeue followed early, on time, late or, before
// Final, never.
func (g *ctlGen) requeue() {
	k := g.key()
	g.prefix(k)
	g.write(k, false)
	g.startRead(k)
	after := g.pick([]time.Duration{time.Millisecond, time.Second, time.Minute})
	g.now += g.pick([]time.Duration{0, time.Millisecond})
	g.end(k, spec.Outcome{RequeueAfter: after})
	switch g.r.IntN(4) {
	case 0:
		g.now += after - 1 - time.Duration(g.r.Int64N(int64(after)))
	case 1:
		g.now += after
	case 2:
		g.now += after + g.pick([]time.Duration{1, time.Second})
	case 3:
		return // Final: the requeue is owed
	}
	g.startRead(k)
	g.now += time.Millisecond
	g.end(k, spec.Outcome{})
}

// eventual: an honest run that settles, then Final against a server that
// differs, or with a reconcile still running or a retry owed.
func (g *ctlGen) eventual() {
	s := g.newSim()
	s.run(3 + g.r.IntN(10))
	s.settle()
	k := g.key()
	var server map[string]int64 // nil: the server's state as written
	switch g.r.IntN(6) {
	case 0: // changed on the server (or created), never notified
		server = maps.Clone(g.server)
		g.rv++
		server[k] = g.rv
	case 1: // deleted on the server, never notified
		server = maps.Clone(g.server)
		delete(server, k)
	case 2: // still running
		g.write(k, false)
		s.add(k)
		s.startNext()
	case 3: // last reconcile failed: its retry is owed
		g.write(k, false)
		s.add(k)
		s.startNext()
		s.endBusy(spec.Outcome{Failed: true})
	case 4: // notified, never reconciled
		_, live := g.server[k]
		g.write(k, live && g.r.IntN(2) == 0)
	case 5: // nothing wrong
	}
	if g.r.IntN(2) == 0 {
		g.stopNow()
	}
	if server == nil {
		server = g.server
	}
	g.final(server)
}

// stop: a run stopped, then a notification or a reconcile (broken), or
// the running reconcile ending (kept), then Final.
func (g *ctlGen) stop() {
	s := g.newSim()
	s.run(2 + g.r.IntN(8))
	k := g.key()
	g.write(k, false)
	s.add(k)
	s.startNext()
	g.now += g.pick([]time.Duration{0, time.Millisecond})
	g.stopNow()
	switch g.r.IntN(3) {
	case 0:
		g.write(g.key(), false)
	case 1:
		s.endBusy(spec.Outcome{})
		s.startNext()
		if s.busy == "" {
			g.startRead(k)
		}
	case 2:
		s.endBusy(spec.Outcome{})
		s.ready = nil
		s.waiting = map[string]time.Duration{}
	}
}

// carry: a wake at the very instant a reconcile of its key starts may
// have come after the worker took the key, when another wake was due too
// (then one of them made the queue hand the key out), so it owes one
// reconcile more, and only one. A lone notification at that instant made
// the queue hand the key out itself, and owes nothing more; nor do wakes
// all before the instant.
func (g *ctlGen) carry() {
	k := g.key()
	g.prefix(k)
	g.now += time.Second
	// The wakes before the start: none, one or two just before, then
	// none, one or two at its very instant (at least one wake in all).
	before, at := g.r.IntN(3), g.r.IntN(3)
	if before+at == 0 {
		at = 1
	}
	for range before {
		g.write(k, false)
		g.now += g.pick([]time.Duration{0, 1, time.Millisecond})
	}
	if before > 0 && g.r.IntN(2) == 0 {
		g.now++ // strictly after every wake before
	}
	for range at {
		g.write(k, false)
	}
	g.startRead(k)
	g.now += g.pick([]time.Duration{0, time.Millisecond})
	g.end(k, spec.Outcome{})
	g.now += g.pick([]time.Duration{0, time.Millisecond, time.Second})
	g.startRead(k) // owed only by a carry
	g.now += time.Millisecond
	g.end(k, spec.Outcome{})
	if g.r.IntN(2) == 0 {
		g.now += time.Second
		g.startRead(k) // owed by nothing
		g.end(k, spec.Outcome{})
	}
}

// schedule: the delaying queue holds one waiting entry per key: a later
// retry or requeue scheduled while an earlier one waits is dropped, an
// earlier one replaces it; one scheduled at the very instant the waiting
// one is due may never come.
func (g *ctlGen) schedule() {
	k := g.key()
	g.prefix(k)
	g.write(k, false)
	g.startRead(k)
	g.end(k, spec.Outcome{Failed: true})
	first := g.now + g.lim.Delay(1) // the retry's due time
	// A notification before the retry is due, and a reconcile for it that
	// ends scheduling a requeue (or failing again).
	switch g.r.IntN(3) {
	case 0:
		g.now += g.lim.Delay(1) / 2
	case 1:
		g.now += g.lim.Delay(1) // at the very instant the retry is due
	case 2:
		g.now += 0
	}
	if g.now < first || g.r.IntN(2) == 0 {
		g.write(k, false)
		g.startRead(k)
	} else {
		g.startRead(k) // the retry, due now
	}
	var second time.Duration
	if g.r.IntN(3) == 0 {
		g.end(k, spec.Outcome{Failed: true})
		second = g.now + g.lim.Delay(2)
	} else {
		after := g.pick([]time.Duration{time.Millisecond, g.lim.Delay(1) / 4, time.Second, time.Minute, 10 * time.Minute})
		if after <= 0 {
			after = time.Millisecond
		}
		g.end(k, spec.Outcome{RequeueAfter: after})
		second = g.now + after
	}
	// Reconcile at each due time in order: the one the queue kept is
	// owed, the other is not (unless it is due at the same instant).
	for _, at := range slices.Sorted(slices.Values([]time.Duration{first, second})) {
		if at < g.now {
			continue
		}
		if g.r.IntN(4) == 0 {
			break // leave it to Final
		}
		g.now = at
		g.startRead(k)
		g.end(k, spec.Outcome{})
	}
}
