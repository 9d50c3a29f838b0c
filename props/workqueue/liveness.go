package workqueue

import (
	"fmt"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kverify/kverify/props/checkkit"
	wq "github.com/kverify/kverify/spec/workqueue"
	"k8s.io/utils/clock"
)

// CheckLiveness is the check of a queue's fairness under sustained load
// (issue 27, class 7): the bound the profile declares (Profile.Fairness)
// on the Gets an item waits while new and re-added work keeps arriving.
const CheckLiveness = "queue/liveness"

// CheckDelayingLiveness is queue/liveness on the delaying queue: some of
// the adds are AddAfter with no delay, and every round adds a fresh item
// with a short delay, which must be handed out within the bound counted
// from its ready time.
const CheckDelayingLiveness = "delaying/liveness"

// liveDelay is delaying/liveness's short delay, and the fake time every
// round takes.
const liveDelay = time.Millisecond

// liveScenario is one fixed run of queue/liveness: prefill fresh keys,
// have every worker take one, then rounds of sustained load, each with two
// fresh keys, an Add of a queued key, a re-Add of a key processed a few
// rounds before, a re-Add of the item the round's worker holds, its Done
// and a Get; with prio, every other round also adds a fresh key at a higher
// priority. Then a drain: Done and Get until nothing is queued.
type liveScenario struct {
	name    string
	prefill int
	rounds  int
	// workers holding items at once: more than the machines' Workers, so
	// that a queue that changes course when many items are being processed
	// is reached.
	workers int
	prio    bool
	// delaying drives a delaying queue: AddAfter with no delay for one
	// fresh key and the re-Adds of processed keys, and a fresh key with
	// liveDelay every round (each round sleeps liveDelay first).
	delaying bool
}

// liveScenarios: a small backlog that grows at every Get (an overload
// that lasts), and a backlog past 8192, twice the machines' largest burst.
var liveScenarios = []liveScenario{
	{name: "growing backlog", prefill: 20, rounds: 600, workers: 6},
	{name: "backlog past 8192", prefill: 8300, rounds: 40, workers: 6},
}

// livePrio is the priority scenario's: a stream of higher-priority adds
// over a growing backlog at priority zero.
var livePrio = liveScenario{name: "higher priorities arriving", prefill: 20, rounds: 600, workers: 6, prio: true}

// liveDelaying is delaying/liveness's: a growing backlog fed also by
// AddAfter, with and without a delay.
var liveDelaying = liveScenario{name: "delayed and immediate adds", prefill: 20, rounds: 300, workers: 6, delaying: true}

// liveHigh is the priority of the higher-priority stream.
const liveHigh = 1

func livenessGuarantee(p wq.Profile) string {
	const load = "while fresh keys, Adds of queued keys, re-Adds of processed keys and re-Adds of items being processed arrive between every two Gets (6 workers holding items, backlogs from 20 growing at every Get, and past 8192)"
	switch p.Fairness {
	case wq.FairWithinPriority:
		return "bounded among equal priorities: an item queued behind n others of its priority is handed out within the next n+1 Gets that hand out its priority, " + load +
			", and with a stream of higher-priority adds (GetWithPriority); across priorities the profile declares no bound (a sustained stream of higher priorities may starve an item), so that part is not offered"
	}
	return "bounded: an item queued behind n others is handed out within the next n+1 Gets, " + load
}

func delayingLivenessGuarantee() string {
	return "bounded: an item queued behind n others is handed out within the next n+1 Gets, counted from its ready time for an AddAfter with a delay, while fresh keys (Add and AddAfter with no delay), Adds of queued keys, re-Adds (AddAfter with no delay) of processed keys, re-Adds of items being processed and a fresh AddAfter of " + liveDelay.String() + " arrive between every two Gets (6 workers holding items, a backlog growing at every Get)"
}

func delayingLivenessCheck(s Subject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, _ checkkit.Config) error {
		return checkkit.InBubble(t, func() error { return runLive(s, liveDelaying) })
	}
}

func livenessCheck(s Subject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, _ checkkit.Config) error {
		scens := liveScenarios
		if s.Profile.Fairness == wq.FairWithinPriority {
			if s.NewPrioritized != nil {
				scens = append(scens[:len(scens):len(scens)], livePrio)
			}
			t.Logf("%s: across priorities not offered: the profile (%s) declares %v", CheckLiveness, s.Profile.Name, s.Profile.Fairness)
		}
		for _, sc := range scens {
			if err := checkkit.InBubble(t, func() error { return runLive(s, sc) }); err != nil {
				return fmt.Errorf("%s: %w", sc.name, err)
			}
		}
		return nil
	}
}

// liveQueue is what the driver needs: Add and Get with priorities, zero
// for a plain queue.
type liveQueue struct {
	q    Queue
	p    Prioritized
	d    Delaying
	prio bool
}

func (l liveQueue) add(k string, prio int) {
	if l.prio {
		l.p.AddWithPriority(k, prio)
		return
	}
	l.q.Add(k)
}

func (l liveQueue) get() (string, int, bool) {
	if l.prio {
		return l.p.GetWithPriority()
	}
	k, shut := l.q.Get()
	return k, 0, shut
}

func runLive(s Subject, sc liveScenario) error {
	deps := Deps{Clock: clock.RealClock{}}
	lq := liveQueue{prio: sc.prio}
	switch {
	case sc.prio:
		lq.p = s.NewPrioritized(deps)
		lq.q = lq.p
	case sc.delaying:
		lq.d = s.NewDelaying(deps)
		lq.q = lq.d
	default:
		lq.q = s.New(deps)
	}
	defer lq.q.ShutDown()
	tr := newLiveTracker(s.Profile)
	held := make([]string, sc.workers)
	var finished []string
	// settle lets a queue that hands adds over to a goroutine of its own
	// (Profile.AddHandedOver) take them in before the next call, so that
	// the order the tracker sees is the order the queue was given.
	settle := func() {
		if s.Profile.AddHandedOver {
			synctest.Wait()
		}
	}
	add := func(k string, prio int) {
		lq.add(k, prio)
		settle()
		tr.add(k, prio)
	}
	// addNow is an Add, or on a delaying queue an AddAfter with no delay.
	addNow := func(k string, prio int) {
		if !sc.delaying {
			add(k, prio)
			return
		}
		lq.d.AddAfter(k, 0)
		settle()
		tr.add(k, prio)
	}
	get := func(w int) error {
		k, prio, shut := lq.get()
		if shut {
			return checkkit.Broke(GShutdown, "Get #%d returned shutdown with %d items queued and the queue running", tr.total+1, tr.nQueued())
		}
		held[w] = k
		return tr.handout(k, prio)
	}
	done := func(w int) {
		if held[w] == "" {
			return
		}
		lq.q.Done(held[w])
		tr.done(held[w])
		finished = append(finished, held[w])
		held[w] = ""
	}
	for i := range sc.prefill {
		add("p"+strconv.Itoa(i), 0)
	}
	for w := range sc.workers {
		if err := get(w); err != nil {
			return err
		}
	}
	// ready sleeps a round's fake time: the item added with liveDelay a
	// round before is ready, and counts as queued from then.
	ready := func(r int) {
		time.Sleep(liveDelay)
		synctest.Wait()
		tr.add("d"+strconv.Itoa(r-1), 0)
	}
	for r := range sc.rounds {
		w := r % sc.workers
		rs := strconv.Itoa(r)
		if sc.delaying && r > 0 {
			ready(r)
		}
		add("n"+rs+"a", 0)
		addNow("n"+rs+"b", 0)
		if sc.delaying {
			lq.d.AddAfter("d"+rs, liveDelay)
		}
		if sc.prio && r%2 == 0 {
			add("h"+rs, liveHigh)
		}
		// An Add of a key queued a round before: it keeps its place.
		if r > 0 {
			if k := "n" + strconv.Itoa(r-1) + "b"; tr.queued(k) {
				add(k, 0)
			}
		}
		// A re-Add of a key processed a few Dones before, unless another
		// worker holds it again (a queue that keeps it in place while it
		// is processed could not hand it out before that worker's Done).
		if n := len(finished); n >= 3 {
			if k := finished[n-3]; !tr.held(k) {
				addNow(k, tr.prio(k))
			}
		}
		// A re-Add of the item being processed, marked Done at once.
		if k := held[w]; k != "" {
			add(k, tr.prio(k))
		}
		done(w)
		if err := get(w); err != nil {
			return err
		}
	}
	if sc.delaying && sc.rounds > 0 {
		ready(sc.rounds)
	}
	// The drain: no more adds.
	for w := 0; tr.nQueued() > 0; w = (w + 1) % sc.workers {
		done(w)
		if err := get(w); err != nil {
			return err
		}
	}
	for w := range sc.workers {
		done(w)
	}
	return nil
}

// liveItem is the tracker's view of one key.
type liveItem struct {
	queued, held, dirty bool
	prio                int // of the queued entry, or of the held item
	dirtyPrio           int
	entry               liveEntry
}

// liveEntry is one queueing of a key: the Get count of its level when it
// was queued, the items of its level ahead of it, and its deadline, the
// level's Get count by which it must have been handed out.
type liveEntry struct {
	key                 string
	at, ahead, deadline int
}

// liveTracker holds the bound, not the order: per level (one, or one per
// priority with FairWithinPriority) the Gets that handed it out, the items
// queued, and the entries in the order they were queued, whose deadlines
// increase, so that only the oldest live one needs looking at.
type liveTracker struct {
	perPrio     bool
	reAddQueues bool
	total       int
	gets        map[int]int
	n           map[int]int
	fifo        map[int][]liveEntry
	items       map[string]*liveItem
}

func newLiveTracker(p wq.Profile) *liveTracker {
	return &liveTracker{perPrio: p.Fairness == wq.FairWithinPriority, reAddQueues: p.ReAddQueues,
		gets: map[int]int{}, n: map[int]int{}, fifo: map[int][]liveEntry{}, items: map[string]*liveItem{}}
}

func (t *liveTracker) level(prio int) int {
	if t.perPrio {
		return prio
	}
	return 0
}

func (t *liveTracker) nQueued() (n int) {
	for _, v := range t.n {
		n += v
	}
	return n
}

func (t *liveTracker) queued(k string) bool { it := t.items[k]; return it != nil && it.queued }
func (t *liveTracker) held(k string) bool   { it := t.items[k]; return it != nil && it.held }
func (t *liveTracker) prio(k string) int {
	if it := t.items[k]; it != nil {
		return it.prio
	}
	return 0
}

func (t *liveTracker) enqueue(k string, it *liveItem, prio int) {
	lv := t.level(prio)
	e := liveEntry{key: k, at: t.gets[lv], ahead: t.n[lv]}
	e.deadline = e.at + e.ahead + 1
	it.queued, it.prio, it.entry = true, prio, e
	t.n[lv]++
	t.fifo[lv] = append(t.fifo[lv], e)
}

func (t *liveTracker) add(k string, prio int) {
	it := t.items[k]
	switch {
	case it == nil:
		it = &liveItem{}
		t.items[k] = it
		t.enqueue(k, it, prio)
	case it.queued:
		// A raise moves it to the back of its new level; anything else
		// keeps its place.
		if t.perPrio && prio > it.prio {
			t.n[t.level(it.prio)]--
			t.enqueue(k, it, prio)
		}
	case it.held && t.reAddQueues:
		t.enqueue(k, it, prio)
	case it.held:
		if !it.dirty || prio > it.dirtyPrio {
			it.dirtyPrio = prio
		}
		it.dirty = true
	default:
		t.enqueue(k, it, prio)
	}
}

func (t *liveTracker) done(k string) {
	it := t.items[k]
	if it == nil || !it.held {
		return
	}
	it.held = false
	if it.dirty {
		it.dirty = false
		t.enqueue(k, it, it.dirtyPrio)
	}
	if !it.queued {
		delete(t.items, k)
	}
}

func (t *liveTracker) handout(k string, prio int) error {
	t.total++
	it := t.items[k]
	if it == nil || !it.queued || it.held {
		return checkkit.Broke(GStingy, "Get #%d handed out %q, which is not queued (or is being processed)", t.total, k)
	}
	if t.perPrio && prio != it.prio {
		return checkkit.Broke(GPriority, "Get #%d handed out %q with priority %d, queued with %d", t.total, k, prio, it.prio)
	}
	lv := t.level(it.prio)
	t.gets[lv]++
	t.n[lv]--
	it.queued, it.held = false, true
	for l, es := range t.fifo {
		for len(es) > 0 {
			e := es[0]
			if o := t.items[e.key]; o == nil || !o.queued || o.entry != e {
				es = es[1:] // handed out, or queued again since
				continue
			}
			if e.deadline <= t.gets[l] {
				of := ""
				if t.perPrio {
					of = fmt.Sprintf(" of priority %d", l)
				}
				return checkkit.Broke(GBoundedWait, "%q, queued behind %d others%s, was not handed out within the next %d Gets%s while Adds kept arriving: %d such Gets since, the latest (Get #%d overall) handed out %q", e.key, e.ahead, of, e.ahead+1, of, t.gets[l]-e.at, t.total, k)
			}
			break
		}
		t.fifo[l] = es
	}
	return nil
}
