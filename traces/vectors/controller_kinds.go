package vectors

import (
	"maps"
	"slices"
	"time"

	spec "github.com/kverify/kverify/spec/controller"
)

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
