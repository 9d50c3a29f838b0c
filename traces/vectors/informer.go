package vectors

import (
	"fmt"
	"slices"
	"time"

	sinf "github.com/kverify/kverify/spec/informer"
	"github.com/kverify/kverify/traces"
)

// The shared informer's resync vectors (component informer): handlers that
// ask for resync periods, added before and after Start and removed, events
// emitted into the informer's store, and fake time passing, with what
// every handler receives at every step. Outcomes follow spec/informer's
// Resync model of client-go's schedule (rounds every check period from
// Start; a handler is due at or after its next resync time and is
// rescheduled one effective period after the round; periods under 1s
// become 1s; a period under the check period lowers it before Start and
// is raised to it after Start); the rest (initial lists at Start and at a
// late join, events to every handler registered) is the fan-out contract
// props/informer's resync checks hold a subject to.
//
// Steps (params.check_ns is the informer's resync argument: its check
// period and the default handler period):
//
//   - AddHandler, key the handler's name, ns the requested period (absent:
//     AddEventHandler, the informer's default period);
//   - RemoveHandler, key the name;
//   - Add, Update, Delete of key: the informer's source produces the
//     event (Add of a key not in the store, Update and Delete of one in
//     it); before Start only the store changes;
//   - Start;
//   - Sleep ns: fake time passes and the rounds due in it run.
//
// Every step has a want: n, the number of handler calls the step made
// (counting the quiescence after it), and calls, those calls (see
// traces.VCall for their order). No step falls on a round's instant, so
// no replayer has to decide whether a step at a round's time comes before
// or after it; a handler's next resync time may (the due test is
// inclusive, which the vectors pin).

// The check names the vectors exercise and the guarantee their
// violations carry (props/informer's resync checks).
var informerKinds = []struct {
	check      string
	guarantees []string
}{
	// Who is due in which round: varied periods, the minimum, lowering
	// and raising, the default period, check period 0.
	{"resync/schedule", []string{"Resync"}},
	// Who takes what: sync notifications only to the handlers due,
	// ordinary events to every handler, late joins, removals.
	{"resync/sync-only", []string{"Resync"}},
}

// informerVector makes vector seed: even seeds exercise the schedule,
// odd ones who takes sync notifications.
func informerVector(seed uint64) traces.Vector {
	r := rng(seed)
	kind := informerKinds[seed%uint64(len(informerKinds))]
	schedule := seed%2 == 0
	const ms = time.Millisecond
	checks := []time.Duration{time.Second, 1500 * ms, 2 * time.Second, 3 * time.Second, 4 * time.Second}
	check := checks[r.IntN(len(checks))]
	periods := []time.Duration{0, time.Second, 2 * time.Second, 3 * time.Second}
	if schedule {
		periods = []time.Duration{0, 300 * ms, time.Second, 1500 * ms, 2 * time.Second, 2500 * ms, 3 * time.Second, 5 * time.Second, 10 * time.Second}
		if seed%10 == 0 {
			check = 0 // an informer that never resyncs, whatever its handlers ask
		}
	}
	sleeps := []time.Duration{250 * ms, 500 * ms, 750 * ms, time.Second, 1250 * ms, 2 * time.Second, 3500 * ms, 5 * time.Second}
	nkeys := 1 + r.IntN(5)

	g := &informerGen{m: sinf.NewResync(check), check: check, t0: time.Unix(0, 0), store: map[string]bool{}}
	g.now = g.t0
	addHandler := func() {
		var period *time.Duration
		if r.IntN(6) > 0 {
			period = &periods[r.IntN(len(periods))]
		}
		g.addHandler(period)
	}
	emit := func() {
		k := fmt.Sprintf("k%d", r.IntN(nkeys))
		switch {
		case !g.store[k]:
			g.emit("Add", k)
		case r.IntN(3) == 0:
			g.emit("Delete", k)
		default:
			g.emit("Update", k)
		}
	}
	// A prelude gives most vectors a store and handlers before Start:
	// some keys added, some handlers, in random order, with time passing
	// between them now and then (a handler's first resync counts from
	// when it was added, not from Start).
	for range 2 + r.IntN(4) {
		switch r.IntN(5) {
		case 0, 1:
			emit()
		case 2, 3:
			addHandler()
		default:
			g.sleep(sleeps[r.IntN(len(sleeps)/2)])
		}
	}
	length := 6 + r.IntN(28)
	startBy := r.IntN(max(1, length/2)) // Start comes by this step at the latest
	for i := 0; i < length; i++ {
		live := g.live()
		switch p := r.IntN(100); {
		case !g.started && (i >= startBy || p >= 85):
			g.start()
		case p < 18 && len(live) < 5 && len(g.handlers) < 8:
			addHandler()
		case p < 24 && len(live) > 1 && (!schedule || r.IntN(3) == 0):
			g.removeHandler(live[r.IntN(len(live))])
		case p < 55:
			emit()
		default:
			g.sleep(sleeps[r.IntN(len(sleeps))])
		}
	}
	if !g.started {
		g.start()
	}
	// Every vector ends with time passing after Start, so that its last
	// rounds show.
	g.sleep(sleeps[len(sleeps)/2+r.IntN(len(sleeps)/2)])
	return traces.Vector{Header: traces.Header{Profile: "client-go", Check: kind.check, Guarantees: kind.guarantees,
		Params: map[string]float64{"check_ns": float64(check)}}, Steps: g.steps}
}

// informerGen is one vector in the making: the model, the store, the
// handlers and the fake clock.
type informerGen struct {
	m        *sinf.Resync
	check    time.Duration // the informer's resync argument: the default handler period
	t0, now  time.Time
	started  bool
	store    map[string]bool
	handlers []informerHandler // in order of adding: the model's indexes
	steps    []traces.VStep
}

type informerHandler struct {
	name    string
	removed bool
}

// live is the indexes of the handlers not removed.
func (g *informerGen) live() []int {
	var out []int
	for i, h := range g.handlers {
		if !h.removed {
			out = append(out, i)
		}
	}
	return out
}

func (g *informerGen) keys() []string {
	var ks []string
	for k, ok := range g.store {
		if ok {
			ks = append(ks, k)
		}
	}
	slices.Sort(ks)
	return ks
}

// step appends a step whose want is calls, collected per handler index:
// flattened in handler order, each handler's in the order appended (by
// time, then key, as generated).
func (g *informerGen) step(s traces.VStep, calls map[int][]traces.VCall) {
	var all []traces.VCall
	for i := range g.handlers {
		all = append(all, calls[i]...)
	}
	s.Want = &traces.Want{N: i64(len(all)), Calls: all}
	g.steps = append(g.steps, s)
}

func (g *informerGen) call(i int, call, key string, at time.Time) traces.VCall {
	return traces.VCall{Handler: g.handlers[i].name, Call: call, Key: key, At: int64(at.Sub(g.t0))}
}

// initialList is handler i's initial list: an init call for every key in
// the store, now.
func (g *informerGen) initialList(i int) []traces.VCall {
	var out []traces.VCall
	for _, k := range g.keys() {
		out = append(out, g.call(i, "init", k, g.now))
	}
	return out
}

// addHandler adds a handler asking for period (nil: the default period);
// after Start it gets its initial list at once.
func (g *informerGen) addHandler(period *time.Duration) {
	i := len(g.handlers)
	g.handlers = append(g.handlers, informerHandler{name: fmt.Sprintf("h%d", i)})
	s := traces.VStep{Op: "AddHandler", Key: str(g.handlers[i].name)}
	asked := g.check
	if period != nil {
		asked, s.NS = *period, i64d(*period)
	}
	g.m.AddHandler(asked, g.now)
	calls := map[int][]traces.VCall{}
	if g.started {
		calls[i] = g.initialList(i)
	}
	g.step(s, calls)
}

func (g *informerGen) removeHandler(i int) {
	g.handlers[i].removed = true
	g.m.Remove(i)
	g.step(traces.VStep{Op: "RemoveHandler", Key: str(g.handlers[i].name)}, nil)
}

// emit is an event of kind op ("Add", "Update", "Delete") on key: every
// live handler gets it once the informer runs.
func (g *informerGen) emit(op, key string) {
	g.store[key] = op != "Delete"
	call := map[string]string{"Add": "add", "Update": "update", "Delete": "delete"}[op]
	calls := map[int][]traces.VCall{}
	if g.started {
		for _, i := range g.live() {
			calls[i] = []traces.VCall{g.call(i, call, key, g.now)}
		}
	}
	g.step(traces.VStep{Op: op, Key: str(key)}, calls)
}

// start starts the informer: every live handler gets its initial list,
// and the rounds are scheduled from now.
func (g *informerGen) start() {
	g.started = true
	g.m.Start(g.now)
	calls := map[int][]traces.VCall{}
	for _, i := range g.live() {
		calls[i] = g.initialList(i)
	}
	g.step(traces.VStep{Op: "Start"}, calls)
}

// sleep lets d pass, lengthened as needed so that it does not end on a
// round's instant, and runs the rounds due in it: each due handler gets
// an update for every key in the store, at the round's time.
func (g *informerGen) sleep(d time.Duration) {
	for g.onRound(g.now.Add(d)) {
		d += 100 * time.Millisecond
	}
	to := g.now.Add(d)
	calls := map[int][]traces.VCall{}
	for {
		at, ok := g.m.NextRound()
		if !ok || !at.Before(to) {
			break
		}
		_, due := g.m.Round()
		for _, i := range due {
			for _, k := range g.keys() {
				calls[i] = append(calls[i], g.call(i, "update", k, at))
			}
		}
	}
	g.now = to
	g.step(traces.VStep{Op: "Sleep", NS: i64d(d)}, calls)
}

// onRound reports whether a resync round falls exactly at t.
func (g *informerGen) onRound(t time.Time) bool {
	next, ok := g.m.NextRound()
	if !ok || t.Before(next) {
		return false
	}
	return t.Sub(next)%g.m.CheckPeriod() == 0
}
