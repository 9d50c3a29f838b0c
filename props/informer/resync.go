package informer

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kverify/kverify/props/checkkit"
	sinf "github.com/kverify/kverify/spec/informer"
)

// The resync checks drive a ResyncFanOut through fixed scenarios on the
// bubble's fake clock and compare every handler call, and the fake time it
// started at, with the spec model's schedule (spec/informer.Resync): a
// round delivers OnUpdate(k, k) for every key in the store to exactly the
// handlers due, at the round's exact time; everything else is the initial
// list and the emitted events.

type rsOp uint8

const (
	rsAdd        rsOp = iota // AddHandlerWithResync(period)
	rsAddDefault             // AddHandler: the informer's default period
	rsStart
	rsEmit
	rsRemove
)

// rsStep is one step of a resync scenario, at a time since its beginning.
type rsStep struct {
	at     time.Duration
	op     rsOp
	period time.Duration // rsAdd
	kind   Kind          // rsEmit
	key    string        // rsEmit
	h      int           // rsRemove: the handler's index, in order of adding
}

func (s rsStep) String() string {
	switch s.op {
	case rsAdd:
		return fmt.Sprintf("AddHandlerWithResync(%v)", s.period)
	case rsAddDefault:
		return "AddHandler"
	case rsStart:
		return "Start"
	case rsEmit:
		return "Emit " + eventOf(s.kind, s.key)
	case rsRemove:
		return fmt.Sprintf("RemoveHandler(h%d)", s.h)
	}
	return fmt.Sprintf("op(%d)", s.op)
}

// rsScenario is a resync scenario: an informer made with a check period,
// steps at fixed times, observed until end. No step may fall on a round.
type rsScenario struct {
	name  string
	check time.Duration
	steps []rsStep
	end   time.Duration
}

// Scenario steps, by time.
func rsAddH(at, period time.Duration) rsStep { return rsStep{at: at, op: rsAdd, period: period} }
func rsAddDefaultH(at time.Duration) rsStep  { return rsStep{at: at, op: rsAddDefault} }
func rsStartAt(at time.Duration) rsStep      { return rsStep{at: at, op: rsStart} }
func rsEmitAt(at time.Duration, kind Kind, key string) rsStep {
	return rsStep{at: at, op: rsEmit, kind: kind, key: key}
}
func rsRemoveH(at time.Duration, h int) rsStep { return rsStep{at: at, op: rsRemove, h: h} }

const ms = time.Millisecond

// scheduleScenarios pin the schedule: which rounds, which handlers are due.
var scheduleScenarios = []rsScenario{
	{name: "due exactly at the next resync time, rescheduled one period after the round", check: time.Second,
		steps: []rsStep{
			rsEmitAt(0, Add, "a"), rsEmitAt(0, Add, "b"),
			rsAddH(0, time.Second), rsAddH(0, 2*time.Second), rsAddH(0, 1500*ms), rsAddH(0, 0), rsAddDefaultH(0),
			rsStartAt(0),
			rsEmitAt(2500*ms, Add, "c"), rsEmitAt(4500*ms, Delete, "a"),
		},
		end: 6500 * ms},
	{name: "a period under 1s becomes 1s; under the check period before Start it lowers the check period; the default period stays the informer's", check: 4 * time.Second,
		steps: []rsStep{
			rsEmitAt(0, Add, "a"),
			rsAddH(0, 5*time.Second), rsAddH(0, 0),
			rsAddH(250*ms, 300*ms), rsAddDefaultH(250 * ms),
			rsStartAt(500 * ms),
			rsEmitAt(3750*ms, Add, "b"),
		},
		end: 7250 * ms},
	{name: "after Start a period under the check period is raised to it", check: 2 * time.Second,
		steps: []rsStep{
			rsEmitAt(0, Add, "a"), rsAddH(0, 2*time.Second), rsStartAt(0),
			rsAddH(500*ms, time.Second), rsAddH(1500*ms, 500*ms),
			rsEmitAt(3*time.Second, Add, "b"),
		},
		end: 8500 * ms},
	{name: "an informer with check period 0 never resyncs", check: 0,
		steps: []rsStep{
			rsEmitAt(0, Add, "a"), rsEmitAt(0, Add, "b"),
			rsAddH(0, time.Second), rsAddH(0, 300*ms), rsAddDefaultH(0),
			rsStartAt(0),
			rsAddH(500*ms, 2*time.Second), rsEmitAt(1500*ms, Add, "c"),
		},
		end: 10 * time.Second},
}

// syncOnlyScenarios pin who takes sync notifications: only the handlers
// due; ordinary events reach every handler; late handlers join by their
// own schedule; removed handlers take nothing.
var syncOnlyScenarios = []rsScenario{
	{name: "sync notifications reach only the handlers due, ordinary ones every handler", check: time.Second,
		steps: []rsStep{
			rsEmitAt(0, Add, "a"), rsEmitAt(0, Add, "b"),
			rsAddH(0, time.Second), rsAddH(0, 3*time.Second), rsAddH(0, 0),
			rsStartAt(0),
			rsEmitAt(500*ms, Update, "a"), rsEmitAt(1500*ms, Add, "c"),
			rsAddH(2250*ms, time.Second), rsAddH(2250*ms, 0),
			rsEmitAt(2500*ms, Delete, "b"),
			rsRemoveH(3500*ms, 0),
			rsEmitAt(3750*ms, Update, "c"),
		},
		end: 5500 * ms},
}

func resyncSchedule(s Subject) func(*testing.T, checkkit.Config) error {
	return resyncCheck(s, scheduleScenarios)
}

func resyncSyncOnly(s Subject) func(*testing.T, checkkit.Config) error {
	scenarios := resyncCheck(s, syncOnlyScenarios)
	return func(t *testing.T, cfg checkkit.Config) error {
		if err := scenarios(t, cfg); err != nil {
			return err
		}
		cfg.Progress.Op("scenario: a resync round behind a backlog")
		return checkkit.InBubble(t, func() error { return resyncBehindBacklog(s) })
	}
}

// resyncBehindBacklog: a handler due for a resync is blocked in a call
// while a delete and an add are emitted; the round comes; once released,
// the handler gets the delete and the add first, then the round (a
// listener's notifications come in the order they were handed to it, so a
// resync never overtakes an older event: in ours, the round waits in the
// listener's own buffer while the events wait in the processor's log).
func resyncBehindBacklog(s Subject) error {
	f := s.NewResync(time.Second)
	d := &driver{}
	defer d.call(f.Stop)
	p := newProbe("h")
	defer p.unblock()
	if !d.call(func() {
		for _, k := range []string{"k0", "k1", "k2"} {
			f.Emit(Add, k)
		}
	}) {
		return checkkit.Broke(GNonBlocking, "Emit did not return")
	}
	reg, err := f.AddHandlerWithResync(p, time.Second)
	if err != nil {
		return fmt.Errorf("AddHandlerWithResync: %w", err)
	}
	if !d.call(f.Start) {
		return checkkit.Broke(GShutdown, "Start did not return")
	}
	synctest.Wait()
	p.block()
	if !d.call(func() {
		f.Emit(Update, "k2") // the call the handler blocks in
		f.Emit(Delete, "k1")
		f.Emit(Add, "k3")
	}) {
		return checkkit.Broke(GNonBlocking, "Emit did not return")
	}
	synctest.Wait()
	mark := len(p.received())
	time.Sleep(1500 * time.Millisecond) // the round at 1s
	synctest.Wait()
	if b, ok := reg.(Backlog); ok {
		if n := b.Pending(); n != 5 {
			return checkkit.Broke(GLookahead, "a handler blocked in a call while a delete and an add were emitted and a resync round of 3 keys came has Pending() = %d, want 5", n)
		}
	}
	p.unblock()
	synctest.Wait()
	got := p.receivedFrom(mark)
	want := []string{deleteEv("k1"), addEv("k3")}
	round := []string{updateEv("k0"), updateEv("k2"), updateEv("k3")}
	if len(got) != len(want)+len(round) || !slices.Equal(got[:2], want) {
		return checkkit.Broke(GResync, "a handler blocked in a call while a delete and an add were emitted, then due for a resync round, received %v once released, want %v, then the round %v in any order", got, want, round)
	}
	rest := slices.Sorted(slices.Values(got[2:]))
	if !slices.Equal(rest, round) {
		return checkkit.Broke(GResync, "after the backlog, the resync round delivered %v, want %v in any order", got[2:], round)
	}
	return nil
}

func resyncCheck(s Subject, scs []rsScenario) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, cfg checkkit.Config) error {
		for _, sc := range scs {
			cfg.Progress.Op("scenario: " + sc.name)
			if err := checkkit.InBubble(t, func() error { return runResync(s, sc) }); err != nil {
				return fmt.Errorf("%s: %w", sc.name, err)
			}
		}
		return nil
	}
}

// segment is what a handler must receive at one fake instant: an initial
// list or a resync round (in any order), or one event.
type segment struct {
	at   time.Duration // since the scenario began
	evs  []string
	set  bool
	what string
}

type rsHandler struct {
	p       *probe
	reg     Registration
	desc    string
	started bool // has its initial list (added after Start, or Start came)
	removed bool
	segs    []segment
}

// rsRun is one scenario's subject, model and expectations.
type rsRun struct {
	sc      rsScenario
	f       ResyncFanOut
	m       *sinf.Resync
	d       *driver
	t0      time.Time
	store   map[string]bool
	hs      []*rsHandler
	started bool
}

func (r *rsRun) keys(prefix string) []string {
	var ks []string
	for k, ok := range r.store {
		if ok {
			ks = append(ks, prefix+k)
		}
	}
	slices.Sort(ks)
	return ks
}

// expect appends a segment to every handler in hs (skipping empty ones).
func (r *rsRun) expect(h *rsHandler, seg segment) {
	if len(seg.evs) > 0 {
		h.segs = append(h.segs, seg)
	}
}

// advance runs the model's rounds before to, sleeps until to and lets the
// subject settle. A round at exactly to is a bug in the scenario.
func (r *rsRun) advance(to time.Duration) error {
	for {
		at, ok := r.m.NextRound()
		if !ok || at.Sub(r.t0) > to {
			break
		}
		if at.Sub(r.t0) == to {
			return fmt.Errorf("bad scenario: a step at %v falls on a resync round", to)
		}
		_, due := r.m.Round()
		for _, i := range due {
			r.expect(r.hs[i], segment{at: at.Sub(r.t0), evs: r.keys("update:"), set: true, what: "resync round"})
		}
	}
	if d := time.Until(r.t0.Add(to)); d > 0 {
		time.Sleep(d)
	}
	synctest.Wait()
	return nil
}

func runResync(s Subject, sc rsScenario) error {
	r := &rsRun{sc: sc, f: s.NewResync(sc.check), m: sinf.NewResync(sc.check), d: &driver{}, t0: time.Now(), store: map[string]bool{}}
	defer r.d.call(r.f.Stop)
	for _, st := range sc.steps {
		if err := r.advance(st.at); err != nil {
			return err
		}
		if err := r.apply(st); err != nil {
			return err
		}
		synctest.Wait()
	}
	if err := r.advance(sc.end); err != nil {
		return err
	}
	for _, h := range r.hs {
		if h.p.overlap.Load() {
			return checkkit.Broke(GSerial, "%s: two handler calls overlapped", h.desc)
		}
		got, at := h.p.receivedAt()
		if msg := matchSegments(got, at, r.t0, h.segs); msg != "" {
			return checkkit.Broke(GResync, "%s: %s\n  steps: %s", h.desc, msg, r.describe())
		}
	}
	if !r.d.call(r.f.Stop) {
		return checkkit.Broke(GShutdown, "Stop did not return")
	}
	return nil
}

func (r *rsRun) describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "check period %v;", r.sc.check)
	for _, st := range r.sc.steps {
		fmt.Fprintf(&b, " +%v %v;", st.at, st)
	}
	fmt.Fprintf(&b, " observed until +%v", r.sc.end)
	return b.String()
}

func (r *rsRun) apply(st rsStep) error {
	now := time.Now()
	since := now.Sub(r.t0)
	switch st.op {
	case rsAdd, rsAddDefault:
		i := len(r.hs)
		h := &rsHandler{p: newProbe(fmt.Sprintf("h%d", i))}
		var err error
		var period time.Duration
		if st.op == rsAdd {
			period = st.period
			h.desc = fmt.Sprintf("h%d (resync every %v", i, period)
			if !r.d.call(func() { h.reg, err = r.f.AddHandlerWithResync(h.p, period) }) {
				return checkkit.Broke(GNonBlocking, "AddHandlerWithResync did not return")
			}
		} else {
			period = r.sc.check // the informer's default handler period
			h.desc = fmt.Sprintf("h%d (default resync period %v", i, period)
			if !r.d.call(func() { h.reg, err = r.f.AddHandler(h.p) }) {
				return checkkit.Broke(GNonBlocking, "AddHandler did not return")
			}
		}
		if err != nil {
			return fmt.Errorf("adding h%d: %w", i, err)
		}
		when := "before Start"
		if r.started {
			when = "after Start"
		}
		h.desc += fmt.Sprintf(", added at +%v %s)", since, when)
		r.m.AddHandler(period, now)
		if r.started {
			h.started = true
			r.expect(h, segment{at: since, evs: r.keys("init:"), set: true, what: "initial list"})
		}
		r.hs = append(r.hs, h)
	case rsStart:
		if !r.d.call(r.f.Start) {
			return checkkit.Broke(GNonBlocking, "Start did not return")
		}
		r.started = true
		r.m.Start(now)
		for _, h := range r.hs {
			if !h.removed {
				h.started = true
				r.expect(h, segment{at: since, evs: r.keys("init:"), set: true, what: "initial list"})
			}
		}
	case rsEmit:
		if !r.d.call(func() { r.f.Emit(st.kind, st.key) }) {
			return checkkit.Broke(GNonBlocking, "Emit did not return")
		}
		r.store[st.key] = st.kind != Delete
		for _, h := range r.hs {
			if h.started && !h.removed {
				r.expect(h, segment{at: since, evs: []string{eventOf(st.kind, st.key)}, what: "event"})
			}
		}
	case rsRemove:
		h := r.hs[st.h]
		var err error
		if !r.d.call(func() { err = r.f.RemoveHandler(h.reg) }) {
			return checkkit.Broke(GNonBlocking, "RemoveHandler did not return")
		}
		if err != nil {
			return fmt.Errorf("removing h%d: %w", st.h, err)
		}
		h.removed = true
		r.m.Remove(st.h)
	}
	return nil
}

// matchSegments checks a handler's calls, and the fake time each started,
// against its expected segments. It returns "" or what is wrong.
func matchSegments(got []string, at []time.Time, t0 time.Time, segs []segment) string {
	show := func(from, to int) string {
		var parts []string
		for i := from; i < to && i < len(got); i++ {
			parts = append(parts, fmt.Sprintf("%s@+%v", got[i], at[i].Sub(t0)))
		}
		return "[" + strings.Join(parts, " ") + "]"
	}
	i := 0
	for _, seg := range segs {
		n := len(seg.evs)
		if i+n > len(got) {
			return fmt.Sprintf("missing the %s at +%v %v: received only %s from there (all calls: %s)", seg.what, seg.at, seg.evs, show(i, len(got)), show(0, len(got)))
		}
		part := got[i : i+n]
		ok := slices.Equal(part, seg.evs)
		if seg.set {
			sorted := slices.Sorted(slices.Values(part))
			ok = slices.Equal(sorted, seg.evs)
		}
		for j := i; ok && j < i+n; j++ {
			ok = at[j].Sub(t0) == seg.at
		}
		if !ok {
			return fmt.Sprintf("calls %d-%d are %s, want the %s %v, all at +%v (all calls: %s)", i, i+n-1, show(i, i+n), seg.what, seg.evs, seg.at, show(0, len(got)))
		}
		i += n
	}
	if i < len(got) {
		return fmt.Sprintf("unexpected calls %s after everything expected (all calls: %s)", show(i, len(got)), show(0, len(got)))
	}
	return ""
}
