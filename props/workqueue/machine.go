package workqueue

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing/synctest"
	"time"

	"k8s.io/utils/clock"

	"github.com/kverify/kverify/props/checkkit"
	wq "github.com/kverify/kverify/spec/workqueue"
)

// Workers is the number of logical workers a queue machine drives: enough
// for several items to be held at once and for Gets to block side by side.
const Workers = 3

// Keys are the items the machine uses: few, so that adds collide.
var Keys = []string{"a", "b", "c"}

// Mode selects which parts of the contract a machine exercises.
type Mode struct {
	// FullDrain lets ShutDownWithDrain start with items still queued (the
	// drain contract). Without it, drain starts only when the FIFO is empty
	// and no held item is dirty, where every known queue agrees.
	FullDrain bool
	// Misuse adds Done of items that are not being processed.
	Misuse bool
	// Metrics turns the queue's metrics on and checks them against the
	// model after every step.
	Metrics bool
	// Order makes the queue with a recording Order (Subject.NewWithOrder)
	// and checks the queue's calls to it after every step.
	Order bool
}

type getResult struct {
	key      string
	shutdown bool
}

type worker struct {
	held    string
	holding bool
	getting chan getResult // non-nil while a Get is in flight
}

// machine drives one queue and the model in lock step. It must run inside
// a synctest bubble: it starts goroutines for blocking calls and uses
// synctest.Wait as the step boundary, so "blocked" is decided exactly.
type machine struct {
	q       Queue
	m       wq.Model
	mode    Mode
	workers [Workers]worker
	drain   chan struct{} // non-nil while ShutDownWithDrain is in flight
	rec     *checkkit.Recorder

	// With Mode.Metrics: the subject's metrics and what, beyond the model,
	// judges them (nil otherwise).
	metrics *metricsWatch

	fresh int // bulk steps' keys so far

	// With Mode.Order: the queue's storage, and the calls the model says
	// the current step must make.
	order     *recordingOrder
	wantOrder expectOrder
}

// freshKey returns a key no step has used.
func (x *machine) freshKey() string {
	x.fresh++
	return fmt.Sprintf("n%05d", x.fresh)
}

// newMachine makes a fresh queue from s (with metrics on for
// Mode.Metrics) and a machine to drive it. Call it inside the bubble.
func newMachine(s Subject, mode Mode, rec *checkkit.Recorder) *machine {
	x := &machine{mode: mode, rec: rec, m: wq.New(s.Profile)}
	deps := Deps{Clock: clock.RealClock{}}
	if mode.Metrics {
		deps.Recorder = new(Metrics)
		x.metrics = newMetricsWatch(deps.Recorder)
	}
	if mode.Order {
		x.order = &recordingOrder{}
		x.q = s.NewWithOrder(deps, x.order)
		return x
	}
	x.q = s.New(deps)
	return x
}

// Enabled reports whether the step is meaningful now; disabled steps are
// no-ops, so every byte string decodes to a valid run.
func (x *machine) Enabled(s Step) bool {
	switch s.Bulk {
	case burst:
		return true
	case drain, steady:
		// One worker alone: no other Get in flight may take the items.
		for i := range x.workers {
			if w := &x.workers[i]; w.getting != nil || (i == s.Worker && w.holding) {
				return false
			}
		}
		return true
	}
	switch s.Kind {
	case wq.Get:
		w := &x.workers[s.Worker]
		return !w.holding && w.getting == nil
	case wq.Done:
		if s.Key != "" {
			return x.mode.Misuse && !x.m.Processing(s.Key)
		}
		return x.workers[s.Worker].holding
	case wq.ShutDown:
		// A second ShutDown is the lifecycle check's (queue/lifecycle):
		// here only one that releases a drain in flight, so that a subject
		// whose second ShutDown panics is still judged on the rest.
		return !x.m.IsShuttingDown() || x.drain != nil
	case wq.ShutDownWithDrain:
		if x.drain != nil || x.m.IsShuttingDown() && x.m.Profile().DrainIsShutDown {
			return false
		}
		if x.mode.FullDrain {
			return true
		}
		if x.m.Ready() > 0 {
			return false
		}
		for _, k := range x.m.ProcessingKeys() {
			if x.m.Dirty(k) {
				return false
			}
		}
		return true
	}
	return true
}

// Apply runs one step on the subject and the model and checks the outcome.
func (x *machine) Apply(s Step) error {
	if !x.Enabled(s) {
		return nil
	}
	if s.Bulk != 0 {
		x.rec.Step(s.String(), "", "")
		if err := x.bulk(s); err != nil {
			return err
		}
		return x.settled(s)
	}
	want, got := "", ""
	switch s.Kind {
	case wq.Add:
		x.add(s.Key)
	case wq.Get:
		x.workers[s.Worker].getting = startGet(x.q)
	case wq.Done:
		key := s.Key
		if key == "" {
			w := &x.workers[s.Worker]
			key, w.held, w.holding = w.held, "", false
		}
		if x.m.Processing(key) {
			x.metrics.done(key, time.Now())
		}
		if x.m.Processing(key) && x.m.Dirty(key) {
			x.wantOrder.push++ // re-queued
		}
		x.q.Done(key)
		x.m.Apply(wq.Op{Kind: wq.Done, Key: key})
	case wq.Len:
		n := x.q.Len()
		out := x.m.Apply(wq.Op{Kind: wq.Len})
		want, got = strconv.Itoa(out.N), strconv.Itoa(n)
		if n != out.N {
			x.rec.Step(s.String(), want, got)
			return checkkit.Broke(GLenLaw, "Len() = %d, model %d (%s; queue %s)", n, out.N, lenGap(n, out.N), short(x.m.Head(9), out.N))
		}
	case wq.ShuttingDown:
		b := x.q.ShuttingDown()
		out := x.m.Apply(wq.Op{Kind: wq.ShuttingDown})
		want, got = strconv.FormatBool(out.Flag), strconv.FormatBool(b)
		if b != out.Flag {
			x.rec.Step(s.String(), want, got)
			return checkkit.Broke(GShutdown, "ShuttingDown() = %v, model %v", b, out.Flag)
		}
	case wq.ShutDown:
		x.metrics.shutDown(time.Now())
		if !shutDown(x.q) {
			x.rec.Step(s.String(), "returned", "blocked")
			return checkkit.Broke(GShutdownReturns, "ShutDown did not return within %v", checkkit.Watchdog)
		}
		x.m.Apply(wq.Op{Kind: wq.ShutDown})
	case wq.ShutDownWithDrain:
		x.metrics.shutDown(time.Now())
		x.drain = startDrain(x.q)
		x.m.ApplyBegin(wq.Op{Kind: wq.ShutDownWithDrain})
	default:
		return fmt.Errorf("unknown step %v", s)
	}
	x.rec.Step(s.String(), want, got)
	return x.settled(s)
}

// settled is settle, then the order hook's check.
func (x *machine) settled(s Step) error {
	if err := x.settle(); err != nil {
		return err
	}
	return x.checkOrder(s.String())
}

// add adds key to the subject and the model.
func (x *machine) add(key string) {
	if !x.m.IsShuttingDown() {
		switch {
		case !x.m.Dirty(key) && !x.m.Processing(key):
			x.wantOrder.push++
		case x.m.Dirty(key) && !x.m.Processing(key):
			x.wantOrder.touched = append(x.wantOrder.touched, key)
		}
	}
	x.q.Add(key)
	x.m.Apply(wq.Op{Kind: wq.Add, Key: key})
}

// bulk runs a bulk step. The worker's Gets are direct calls: the machine
// calls Get only while the subject's Len says an item is there, so a Get
// that blocks there is the subject's bug, which synctest reports as a
// deadlock of the bubble.
func (x *machine) bulk(s Step) error {
	switch s.Bulk {
	case burst:
		for range s.N {
			x.add(x.freshKey())
		}
		return nil
	case drain:
		for i := 0; i < s.N && x.m.Ready() > 0; i++ {
			if err := x.getDone(s, i); err != nil {
				return err
			}
		}
		return nil
	case steady:
		for i := range s.N {
			x.add(x.freshKey())
			if x.m.Ready() == 0 {
				continue // shutting down: the add was ignored
			}
			if err := x.getDone(s, i); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("unknown bulk step %v", s)
}

// getDone is one Get and Done of a bulk step's worker, checked against the
// model's FIFO head.
func (x *machine) getDone(s Step, i int) error {
	if n, want := x.q.Len(), x.m.Len(); n != want {
		x.rec.Step("Len", strconv.Itoa(want), strconv.Itoa(n))
		return checkkit.Broke(GLenLaw, "in %v, before Get %d: Len() = %d, model %d (queue %s)", s, i+1, n, want, short(x.m.Head(9), x.m.Len()))
	}
	head := x.m.Head(1)[0]
	k, shut := x.q.Get()
	if shut || k != head {
		got := fmtResult(getResult{k, shut})
		x.rec.Step(fmt.Sprintf("w%d:Get", s.Worker), head, got)
		if shut {
			return checkkit.Broke(GShutdown, "in %v, Get %d returned shutdown with %d item(s) queued", s, i+1, x.m.Ready())
		}
		if x.m.Processing(k) {
			return checkkit.Broke(GStingy, "in %v, Get %d handed out %q while it was still being processed", s, i+1, k)
		}
		return checkkit.Broke(GFair, "in %v, Get %d returned %q, the model's FIFO head is %q (queue %s)", s, i+1, k, head, short(x.m.Head(9), x.m.Len()))
	}
	x.m.Apply(wq.Op{Kind: wq.Get})
	x.wantOrder.pop++
	now := time.Now()
	x.metrics.handed(k, now, false)
	x.metrics.done(k, now)
	x.q.Done(k)
	x.m.Apply(wq.Op{Kind: wq.Done, Key: k})
	return nil
}

// short renders the head of a long queue: its first keys and its length.
func short(head []string, n int) string {
	if n <= len(head) {
		return fmt.Sprint(head)
	}
	return fmt.Sprintf("%v ... (%d items)", head[:min(len(head), 8)], n)
}

// settle waits until the subject is quiescent, then checks which blocked
// calls returned against what the model allows, and the Len law.
func (x *machine) settle() error {
	synctest.Wait()
	g := pollGets(&x.workers, x.rec)
	queued := x.m.Ready()
	qs := func() string { return short(x.m.Head(9), queued) }
	shut := x.m.IsShuttingDown()
	wantItems, wantReturned := g.want(queued, shut)
	if n := len(g.returned); n != wantReturned {
		switch {
		case n > wantReturned && queued == 0 && !shut:
			return checkkit.Broke(GBlockingGet, "%d Get(s) returned from an empty running queue: %s", n-wantReturned, describe(g.returned, g.results))
		case n > wantReturned:
			return checkkit.Broke(GStingy, "%d Get(s) returned but only %d item(s) were queued %s: %s", n, queued, qs(), describe(g.returned, g.results))
		case shut:
			return checkkit.Broke(GShutdownWakes, "%d Get(s) still blocked on a shut-down queue (queued %s)", len(g.blocked), qs())
		default:
			return checkkit.Broke(GLiveness, "%d Get(s) still blocked with %d item(s) queued %s", len(g.blocked), queued, qs())
		}
	}
	head := x.m.Head(wantItems)
	if !g.tookHead(head) {
		got := g.items()
		for _, k := range got {
			if x.m.Processing(k) {
				return checkkit.Broke(GStingy, "Get handed out %q while it was still being processed (processing: %v)", k, x.m.ProcessingKeys())
			}
		}
		if len(got) < len(head) {
			return checkkit.Broke(GShutdown, "Get returned shutdown with items still queued %s", qs())
		}
		return checkkit.Broke(GFair, "Gets returned %v, the model's FIFO head is %v (queue %s)", got, head, qs())
	}
	// The model pops the same multiset; it tracks the processing set, not
	// which worker holds what, so the order of its pops does not matter.
	for range wantItems {
		x.m.Apply(wq.Op{Kind: wq.Get})
	}
	for _, k := range g.items() {
		x.metrics.handed(k, time.Now(), false)
	}
	x.wantOrder.pop += wantItems
	g.hand(&x.workers)
	done, err := drainReturned(x.drain, x.m.Enabled(wq.Op{Kind: wq.ShutDownWithDrain}), x.rec, x.m.Head(9), x.m.ProcessingKeys())
	if err != nil {
		return err
	}
	if done {
		x.drain = nil
		x.m.Apply(wq.Op{Kind: wq.ShutDownWithDrain})
	}
	if n, want := x.q.Len(), x.m.Len(); n != want {
		return checkkit.Broke(GLenLaw, "Len() = %d, model %d (%s; queue %s)", n, want, lenGap(n, want), short(x.m.Head(9), want))
	}
	return x.checkMetrics()
}

// checkMetrics compares the subject's metrics with the model: depth is the
// number of dirty items (queued, or re-added while processing), adds the
// number of times an item became dirty, queue latency and work duration
// are observed once per item handed out and once per Done of a held item,
// retries stay 0 (a plain queue has no AddAfter), and the unfinished-work
// gauges hold the last refresh's values (see metricsWatch).
func (x *machine) checkMetrics() error {
	if x.metrics == nil {
		return nil
	}
	want := wantMetrics{depth: int64(x.m.Dirties()), counts: x.m.Counts()}
	return x.metrics.check(want, time.Now(), "", func() string {
		return fmt.Sprintf("queue %s, processing %v", short(x.m.Head(9), x.m.Len()), x.m.ProcessingKeys())
	})
}

// startGet calls q.Get in a goroutine; its result arrives on the returned
// channel, buffered so the goroutine exits even if nobody reads it.
func startGet(q Queue) chan getResult {
	ch := make(chan getResult, 1)
	go func() {
		k, sd := q.Get()
		ch <- getResult{k, sd}
	}()
	return ch
}

// startDrain calls q.ShutDownWithDrain in a goroutine; the returned channel
// is closed when it returns.
func startDrain(q Queue) chan struct{} {
	ch := make(chan struct{})
	go func() {
		defer close(ch)
		q.ShutDownWithDrain()
	}()
	return ch
}

// gets is what the Gets in flight did by a quiescent point.
type gets struct {
	returned, blocked []int
	results           map[int]getResult
}

// pollGets collects, after synctest.Wait, which in-flight Gets returned and
// which are still blocked, and records the returns.
func pollGets(ws *[Workers]worker, rec *checkkit.Recorder) gets {
	g := gets{results: map[int]getResult{}}
	for i := range ws {
		w := &ws[i]
		if w.getting == nil {
			continue
		}
		select {
		case r := <-w.getting:
			g.returned = append(g.returned, i)
			g.results[i] = r
		default:
			g.blocked = append(g.blocked, i)
		}
	}
	for _, i := range g.returned {
		rec.Step(fmt.Sprintf("w%d:Get returned", i), "", fmtResult(g.results[i]))
	}
	return g
}

// want is what the model allows: with queued items ready and the queue
// shutting down or not, how many returned Gets carry an item and how many
// Gets must have returned at all.
func (g gets) want(queued int, shut bool) (items, returned int) {
	pending := len(g.returned) + len(g.blocked)
	items = min(pending, queued)
	if shut {
		return items, pending
	}
	return items, items
}

// items are the items the returned Gets took.
func (g gets) items() []string {
	var out []string
	for _, i := range g.returned {
		if r := g.results[i]; !r.shutdown {
			out = append(out, r.key)
		}
	}
	return out
}

// tookHead reports whether the returned Gets took exactly the FIFO's head;
// which worker took which of those items is the scheduler's choice.
func (g gets) tookHead(head []string) bool {
	return slices.Equal(slices.Sorted(slices.Values(g.items())), slices.Sorted(slices.Values(head)))
}

// hand gives each returned worker its item and ends its Get.
func (g gets) hand(ws *[Workers]worker) {
	for _, i := range g.returned {
		w := &ws[i]
		w.getting = nil
		if r := g.results[i]; !r.shutdown {
			w.held, w.holding = r.key, true
		}
	}
}

// drainReturned reports whether an in-flight ShutDownWithDrain returned
// (drain is nil when none is in flight), checks it against what the model
// allows and records the outcome.
func drainReturned(drain chan struct{}, allowed bool, rec *checkkit.Recorder, queue, processing []string) (bool, error) {
	if drain == nil {
		return false, nil
	}
	done := false
	select {
	case <-drain:
		done = true
	default:
	}
	switch {
	case done && !allowed:
		rec.Step("ShutDownWithDrain returned", "blocked", "returned")
		return false, checkkit.Broke(GDrain, "ShutDownWithDrain returned with items queued %v or processing %v", queue, processing)
	case !done && allowed:
		rec.Step("ShutDownWithDrain returned", "returned", "blocked")
		return false, checkkit.Broke(GDrain, "ShutDownWithDrain still blocked although the model lets it return (nothing queued or processing, or ShutDown called since; queue %v, processing %v)", queue, processing)
	case done:
		rec.Step("ShutDownWithDrain returned", "", "returned")
	}
	return done, nil
}

// Close shuts the subject down and releases every blocked call.
//
// It shuts the queue down only if the run left it running or a drain in
// flight: a second ShutDown is the lifecycle check's business, and a
// subject that panics on one (controller-runtime's priority queue does)
// must not fail every other check in its cleanup.
func (x *machine) Close() {
	if !x.m.IsShuttingDown() || x.drain != nil {
		shutDown(x.q)
	}
	synctest.Wait()
}

// shutDown calls q.ShutDown under the watchdog and reports whether it
// returned. Inside a bubble the watchdog runs on fake time: a ShutDown that
// never returns (while, say, a metrics ticker keeps time moving) fails the
// run instead of spinning forever.
func shutDown(q Queue) bool { return checkkit.ReturnsWithin(checkkit.Watchdog, q.ShutDown) }

func fmtResult(r getResult) string {
	if r.shutdown {
		return "(shutdown)"
	}
	return r.key
}

func describe(ws []int, rs map[int]getResult) string {
	var parts []string
	for _, i := range ws {
		parts = append(parts, fmt.Sprintf("w%d=%s", i, fmtResult(rs[i])))
	}
	return strings.Join(parts, " ")
}

// lenGap says how far Len is from the model's ("1 more", "2 fewer"), so
// that a declared divergence can name the direction it excuses: a queue
// that holds an item twice has more, one that lost an item fewer.
func lenGap(got, want int) string {
	if got > want {
		return fmt.Sprintf("%d more", got-want)
	}
	return fmt.Sprintf("%d fewer", want-got)
}
