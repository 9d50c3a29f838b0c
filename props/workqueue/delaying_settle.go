package workqueue

import (
	"fmt"
	"slices"
	"strconv"
	"testing/synctest"
	"time"

	"github.com/kverify/kverify/props/checkkit"
	wq "github.com/kverify/kverify/spec/workqueue"
)

// queueString and waitingString render the model's state for violations,
// shortened when it is large.
func (x *delayingMachine) queueString() string {
	return short(x.m.Queue().Head(9), x.m.Queue().Len())
}

func (x *delayingMachine) waitingString() string {
	w := x.m.Waiting()
	if len(w) <= 8 {
		return fmt.Sprint(w)
	}
	return fmt.Sprintf("%v ... (%d entries)", w[:8], len(w))
}

// sleepTo advances the fake clock to target, stopping 1ns before and at
// every ready time of the model on the way to check the subject there.
func (x *delayingMachine) sleepTo(target time.Time) error {
	for {
		next, ok := x.m.NextReadyAt()
		if !ok || next.After(target) {
			break
		}
		if x.m.WaitingLen() > coarseAbove {
			// A burst waits: stopping at each of its ready times would
			// take thousands of steps. Jump to the target; the order the
			// items became ready in is checked when they are taken.
			time.Sleep(time.Until(target))
			x.advance(time.Now())
			x.jumped = true // Gets in flight returned at times not seen
			err := x.settle(phaseReady)
			x.jumped = false
			clear(x.contested)
			x.justMoved = nil
			return err
		}
		if early := next.Add(-1); early.After(time.Now()) {
			time.Sleep(time.Until(early))
			if err := x.settle(phaseEarly); err != nil {
				return err
			}
		}
		time.Sleep(time.Until(next))
		x.advance(time.Now())
		if err := x.settle(phaseReady); err != nil {
			return err
		}
		for _, k := range x.justMoved {
			delete(x.contested, k)
		}
		x.justMoved = nil
	}
	if d := time.Until(target); d > 0 {
		time.Sleep(d)
	}
	return x.settle(phaseStep)
}

// coarseAbove is how many waiting entries a delaying machine still steps
// through one ready time at a time when it sleeps.
const coarseAbove = 64

// advance moves what is due in the model, noting which keys moved.
func (x *delayingMachine) advance(now time.Time) {
	q := x.m.Queue()
	for _, e := range x.m.Due(now) {
		// Moves only add keys, and the due keys are distinct: their state
		// before the move is their state now.
		if !q.Queued(e.Key) && !q.Processing(e.Key) && !q.IsShuttingDown() {
			x.moved[e.Key] = e.ReadyAt
		}
		x.justMoved = append(x.justMoved, e.Key)
	}
	x.m.ApplyAdvance(now)
}

// early names a subject that has more ready than the model.
func (x *delayingMachine) early() string {
	if x.lastHuge {
		return GHugeNever
	}
	return GNotEarly
}

// late names a subject that has fewer ready than the model at a ready time.
func (x *delayingMachine) late() string {
	for _, k := range x.justMoved {
		if x.contested[k] {
			return GEarlierWins
		}
	}
	return GOnTime
}

// order names Gets that did not take the model's head: got holds a key the
// head does not, the head a key got does not.
func (x *delayingMachine) order(got, head []string) string {
	var g, h string
	for _, k := range got {
		if !slices.Contains(head, k) {
			g = k
		}
	}
	for _, k := range head {
		if !slices.Contains(got, k) {
			h = k
		}
	}
	if g != "" && !x.m.Queue().Queued(g) && x.waiting(g) {
		return x.early()
	}
	tg, okg := x.moved[g]
	th, okh := x.moved[h]
	switch {
	case okg && okh && tg.Equal(th):
		return GTieOrder
	case okg || okh:
		return GReadyOrder
	}
	return GFair
}

// settle waits until the subject is quiescent, then checks which blocked
// calls returned against what the model allows, and the Len law.
func (x *delayingMachine) settle(ph phase) error {
	synctest.Wait()
	g := pollGets(&x.workers, x.rec)
	returned, blocked, results := g.returned, g.blocked, g.results
	where := ""
	switch ph {
	case phaseEarly:
		where = " (1ns before the next ready time)"
	case phaseReady:
		where = " (at a ready time)"
	}
	queued := x.m.Queue().Ready() // what Gets can take
	shut := x.m.IsShuttingDown()
	wantItems, wantReturned := g.want(queued, shut)
	if len(returned) != wantReturned {
		switch {
		case len(returned) > wantReturned && queued == 0 && !shut:
			g := GBlockingGet
			if x.m.WaitingLen() > 0 {
				g = x.early()
			}
			return checkkit.Broke(g, "%d Get(s) returned from a queue with nothing ready%s: %s (waiting %s)", len(returned)-wantReturned, where, describe(returned, results), x.waitingString())
		case len(returned) > wantReturned:
			return checkkit.Broke(GStingy, "%d Get(s) returned but only %d item(s) were queued %s%s: %s", len(returned), queued, x.queueString(), where, describe(returned, results))
		default:
			g := GLiveness
			if ph == phaseReady {
				g = x.late()
			}
			return checkkit.Broke(g, "%d Get(s) still blocked with %d item(s) queued %s%s (shutting down: %v)", len(blocked), queued, x.queueString(), where, shut)
		}
	}
	head := x.m.Queue().Head(wantItems)
	gotItems := g.items()
	if !g.tookHead(head) {
		for _, k := range gotItems {
			if x.m.Queue().Processing(k) {
				return checkkit.Broke(GStingy, "Get handed out %q while it was still being processed (processing: %v)", k, x.m.Queue().ProcessingKeys())
			}
		}
		if len(gotItems) < len(head) {
			return checkkit.Broke(GShutdown, "Get returned shutdown with items still queued %s", x.queueString())
		}
		return checkkit.Broke(x.order(gotItems, head), "Gets returned %v, the model's FIFO head is %v (queue %s, ready times %v)%s", gotItems, head, x.queueString(), x.readyTimes(x.m.Queue().Head(9)), where)
	}
	for range wantItems {
		x.m.Apply(wq.Op{Kind: wq.Get})
	}
	for _, k := range gotItems {
		delete(x.moved, k)
		x.metrics.handed(k, time.Now(), x.jumped)
	}
	g.hand(&x.workers)
	done, err := drainReturned(x.drain, x.m.Enabled(wq.Op{Kind: wq.ShutDownWithDrain}), x.rec, x.m.Queue().Head(9), x.m.Queue().ProcessingKeys())
	if err != nil {
		return err
	}
	if done {
		x.drain = nil
		x.m.Apply(wq.Op{Kind: wq.ShutDownWithDrain})
	}
	if n, want := x.q.Len(), x.m.Queue().Len(); n != want {
		x.rec.Step("Len", strconv.Itoa(want), strconv.Itoa(n))
		g := GLenLaw
		switch {
		case n > want:
			g = x.early()
		case ph == phaseReady:
			g = x.late()
		}
		return checkkit.Broke(g, "Len() = %d, model %d%s (queue %s, waiting %s)", n, want, where, x.queueString(), x.waitingString())
	}
	return x.checkMetrics(where)
}

// checkMetrics compares the subject's metrics with the model, as the plain
// queue's machine does (depth, adds, latency and work-duration counts, the
// unfinished-work gauges), with items made dirty by becoming ready counted
// like Adds, and the retries counter against the AddAfter (and
// AddRateLimited) calls the model counts; Forget and NumRequeues count
// nothing.
func (x *delayingMachine) checkMetrics(where string) error {
	if x.metrics == nil {
		return nil
	}
	q := x.m.Queue()
	want := wantMetrics{depth: int64(q.Dirties()), counts: q.Counts(), retries: x.m.Retries()}
	return x.metrics.check(want, time.Now(), where, func() string {
		return fmt.Sprintf("queue %s, processing %v, waiting %s", x.queueString(), q.ProcessingKeys(), x.waitingString())
	})
}
