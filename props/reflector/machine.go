package reflector

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"runtime"
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
	"pgregory.net/rapid"
)

// world is one run of a reflector against the model server, inside a
// synctest bubble.
type world struct {
	t          *rapid.T // nil in fixed scenarios
	rec        *checkkit.Recorder
	failed     bool
	srv        *modelserver.Server
	store      *Store
	r          Reflector
	cancel     context.CancelFunc
	done       chan struct{}
	published  int64 // the highest numeric version published so far
	exactStops bool  // stop requires exactly one Stop per watch
	clock      *Clock
	// lenientCancel lets fake time pass until Run returns instead of
	// failing: the machine leaves prompt cancellation to reflector/cancel,
	// whose scenarios reach every wait deterministically.
	lenientCancel bool
	errMu         sync.Mutex
	errs          []string
	// caps are the subject's declared capabilities: the rules its requests
	// and its store calls are judged by.
	caps Capabilities
}

// fail records the violation and ends the run: rapid's failure (which
// shrinks) or, in a fixed scenario, a panic the scenario runner recovers.
func (w *world) fail(guarantee, format string, args ...any) {
	w.failed = true
	if w.t != nil {
		w.rec.Fail(w.t, guarantee, format, args...)
	}
	checkkit.AbortScenario(w.rec.Attach(checkkit.Broke(guarantee, format, args...)))
}

// start builds the subject's reflector on srv and runs it; each prepare
// is called with the world before Run starts.
func start(t *rapid.T, rec *checkkit.Recorder, s Subject, srv *modelserver.Server, setup Setup, prepare ...func(*world)) *world {
	if f := s.Capabilities.lacking(setup); f != "" {
		panic(fmt.Sprintf("props/reflector: a check built a setup with %s for a subject that declares %s (a bug in the check, not the subject)", f, s.Capabilities))
	}
	w := &world{t: t, rec: rec, srv: srv, store: NewStore(), done: make(chan struct{}), caps: s.Capabilities}
	setup.Server, setup.Store, setup.Clock = srv, w.store, &Clock{}
	w.clock = setup.Clock
	if setup.Rand == nil {
		var seed uint64
		if t != nil {
			seed = rapid.Uint64().Draw(t, "seed")
		}
		setup.Rand = lockedRand(seed)
	}
	setup.OnError = func(err error) {
		w.errMu.Lock()
		defer w.errMu.Unlock()
		w.errs = append(w.errs, err.Error())
	}
	r, err := s.New(setup)
	if err != nil {
		w.fail(GConstruction, "New(%+v): %v", setup, err)
	}
	w.r = r
	srv.Expect(modelserver.Expectations{LastSync: r.LastSyncResourceVersion, WatchList: setup.WatchList, PageSize: setup.PageSize,
		NoWatchList: s.Capabilities.NoWatchList, NoPaging: s.Capabilities.NoPaging})
	srv.ExpectRelist(w.store.failures, setup.MaxInternalErrorRetryDuration > 0)
	for _, p := range prepare {
		p(w)
	}
	ctx, cancel := context.WithCancel(context.Background())
	w.cancel = cancel
	go func() {
		defer close(w.done)
		r.Run(ctx)
	}()
	return w
}

// lockedRand is a seeded source of numbers in [0, 1), safe for concurrent
// use.
func lockedRand(seed uint64) func() float64 {
	var mu sync.Mutex
	r := rand.New(rand.NewPCG(seed, 0x6b766572))
	return func() float64 {
		mu.Lock()
		defer mu.Unlock()
		return r.Float64()
	}
}

// stop cancels the reflector and checks that Run returns at once (no fake
// time passes) and that every watch was stopped exactly once. It is safe to
// call twice, and after a failure (deferred) it only cleans up.
func (w *world) stop() {
	if w.cancel == nil {
		return
	}
	returned, stuck := cancelRun(&w.cancel, w.done)
	w.srv.Close()
	if w.failed {
		return
	}
	if !returned && !w.lenientCancel {
		w.fail(GCancel, "Run did not return after its context was cancelled: it waits for time to pass (a backoff or a timer) or for a stream to end; it was at:\n%s", stuck)
	}
	if msg := stops(w.srv, w.exactStops); msg != "" {
		w.fail(GStops, "%s", msg)
	}
	if n := w.clock.armed(); n > 0 {
		w.fail(GTimers, "%d timers or tickers made through the reflector's clock are still armed after Run returned", n)
	}
	w.noResync(w.store.State())
}

// noResync fails if a reflector that declares no resync called the
// store's Resync.
func (w *world) noResync(st StoreState) {
	if w.caps.NoResync && st.Resyncs > 0 {
		w.fail(GResync, "the store's Resync was called %d times by a reflector that declares no resync (Capabilities.NoResync)", st.Resyncs)
	}
}

// stacks returns the stacks of the goroutines that run subject code (not
// this package's, the runtime's or the test framework's), shortened, for a
// report of where a subject waits.
func stacks() string {
	// The whole dump, however many goroutines the process holds: one cut
	// at a fixed size lost the reflector's goroutines, and with them the
	// stack a declaration's shape looks for, when earlier checks had left
	// many goroutines in the process.
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "kverify/props/reflector.start") {
			lines := strings.Split(g, "\n")
			out = append(out, strings.Join(lines[:min(len(lines), 9)], "\n"))
		}
	}
	return strings.Join(out, "\n")
}

// cancelRun cancels a Run (and clears *cancel) and reports whether it
// returned with no fake time passing, and if not, where its goroutines
// waited. It then lets fake time pass, up to two hours, until Run returns
// (a subject that waits out a backoff), so that no goroutine outlives the
// bubble.
func cancelRun(cancel *context.CancelFunc, done <-chan struct{}) (returned bool, stuck string) {
	(*cancel)()
	*cancel = nil
	synctest.Wait()
	if closed(done) {
		return true, ""
	}
	stuck = stacks()
	for i := 0; i < 120 && !closed(done); i++ {
		time.Sleep(time.Minute)
		synctest.Wait()
	}
	return false, stuck
}

func closed(done <-chan struct{}) bool {
	select {
	case <-done:
		return true
	default:
		return false
	}
}

// stops checks the server's log: every watch opened was stopped by the
// client, exactly once if exact. Only reflector/stops asks for exactly
// once, so that a subject that stops twice (client-go) is still checked
// for everything else.
func stops(srv *modelserver.Server, exact bool) string {
	calls, _ := srv.Calls()
	stops := map[int]int{}
	var opened []int
	for _, c := range calls {
		switch {
		case c.Kind == apiserver.WatchCall && c.Err == nil:
			opened = append(opened, c.Watch)
		case c.Kind == apiserver.StopCall:
			stops[c.Watch]++
		}
	}
	var bad []string
	for _, id := range opened {
		if stops[id] == 0 || (exact && stops[id] != 1) {
			bad = append(bad, fmt.Sprintf("watch %d stopped %d times", id, stops[id]))
		}
	}
	return strings.Join(bad, "; ")
}

// quiet waits until every goroutine of the bubble is blocked and checks
// the invariants that hold whenever the reflector is idle.
func (w *world) quiet() {
	synctest.Wait()
	if v := w.srv.Violations(); len(v) > 0 {
		w.fail(GRequests, "%s", strings.Join(v, "; "))
	}
	if v := w.srv.RelistViolations(); len(v) > 0 {
		w.fail(GRelist, "%s", strings.Join(v, "; "))
	}
	st := w.store.State()
	w.noResync(st)
	if len(st.Malformed) > 0 {
		w.fail(GMalformed, "the store was given %s", strings.Join(st.Malformed, ", "))
	}
	if n := w.srv.Syncs(); len(st.Replaces) != n {
		w.fail(GReplace, "%d Replace calls (at %v) for %d completed syncs (lists answered in full, end bookmarks delivered)", len(st.Replaces), st.Replaces, n)
	}
	p := w.r.LastSyncResourceVersion()
	if p == "" {
		return
	}
	if st.RV != p {
		w.fail(GPublish, "published %q but the store was last told %q (by Replace or UpdateResourceVersion; notified %v)", p, st.RV, st.Notified)
	}
	if p == "0" {
		return // a list that answered "0": no version known yet
	}
	if st.RV != p {
		w.fail(GPublish, "published %q but the store was last told %q (by Replace or UpdateResourceVersion; notified %v)", p, st.RV, st.Notified)
	}
	n, ok := numeric(p)
	var serverRV int64
	w.srv.Model(func(m *apiserver.Server) { serverRV = m.RV() })
	if !ok || n > serverRV {
		w.fail(GEarned, "published %q, not a version the server issued (server at %d)", p, serverRV)
	}
	if n < w.published {
		w.fail(GEarned, "the published version went back from %d to %d", w.published, n)
	}
	w.published = n
	var objs []apiserver.Object
	w.srv.Model(func(m *apiserver.Server) { objs, _ = m.Snapshot(n) })
	if d := diff(st.Items, objs); d != "" {
		w.fail(GEarned, "published %d but the store is not the server's state at %d: %s", n, n, d)
	}
}

// converge lets time pass, with a bookmark before each stretch, until the
// store holds the server's current state and the reflector published the
// current version; faults are over by then (the schedule is finite).
func (w *world) converge(rounds int) {
	for i := 0; i < rounds; i++ {
		w.srv.Bookmark()
		time.Sleep(61 * time.Second)
		w.quiet()
		rv, objs := w.srv.Current()
		if w.r.LastSyncResourceVersion() == fmt.Sprint(rv) && diff(w.store.State().Items, objs) == "" {
			return
		}
	}
	rv, objs := w.srv.Current()
	w.fail(GConverge, "after the faults and %d rounds of a bookmark and 61s, published %q (server at %d), store vs server: %s; %d requests; errors: %s",
		rounds, w.r.LastSyncResourceVersion(), rv, diff(w.store.State().Items, objs), w.srv.Requests(), w.lastErrs(3))
}

func (w *world) lastErrs(n int) string {
	w.errMu.Lock()
	defer w.errMu.Unlock()
	xs := w.errs
	if len(xs) > n {
		xs = xs[len(xs)-n:]
	}
	return strings.Join(xs, " | ")
}

// opKind is a step of the machine.
type opKind uint8

const (
	opCreate opKind = iota
	opUpdate
	opDelete
	opProgress
	opBookmark
	opCompact
	opAdvance
)

var allOps = []opKind{opCreate, opUpdate, opDelete, opProgress, opBookmark, opCompact, opAdvance}

// step drives the server or the clock one step, returning its notation.
func (w *world) step(keys []string, kinds ...opKind) string {
	if len(kinds) == 0 {
		kinds = allOps
	}
	return w.apply(w.drawOp(len(keys), kinds), keys)
}

// drawOp draws one op of the given kinds over n keys.
func (w *world) drawOp(n int, kinds []opKind) Op {
	op := Op{Kind: rapid.SampledFrom(kinds).Draw(w.t, "op")}
	switch op.Kind {
	case opCreate, opUpdate, opDelete:
		op.Key = rapid.IntRange(0, n-1).Draw(w.t, "key")
	case opAdvance:
		op.Advance = rapid.SampledFrom(advances).Draw(w.t, "advance")
	}
	return op
}

// advances are the stretches of fake time a step lets pass.
var advances = []time.Duration{time.Second, 10 * time.Second, 65 * time.Second, 400 * time.Second}

// Op is one step of a server history: a write to key Key (a create if the
// key is absent, else an update, or a delete for a delete), a progress
// notification, a bookmark, a compaction, or Advance of fake time.
type Op struct {
	Kind    opKind
	Key     int
	Advance time.Duration
}

// apply performs op and returns its notation.
func (w *world) apply(op Op, keys []string) string {
	switch op.Kind {
	case opCreate, opUpdate, opDelete:
		k := keys[op.Key%len(keys)]
		_, objs := w.srv.Current()
		exists := slices.ContainsFunc(objs, func(o apiserver.Object) bool { return o.Key == k })
		switch {
		case !exists:
			must(w, w.srv.Create(k))
			return "create " + k
		case op.Kind == opDelete:
			must(w, w.srv.Delete(k))
			return "delete " + k
		}
		must(w, w.srv.Update(k))
		return "update " + k
	case opProgress:
		w.srv.Progress()
		return "progress"
	case opBookmark:
		w.srv.Bookmark()
		return "bookmark"
	case opCompact:
		w.srv.Compact()
		return "compact"
	}
	time.Sleep(op.Advance)
	return "advance " + op.Advance.String()
}

func must(w *world, err error) {
	if err != nil {
		w.fail(GModelServer, "%v", err)
	}
}

// numeric reports whether rv is a resource version the server issued.
func numeric(rv string) (int64, bool) {
	n, err := strconv.ParseInt(rv, 10, 64)
	return n, err == nil && n > 0
}

// keyPool is the keys the machine writes.
func keyPool(n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("default/o%03d", i)
	}
	return keys
}

// schedules is the least number of random histories and fault schedules
// reflector/machine explores in one round.
const schedules = 1000

// machine runs a random server history against the subject under a random
// fault schedule, checking at every quiescent point that the published
// version is earned, every request has its shape, one Replace per sync,
// nothing malformed stored; then, the faults spent, that it converges; then
// that cancelling stops it at once with every watch stopped exactly once.
func machine(s Subject, malform bool) func(t *testing.T, cfg checkkit.Config) error {
	return func(t *testing.T, cfg checkkit.Config) error {
		if !malform && cfg.Checks < schedules {
			cfg.Checks = schedules
		}
		return checkkit.Rapid(t, cfg, func(rt *rapid.T, rec *checkkit.Recorder) {
			checkkit.Bubble(t, func() { playRandom(rt, rec, s, malform) })
		})
	}
}

// playRandom draws a schedule and a history for s and plays them (the
// body of reflector/machine and reflector/malformed, in a bubble); it
// returns the server, for what it answered.
func playRandom(rt *rapid.T, rec *checkkit.Recorder, s Subject, malform bool) *modelserver.Server {
	// A feature the subject declares absent is not drawn: the schedule
	// lists without it (see Capabilities).
	caps := s.Capabilities
	sc := Schedule{ServerWatchList: !rapid.Bool().Draw(rt, "server-without-watch-list")}
	if !caps.NoWatchList {
		sc.WatchList = rapid.Bool().Draw(rt, "watch-list")
	}
	big := rapid.IntRange(0, 7).Draw(rt, "big") == 0
	sc.Objects = rapid.IntRange(0, 10).Draw(rt, "objects")
	if big {
		sc.Objects = rapid.IntRange(501, 540).Draw(rt, "objects")
	} else if !caps.NoPaging {
		sc.PageSize = rapid.SampledFrom([]int64{0, 0, 0, 1, 3}).Draw(rt, "page-size")
	}
	gen := modelserver.FaultGen()
	if malform {
		gen = modelserver.MalformingFaultGen()
	}
	sc.Faults = rapid.SliceOfN(gen, 0, 8).Draw(rt, "faults")
	sc.Seed = rapid.Uint64().Draw(rt, "seed")
	steps := rapid.IntRange(0, 25).Draw(rt, "steps")
	return play(rt, rec, s, sc, func(w *world, keys []string) (Op, bool) {
		if steps == 0 {
			return Op{}, false
		}
		steps--
		return w.drawOp(len(keys), allOps), true
	})
}

// play runs sc's configuration and faults with the ops next hands out
// (until it says no more), checking the invariants at every quiescent
// point, then convergence, then the stop. The trace's first step holds sc
// without its ops as JSON, and every later step one op in its notation, so
// that Replay rebuilds the schedule. It returns the server.
func play(rt *rapid.T, rec *checkkit.Recorder, s Subject, sc Schedule, next func(w *world, keys []string) (Op, bool)) *modelserver.Server {
	rec.Timed()
	head := sc
	head.Ops = nil
	js, _ := json.Marshal(head)
	rec.Step(head.String(), schedulePrefix+string(js), "")
	srv := modelserver.NewServer(apiserver.Config{NoWatchList: !sc.ServerWatchList}, sc.Faults)
	seed(srv, sc.Objects)
	w := start(rt, rec, s, srv, Setup{WatchList: sc.WatchList, PageSize: sc.PageSize, Rand: lockedRand(sc.Seed)})
	w.lenientCancel = true
	defer w.stop()
	w.quiet()
	keys := keyPool(8)
	for {
		op, ok := next(w, keys)
		if !ok {
			break
		}
		rec.Step(w.apply(op, keys), "", w.r.LastSyncResourceVersion())
		w.quiet()
	}
	w.converge(120)
	w.stop()
	return srv
}

// schedulePrefix starts the Want of a schedule trace's first step.
const schedulePrefix = "schedule "
