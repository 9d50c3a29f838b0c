package resource

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kverify/kverify/props/checkkit"
	"github.com/kverify/kverify/props/modelserver"
	"github.com/kverify/kverify/spec/apiserver"
	"github.com/kverify/kverify/traces"
	"pgregory.net/rapid"
)

func level(s Subject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, cfg checkkit.Config) error {
		cfg.Checks = max(cfg.Checks, Schedules)
		gen := planGen()
		return checkkit.Rapid(t, cfg, func(rt *rapid.T, rec *checkkit.Recorder) {
			if err := Play(t, rec, s, gen.Draw(rt, "plan")); err != nil {
				rec.Errorf(rt, err)
			}
		})
	}
}

// planPrefix starts the want of a trace's first step: the plan as JSON.
const planPrefix = "plan "

// Replay plays the plan saved in a resource/level trace on s again.
func Replay(t *testing.T, s Subject, tr *traces.Trace) error {
	for _, st := range tr.Steps {
		if !strings.HasPrefix(st.Want, planPrefix) {
			continue
		}
		var p Plan
		if err := json.Unmarshal([]byte(strings.TrimPrefix(st.Want, planPrefix)), &p); err != nil {
			return fmt.Errorf("resource: the trace's plan: %w", err)
		}
		return Play(t, checkkit.NewRecorder(nil), s, p)
	}
	return fmt.Errorf("resource: the trace holds no plan")
}

// abort ends a run with its violation.
type abort struct{ v *checkkit.Violation }

// Play runs p on a resource of s in a synctest bubble, recording its steps
// on rec, and returns the first violation (a *checkkit.Violation) or nil.
func Play(t *testing.T, rec *checkkit.Recorder, s Subject, p Plan) (err error) {
	b, _ := json.Marshal(p)
	rec.Step(planPrefix+p.String(), planPrefix+string(b), "")
	defer func() {
		if r := recover(); r != nil {
			if a, ok := r.(abort); ok {
				err = a.v
				return
			}
			err = checkkit.Broke(checkkit.GNoPanic, "%v", r)
		}
	}()
	checkkit.Bubble(t, func() {
		rec.Timed()
		w := &world{rec: rec, snaps: map[int64]map[string]int64{}}
		defer w.cleanup()
		w.play(s, p)
	})
	return nil
}

// seen is what a subscription was given of a key: the event's kind, the
// object's version and its incarnation (the version it was created at).
type seen struct {
	kind    Kind
	rv, inc int64
	uid     string
}

func (s seen) String() string { return fmt.Sprintf("%s@%d", s.kind, s.rv) }

// sub is one subscription and what it was given.
type sub struct {
	id       int
	handling []Handling
	cancel   context.CancelFunc
	closed   chan struct{}
	// cancelled: the run ended the subscription's context; its channel
	// must close, and its view is no longer held to the server's.
	cancelled bool
	// pending counts events handed to the handler and not yet Done; busy
	// the keys among them.
	pending int
	busy    map[string]bool
	syncs   int
	// last is each key's last event; known each key's last Upsert until
	// a Delete of it is handled; acked each key's handled view (its last
	// event handled without error); fails each key's failures so far;
	// upserted the keys given an Upsert so far.
	last     map[string]seen
	known    map[string]seen
	acked    map[string]int64
	fails    map[string]int
	upserted map[string]bool
}

// world is one run.
type world struct {
	rec     *checkkit.Recorder
	srv     *modelserver.Server
	src     *source
	res     Resource
	stopped bool
	plan    Plan

	mu     sync.Mutex
	broken *checkkit.Violation
	subs   []*sub
	log    []string
	snaps  map[int64]map[string]int64
}

// logSize is how many of the last events a violation shows.
const logSize = 40

// maxFails is how many times a key's events may fail in a run; later
// ones are handled without error.
const maxFails = 3

// errHandler is the handler's error for an event the plan fails.
var errHandler = errors.New("kverify: the handler fails (the check's choice)")

// fail ends the run with a violation and the last events.
func (w *world) fail(g, format string, args ...any) {
	w.mu.Lock()
	events := slices.Clone(w.log)
	w.mu.Unlock()
	d := fmt.Sprintf(format, args...)
	if len(events) > 0 {
		d += "\n\tlast events:\n\t\t" + strings.Join(events, "\n\t\t")
	}
	panic(abort{w.rec.Attach(checkkit.Broke(g, "%s", d)).(*checkkit.Violation)})
}

// logf keeps an event for the violation's report (mu held).
func (w *world) logf(format string, args ...any) {
	w.log = append(w.log, time.Now().Format("15:04:05.000")+" "+fmt.Sprintf(format, args...))
	if len(w.log) > logSize {
		w.log = w.log[len(w.log)-logSize:]
	}
}

// note keeps the first violation a subscription saw (mu held).
func (w *world) note(g, format string, args ...any) {
	if w.broken == nil {
		w.broken = &checkkit.Violation{Guarantee: g, Detail: fmt.Sprintf(format, args...)}
		w.logf("VIOLATION: %s", w.broken.Detail)
	}
}

// check reports a violation a subscription saw since the last look.
func (w *world) check() {
	w.mu.Lock()
	b := w.broken
	w.mu.Unlock()
	if b != nil {
		w.fail(b.Guarantee, "%s", b.Detail)
	}
}

// state is the server's state at rv, key to version (mu held).
func (w *world) state(rv int64) map[string]int64 {
	if s, ok := w.snaps[rv]; ok {
		return s
	}
	var objs []apiserver.Object
	var err error
	w.srv.Model(func(m *apiserver.Server) { objs, err = m.Snapshot(rv) })
	if err != nil {
		return nil
	}
	s := make(map[string]int64, len(objs))
	for _, o := range objs {
		s[o.Key] = o.RV
	}
	w.snaps[rv] = s
	return s
}

func (w *world) now() int64 {
	rv, _ := w.srv.Current()
	return rv
}

func (w *world) created(k string, rv int64) int64 {
	var c int64
	w.srv.Model(func(m *apiserver.Server) { c = m.Created(k, rv) })
	return c
}

func (w *world) uid(k string, rv int64) string {
	var u string
	w.srv.Model(func(m *apiserver.Server) { u = string(uidOf(m, k, rv)) })
	return u
}

func (w *world) play(s Subject, p Plan) {
	w.plan = p
	w.srv = modelserver.NewServer(apiserver.Config{NoWatchList: p.NoServerWatchList}, p.Faults)
	for i := range p.Objects {
		if err := w.srv.Create(key(i)); err != nil {
			w.fail(GConstruction, "model server: create %s: %v", key(i), err)
		}
	}
	w.src = &source{srv: w.srv}
	var lw ListerWatcher = w.src
	if !p.WatchList {
		lw = noWatchList{w.src}
	}
	res, err := s.New(Setup{Source: lw})
	if err != nil || res == nil {
		w.fail(GConstruction, "New: %v (resource %v)", err, res)
	}
	w.res = res
	if p.Early {
		w.subscribe()
	}
	if err := res.Start(); err != nil {
		w.fail(GConstruction, "Start: %v", err)
	}
	if !p.Early {
		w.subscribe()
	}
	synctest.Wait()
	w.check()
	for _, st := range p.Steps {
		w.rec.Step(st.String(), "", "")
		w.apply(st)
		if !st.Burst {
			synctest.Wait()
			w.check()
		}
	}
	w.settle()
	w.stop()
}

// apply makes one step.
func (w *world) apply(st Step) {
	k := key(st.Key)
	_, objs := w.srv.Current()
	present := slices.ContainsFunc(objs, func(o apiserver.Object) bool { return o.Key == k })
	var err error
	switch st.Kind {
	case Write:
		if present {
			err = w.srv.Update(k)
		} else {
			err = w.srv.Create(k)
		}
	case Remove:
		if present {
			err = w.srv.Delete(k)
		}
	case Recreate:
		if present {
			err = w.srv.Delete(k)
		}
		if err == nil {
			err = w.srv.Create(k)
		}
	case Bookmark:
		w.srv.Bookmark()
	case Restart:
		w.src.restart()
	case Advance:
		time.Sleep(st.Wait)
	case Subscribe:
		w.subscribe()
	case Unsubscribe:
		w.mu.Lock()
		if len(w.subs) > 0 {
			sb := w.subs[st.Key%len(w.subs)]
			sb.cancelled = true
			sb.cancel()
			w.logf("subscription %d cancelled", sb.id)
		}
		w.mu.Unlock()
	}
	if err != nil {
		w.fail(GConstruction, "model server: %s: %v", st, err)
	}
}

// subscribe makes the next subscription, and a goroutine that hands its
// events to the handler.
func (w *world) subscribe() {
	ctx, cancel := context.WithCancel(context.Background())
	w.mu.Lock()
	sb := &sub{id: len(w.subs), cancel: cancel, closed: make(chan struct{}), busy: map[string]bool{}, last: map[string]seen{},
		known: map[string]seen{}, acked: map[string]int64{}, fails: map[string]int{}, upserted: map[string]bool{}}
	if sb.id < len(w.plan.Handlers) {
		sb.handling = slices.Clone(w.plan.Handlers[sb.id])
	}
	w.subs = append(w.subs, sb)
	w.logf("subscription %d", sb.id)
	w.mu.Unlock()
	ch := w.res.Subscribe(ctx)
	go func() {
		defer close(sb.closed)
		for ev := range ch {
			w.receive(sb, ev)
		}
	}()
}

// receive judges one event as it comes and hands it to the handler.
func (w *world) receive(sb *sub, ev Event) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if ev.Done == nil {
		w.note(GSerial, "subscription %d: a %s event of %q without Done", sb.id, ev.Kind, ev.Key)
		return
	}
	h := Handling{}
	if ev.Kind != Sync && len(sb.handling) > 0 {
		h, sb.handling = sb.handling[0], sb.handling[1:]
	}
	switch ev.Kind {
	case Sync:
		w.logf("sub %d: Sync", sb.id)
		w.judgeSync(sb)
		sb.syncs++
	case Upsert, Delete:
		if sb.fails[ev.Key] >= maxFails {
			h.Fail = false
		}
		if h.Fail {
			sb.fails[ev.Key]++
		}
		w.judge(sb, ev)
		sb.busy[ev.Key] = true
	default:
		w.note(GSerial, "subscription %d: an event of unknown kind %d", sb.id, ev.Kind)
	}
	sb.pending++
	go w.handle(sb, ev, h)
}

// handle is the handler: it waits, then marks the event Done.
func (w *world) handle(sb *sub, ev Event, h Handling) {
	if h.Delay > 0 {
		time.Sleep(h.Delay)
	}
	w.mu.Lock()
	sb.pending--
	if ev.Kind != Sync {
		delete(sb.busy, ev.Key)
		rv, _ := strconv.ParseInt(objRV(ev), 10, 64)
		switch {
		case h.Fail:
		case ev.Kind == Upsert:
			sb.acked[ev.Key] = rv
		case ev.Kind == Delete:
			delete(sb.acked, ev.Key)
			delete(sb.known, ev.Key)
		}
	}
	result := "ok"
	if h.Fail {
		result = "failed"
	}
	w.logf("sub %d: %s %s@%s done (%s)", sb.id, ev.Kind, ev.Key, objRV(ev), result)
	w.mu.Unlock()
	var err error
	if h.Fail {
		err = errHandler
	}
	ev.Done(err)
}

func objRV(ev Event) string {
	if ev.Object == nil {
		return "?"
	}
	return ev.Object.ResourceVersion
}

// judge holds an Upsert or Delete to the guarantees as it is handed out
// (mu held).
func (w *world) judge(sb *sub, ev Event) {
	k := ev.Key
	w.logf("sub %d: %s %s@%s", sb.id, ev.Kind, k, objRV(ev))
	g := GUpsert
	if ev.Kind == Delete {
		g = GDelete
	}
	if sb.busy[k] {
		w.note(GSerial, "subscription %d was handed %s %s@%s while its last event of the key was not Done", sb.id, ev.Kind, k, objRV(ev))
		return
	}
	if ev.Object == nil || metaKey(ev.Object) != k {
		w.note(g, "subscription %d was handed %s of %q carrying %v", sb.id, ev.Kind, k, ev.Object)
		return
	}
	rv, err := strconv.ParseInt(ev.Object.ResourceVersion, 10, 64)
	now := w.now()
	if err != nil || rv < 1 || rv > now {
		w.note(g, "subscription %d was handed %s %s@%s: not a version the server issued (it is at %d)", sb.id, ev.Kind, k, ev.Object.ResourceVersion, now)
		return
	}
	inc := w.created(k, rv)
	last, hasLast := sb.last[k]
	if ev.Kind == Upsert {
		if w.state(rv)[k] != rv {
			w.note(GUpsert, "subscription %d was handed Upsert %s@%d: the server never had this state", sb.id, k, rv)
			return
		}
		if want := w.uid(k, rv); string(ev.Object.UID) != want {
			w.note(GUpsert, "subscription %d was handed Upsert %s@%d with UID %q, not the server's %q", sb.id, k, rv, ev.Object.UID, want)
			return
		}
		switch {
		case hasLast && last.kind == Upsert && rv < last.rv:
			w.note(GUpsert, "subscription %d was handed Upsert %s@%d after Upsert %s@%d: back in time", sb.id, k, rv, k, last.rv)
			return
		case hasLast && last.kind == Delete && inc <= last.inc:
			w.note(GUpsert, "subscription %d was handed Upsert %s@%d after the Delete of that object (%s@%d, created at %d): a deleted object resurrected", sb.id, k, rv, k, last.rv, last.inc)
			return
		}
		s := seen{kind: Upsert, rv: rv, inc: inc, uid: string(ev.Object.UID)}
		sb.last[k], sb.known[k], sb.upserted[k] = s, s, true
		return
	}
	known, ok := sb.known[k]
	if !ok {
		w.note(GDelete, "subscription %d was handed Delete %s@%d without an Upsert of %s since its last handled Delete (last event: %v)", sb.id, k, rv, k, last)
		return
	}
	if string(ev.Object.UID) != known.uid {
		w.note(GDelete, "subscription %d was handed Delete %s@%d of UID %q, but was given the object of UID %q (%s@%d)", sb.id, k, rv, ev.Object.UID, known.uid, k, known.rv)
		return
	}
	if cur, present := w.state(now)[k]; present && w.created(k, cur) == known.inc {
		w.note(GDelete, "subscription %d was handed Delete %s@%d, but the server still has that object (%s@%d, created at %d)", sb.id, k, rv, k, cur, known.inc)
		return
	}
	sb.last[k] = seen{kind: Delete, rv: rv, inc: known.inc, uid: known.uid}
}

// judgeSync holds a Sync to the guarantees (mu held): the first of its
// subscription, after a complete sync was served, and after an Upsert of
// every object that stood at every version from the first sync served to
// now (whichever sync the informer took, those objects were in its store
// when it synced, and still are).
func (w *world) judgeSync(sb *sub) {
	if sb.syncs > 0 {
		w.note(GSync, "subscription %d was handed a second Sync", sb.id)
		return
	}
	lo, ok := w.src.firstSync()
	if !ok {
		w.note(GSync, "subscription %d was handed Sync before the server served any complete sync", sb.id)
		return
	}
	now := w.now()
	stood := maps.Clone(w.state(lo))
	for v := lo + 1; v <= now && len(stood) > 0; v++ {
		st := w.state(v)
		for k := range stood {
			if _, ok := st[k]; !ok {
				delete(stood, k)
			}
		}
	}
	var missing []string
	for _, k := range slices.Sorted(maps.Keys(stood)) {
		if !sb.upserted[k] {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		w.note(GSync, "subscription %d was handed Sync before an Upsert of %s, which the server held at every version from the first sync it served (%d) to now (%d)", sb.id, strings.Join(missing, ", "), lo, now)
	}
}

// quiet returns "" when every subscription has its Sync, no event
// outstanding, and its last events and its handled view equal the server's
// state; else what differs.
func (w *world) quiet() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := w.state(w.now())
	var out []string
	for _, sb := range w.subs {
		if sb.cancelled {
			if sb.pending > 0 || !isClosed(sb.closed) {
				out = append(out, fmt.Sprintf("subscription %d: cancelled, %d events not Done, channel closed %v", sb.id, sb.pending, isClosed(sb.closed)))
			}
			continue
		}
		given := map[string]int64{}
		for k, s := range sb.last {
			if s.kind == Upsert {
				given[k] = s.rv
			}
		}
		var parts []string
		if sb.syncs == 0 {
			parts = append(parts, "no Sync")
		}
		if sb.pending > 0 {
			parts = append(parts, fmt.Sprintf("%d events not Done", sb.pending))
		}
		if d := diff(given, now); d != "" {
			parts = append(parts, "last events: "+d)
		}
		if d := diff(sb.acked, now); d != "" {
			parts = append(parts, "handled: "+d)
		}
		if len(parts) > 0 {
			out = append(out, fmt.Sprintf("subscription %d: %s", sb.id, strings.Join(parts, "; ")))
		}
	}
	if len(out) == 0 {
		return ""
	}
	return fmt.Sprintf("server at %d %s; %s", w.now(), show(now), strings.Join(out, "; "))
}

// settle lets time pass, with bookmarks, until the run is quiet, for up
// to two hours (past the informer's backoffs, watch timeouts and stalled
// streams, and the subject's retry delays), then lets 11 minutes more
// pass (past a watch timeout) and waits for it to be quiet again: no late
// event may have changed a view.
func (w *world) settle() {
	w.rec.Step("settle", "", "")
	for r := 0; ; r++ {
		w.srv.Bookmark()
		time.Sleep(61 * time.Second)
		synctest.Wait()
		w.check()
		d := w.quiet()
		if d == "" {
			break
		}
		if r == 120 {
			w.mu.Lock()
			for _, sb := range w.subs {
				if sb.cancelled && sb.pending == 0 && !isClosed(sb.closed) {
					w.mu.Unlock()
					w.fail(GStop, "subscription %d's channel is still open two hours after its context ended, with every event Done", sb.id)
				}
			}
			w.mu.Unlock()
			w.fail(GConverge, "two hours after the last step: %s", d)
		}
	}
	// A level-triggered resource may hand out a key's state again (a
	// relist after a watch timeout queues every key): the events judged
	// meanwhile must not change any view (judge holds them to the
	// server's unchanged history), and the run must be quiet again.
	w.srv.Bookmark()
	time.Sleep(11 * time.Minute)
	for r := 0; ; r++ {
		synctest.Wait()
		w.check()
		d := w.quiet()
		if d == "" {
			return
		}
		if r == 10 {
			w.fail(GConverge, "quiet after the last step, then not quiet again 11 to 21 minutes later: %s", d)
		}
		time.Sleep(61 * time.Second)
	}
}

// stop stops the resource, once every event is Done: Stop must return and
// close every subscription.
func (w *world) stop() {
	w.rec.Step("stop", "", "")
	var err error
	w.stopped = true
	if !checkkit.ReturnsWithin(10*time.Minute, func() { err = w.res.Stop() }) {
		w.fail(GStop, "Stop did not return within 10 minutes, with every event Done; the bubble's goroutines:\n%s", checkkit.BubbleStacks())
	}
	if err != nil {
		w.fail(GStop, "Stop: %v", err)
	}
	synctest.Wait()
	w.check()
	for _, sb := range w.subs {
		select {
		case <-sb.closed:
		default:
			w.fail(GStop, "subscription %d's channel is still open after Stop returned", sb.id)
		}
	}
}

// cleanup, at the end of every run (a violation included), cancels the
// subscriptions, stops the resource if the run did not, closes the server
// and lets time pass until the handlers and subscriptions are done, so
// that the bubble ends.
func (w *world) cleanup() {
	w.mu.Lock()
	subs := slices.Clone(w.subs)
	w.mu.Unlock()
	for _, sb := range subs {
		sb.cancel()
	}
	if w.res != nil && !w.stopped {
		w.stopped = true
		checkkit.ReturnsWithin(10*time.Minute, func() { _ = w.res.Stop() })
	}
	if w.srv != nil {
		w.srv.Close()
	}
	for i := 0; i < 100; i++ {
		synctest.Wait()
		w.mu.Lock()
		busy := 0
		for _, sb := range w.subs {
			busy += sb.pending
		}
		w.mu.Unlock()
		if busy == 0 && !slices.ContainsFunc(subs, func(sb *sub) bool { return !isClosed(sb.closed) }) {
			return
		}
		time.Sleep(time.Minute)
	}
}

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// show is a state in key order: {default/o000@3 default/o001@5}.
func show(m map[string]int64) string {
	parts := make([]string, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s@%d", k, m[k]))
	}
	return "{" + strings.Join(parts, " ") + "}"
}

// diff says how got differs from want: "missing [k@rv]; stale [k@rv,
// not @rv]; ghost [k@rv]", the parts that apply, or "".
func diff(got, want map[string]int64) string {
	var missing, stale, ghost []string
	for _, k := range slices.Sorted(maps.Keys(want)) {
		switch g, ok := got[k]; {
		case !ok:
			missing = append(missing, fmt.Sprintf("%s@%d", k, want[k]))
		case g != want[k]:
			stale = append(stale, fmt.Sprintf("%s@%d, not @%d", k, g, want[k]))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[k]; !ok {
			ghost = append(ghost, fmt.Sprintf("%s@%d", k, got[k]))
		}
	}
	var parts []string
	for _, p := range []struct {
		name string
		l    []string
	}{{"missing", missing}, {"stale", stale}, {"ghost", ghost}} {
		if len(p.l) > 0 {
			parts = append(parts, p.name+" ["+strings.Join(p.l, " ")+"]")
		}
	}
	return strings.Join(parts, "; ")
}
