package reflector

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kverify/kverify/props/checkkit"
	"github.com/kverify/kverify/props/modelserver"
	"github.com/kverify/kverify/spec/apiserver"
	"github.com/kverify/kverify/traces"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"pgregory.net/rapid"
)

// Handler receives an informer's notifications (client-go's
// ResourceEventHandler). Deleted objects may come as a tombstone: any
// struct with a string field Key (client-go's DeletedFinalStateUnknown).
type Handler interface {
	OnAdd(obj any, isInInitialList bool)
	OnUpdate(oldObj, newObj any)
	OnDelete(obj any)
}

// Registration is a handler's handle.
type Registration interface {
	HasSynced() bool
}

// Informer is a shared informer under test, assembled over the server.
type Informer interface {
	// AddEventHandler adds h with the informer's default resync period.
	AddEventHandler(h Handler) (Registration, error)
	// AddEventHandlerWithResyncPeriod adds h with its own resync period,
	// under client-go's rules (shared_informer.go:999-1030). Never called
	// on a subject that declares Capabilities.NoResync.
	AddEventHandlerWithResyncPeriod(h Handler, period time.Duration) (Registration, error)
	HasSynced() bool
	// Run runs until ctx ends and returns once everything it started has
	// stopped.
	Run(ctx context.Context)
}

// Cache is an optional capability of an Informer: the objects in its
// own store, the one its listers read (client-go's GetStore().List()).
// An informer that has it has its cache compared with the server's state
// wherever the handlers' views are once faults stopped.
type Cache interface {
	List() []any
}

// InformerSubject builds an informer over srv, inside the caller's
// synctest bubble, streaming its syncs when watchList is set, with resync
// as client-go's defaultEventHandlerResyncPeriod (the period of
// AddEventHandler's handlers and the first resync check period; 0: never).
type InformerSubject struct {
	New func(srv *modelserver.Server, watchList bool, resync time.Duration) (Informer, error)
	// Capabilities declares the optional features the informer's
	// reflector lacks (the zero value: all of client-go's). NoWatchList:
	// New is always called with watchList false, and the scenarios and
	// random runs that stream are not generated. NoResync: New is always
	// called with resync 0, AddEventHandlerWithResyncPeriod is never
	// called, and assembled/resync is not offered. The checks set no page
	// size and do not judge requests, so NoPaging takes nothing away from
	// them.
	Capabilities Capabilities
}

// Assembled-informer check names, in the informer component.
const (
	CheckAssembledConverge = "assembled/converge"
	CheckAssembledSync     = "assembled/sync"
	CheckAssembledStop     = "assembled/stop"
	CheckAssembledResync   = "assembled/resync"
)

// replayWith is a check's Replay through its replayer, which reports
// whether the trace is one of its own.
func replayWith(check string, s InformerSubject, replay func(*testing.T, checkkit.Config, InformerSubject, *traces.Trace) (bool, error)) func(*testing.T, *traces.Trace) error {
	return func(t *testing.T, tr *traces.Trace) error {
		if ok, err := replay(t, checkkit.Config{}, s, tr); ok {
			return err
		}
		return fmt.Errorf("reflector: the trace is not an %s trace", check)
	}
}

// InformerChecks returns the checks of a whole informer over the model
// server, for the informer component.
func InformerChecks(s InformerSubject) []checkkit.Check {
	cs := []checkkit.Check{
		{Name: CheckAssembledSync, Family: checkkit.FamilyTiming,
			Guarantee: "the informer and a handler added before Run report synced only after the first sync was processed (not while the first list is refused and backing off), then every handler has the server's objects; a handler added after the sync gets them as initial-list adds and reports synced once they returned; then every handler sees a delete, an update and a create",
			Run:       assembledSync(s)},
		checkkit.Check{Name: CheckAssembledStop, Family: checkkit.FamilyLeak,
			Guarantee: "cancelling Run returns at once with every goroutine stopped and every watch stopped, or, with a handler call in progress or the reflector inside a call to the server that takes no context (a held watch Stop), as soon as that call returned and not before; a request held by the server when Run is cancelled is given up at once and none is in flight once Run returned; nothing of the informer runs after; a second Run returns at once",
			Run:       assembledStop(s)}.OfferedIf(!s.Capabilities.AlwaysStreams, "the subject streams its syncs even when built to list, and the scenarios hold and fail a listing informer's requests one by one"),
		checkkit.Check{Name: CheckAssembledResync, Family: checkkit.FamilyModel,
			Guarantee: "each handler, with its own resync period under client-go's rules (raised to 1s, lowering the check period before Run, raised to it after), gets OnUpdate(o, o) for every stored object at exactly the resync checks it is due at (spec/informer.Resync), besides its initial list and the watch's events, on a list and a watch-list sync, for handlers added before Run and late",
			Run:       assembledResync(s)}.OfferedIf(!s.Capabilities.NoResync, "the subject declares no resync"),
		{Name: CheckAssembledConverge, Family: checkkit.FamilyModel,
			Guarantee: "over random server histories and fault schedules, with handlers added before Run and while it runs: every handler's calls are consistent with its view (OnAdd of a key it does not hold, OnUpdate and OnDelete of one it does, old and new of the same key); once faults stop every handler's view equals the server's state and every handler and the informer report synced",
			Run:       assembledConverge(s)},
		{Name: CheckAssembledJoins, Family: checkkit.FamilyExhaustive,
			Guarantee: fmt.Sprintf("with the server holding the informer's first request (a LIST, or a watch-list WATCH), every order of up to %d steps of Run, two handlers joining (before Run, between Run and the sync, mid-list, after), the server's answer, and each handler held in the middle of its initial list and let go, breadth first with one run per state: at every quiescent point the informer reports synced exactly when the first request was answered, and a handler exactly when the informer has synced and its whole initial list has returned; once everything is let go every handler has the server's objects and reports synced, and Run stops cleanly", joinsDepth),
			Run:       joins(s),
			Replay:    replayWith(CheckAssembledJoins, s, replayJoins)},
		checkkit.Check{Name: CheckAssembledResyncOrders, Family: checkkit.FamilyExhaustive,
			Guarantee: fmt.Sprintf("with the server holding the informer's first request, every order of up to %d steps of handlers joining with different resync periods (the default, 300ms, 2.5s, 6s; before Run, between Run and the sync, after it), Run, the server's answer and time passing, breadth first with one run per model state: every handler gets its initial list at the sync (or at its join after it) and OnUpdate(o, o) for every stored object at exactly the resync checks spec/informer.Resync makes of that order (the check period lowered by handlers added before Run, final at Run, the timer armed at the first sync), and nothing else", orderDepth),
			Run:       resyncOrders(s),
			Replay:    replayWith(CheckAssembledResyncOrders, s, replayOrders)}.OfferedIf(!s.Capabilities.NoResync, "the subject declares no resync"),
	}
	for i := range cs {
		cs[i].Run = saved("informer", cs[i].Name, cs[i].Run)
		if s.Capabilities.NoWatchList {
			cs[i].Guarantee += " [the subject declares no watch-list: it is only built to list]"
		}
	}
	return cs
}

// viewer is a handler that keeps the view its calls imply and records
// every call (see informer_calls.go for the per-call rules).
type viewer struct {
	mu    sync.Mutex
	view  map[string]int64
	bad   []string
	calls []hcall
	// pastInitial: a call other than an initial-list add came, or the
	// handler was seen synced: no initial-list add may follow.
	pastInitial bool
	// busy counts calls in progress, started every call begun.
	busy, started int
	// holdKey, when set, makes a call about that key wait until gate is
	// closed (counted in progress meanwhile): a handler held across
	// cancellation (see informer_stop.go).
	holdKey string
	gate    chan struct{}
}

func newViewer() *viewer { return &viewer{view: map[string]int64{}} }

func objKey(obj any) (string, int64, bool) {
	if m, ok := obj.(*metav1.PartialObjectMetadata); ok {
		var rv int64
		fmt.Sscan(m.ResourceVersion, &rv)
		return metaKey(m), rv, true
	}
	v := reflect.ValueOf(obj)
	if v.Kind() == reflect.Struct {
		if f := v.FieldByName("Key"); f.IsValid() && f.Kind() == reflect.String {
			return f.String(), 0, true
		}
	}
	return "", 0, false
}

func (v *viewer) OnAdd(obj any, initial bool) {
	defer v.enter()()
	v.wait(obj)
	v.mu.Lock()
	defer v.mu.Unlock()
	k, rv, ok := objKey(obj)
	if _, held := v.view[k]; !ok || held {
		v.bad = append(v.bad, fmt.Sprintf("OnAdd(%T %s) of a key it holds", obj, k))
	}
	if initial && v.pastInitial {
		v.bad = append(v.bad, fmt.Sprintf("OnAdd(%s@%d, isInInitialList=true) after the handler's initial list (after a call other than an initial add, or after it reported synced)", k, rv))
	}
	if !initial {
		v.pastInitial = true
	}
	v.calls = append(v.calls, hcall{kind: "add", new: obj1(obj), initial: initial})
	v.view[k] = rv
}

func (v *viewer) OnUpdate(oldObj, newObj any) {
	defer v.enter()()
	v.wait(newObj)
	v.mu.Lock()
	defer v.mu.Unlock()
	v.pastInitial = true
	ok, orv, _ := objKey(oldObj)
	k, rv, _ := objKey(newObj)
	held, isHeld := v.view[k]
	if !isHeld || ok != k {
		v.bad = append(v.bad, fmt.Sprintf("OnUpdate(%s, %s) of a key it does not hold", ok, k))
	} else if orv != held || rv < orv {
		v.bad = append(v.bad, fmt.Sprintf("OnUpdate(%s@%d, %s@%d) with the handler holding %s@%d: the old object must be the one it was last given, the new one no older", ok, orv, k, rv, k, held))
	}
	v.calls = append(v.calls, hcall{kind: "update", old: obj1(oldObj), new: obj1(newObj)})
	v.view[k] = rv
}

func (v *viewer) OnDelete(obj any) {
	defer v.enter()()
	v.wait(obj)
	v.mu.Lock()
	defer v.mu.Unlock()
	v.pastInitial = true
	k, rv, _ := objKey(obj)
	o := obj1(obj)
	held, isHeld := v.view[k]
	switch {
	case !isHeld:
		v.bad = append(v.bad, fmt.Sprintf("OnDelete(%s) of a key it does not hold", k))
	case o.tomb && o.RV >= 0 && o.RV != held:
		v.bad = append(v.bad, fmt.Sprintf("OnDelete(tombstone %s@%d) with the handler holding %s@%d: a tombstone carries the last state it was given", k, o.RV, k, held))
	case !o.tomb && rv < held:
		v.bad = append(v.bad, fmt.Sprintf("OnDelete(%s@%d) with the handler holding %s@%d: older than what it was given", k, rv, k, held))
	}
	v.calls = append(v.calls, hcall{kind: "delete", old: o})
	delete(v.view, k)
}

func (v *viewer) state() (map[string]int64, []string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	out := make(map[string]int64, len(v.view))
	for k, rv := range v.view {
		out[k] = rv
	}
	return out, append([]string(nil), v.bad...)
}

// iworld is one informer run.
type iworld struct {
	fail    func(guarantee, format string, args ...any)
	srv     *modelserver.Server
	inf     Informer
	cancel  context.CancelFunc
	done    chan struct{}
	viewers []*viewer
	regs    []Registration
	// returned is what had happened when Run returned (set before done
	// closes).
	returned atReturn
}

func startInformer(fail func(string, string, ...any), s InformerSubject, srv *modelserver.Server, watchList bool, before int) *iworld {
	w := newIWorld(fail, s, srv, watchList, 0)
	for i := 0; i < before; i++ {
		w.add()
	}
	w.run()
	return w
}

// newIWorld builds the informer, not yet running.
func newIWorld(fail func(string, string, ...any), s InformerSubject, srv *modelserver.Server, watchList bool, resync time.Duration) *iworld {
	if watchList && s.Capabilities.NoWatchList {
		panic("props/reflector: a check asked for a streaming informer from a subject that declares no watch-list (a bug in the check, not the subject)")
	}
	if resync != 0 && s.Capabilities.NoResync {
		panic("props/reflector: a check asked for a resyncing informer from a subject that declares no resync (a bug in the check, not the subject)")
	}
	w := &iworld{fail: fail, srv: srv, done: make(chan struct{})}
	inf, err := s.New(srv, watchList, resync)
	if err != nil {
		fail(GConstruction, "New: %v", err)
	}
	w.inf = inf
	return w
}

// run starts Run in a goroutine.
func (w *iworld) run() {
	inf := w.inf
	ctx, cancel := context.WithCancel(context.Background())
	w.cancel = cancel
	go func() {
		defer close(w.done)
		inf.Run(ctx)
		w.returned = w.activity()
	}()
}

func (w *iworld) add() {
	v := newViewer()
	r, err := w.inf.AddEventHandler(v)
	if err != nil {
		w.fail(GHandlerRegistration, "AddEventHandler: %v", err)
	}
	w.viewers, w.regs = append(w.viewers, v), append(w.regs, r)
}

// stop cancels Run and checks it returns at once, then cleans up.
func (w *iworld) stop(check bool) {
	if w.cancel == nil {
		return
	}
	returned, _ := cancelRun(&w.cancel, w.done)
	w.srv.Close()
	if !check {
		return
	}
	if !returned {
		w.fail(GCancel, "the informer's Run did not return after its context was cancelled")
	}
	if msg := stops(w.srv, false); msg != "" {
		w.fail(GStops, "%s", msg)
	}
	w.nothingAfter()
}

// nothingAfter checks that nothing of the informer ran when or after Run
// returned: no handler call in progress then, none started since, no
// request since, while the server changes and time passes.
func (w *iworld) nothingAfter() {
	at := w.returned
	if at.busy > 0 {
		w.fail(GNothingAfterStop, "Run returned while %d handler call(s) were in progress", at.busy)
	}
	_ = w.srv.Create("default/after-stop")
	_ = w.srv.Update("default/o001")
	w.srv.Bookmark()
	time.Sleep(10 * time.Minute)
	synctest.Wait()
	if now := w.activity(); now != at {
		w.fail(GNothingAfterStop, "after Run returned: %d handler calls started (%d then), %d requests (%d then), %d calls in progress",
			now.started, at.started, now.requests, at.requests, now.busy)
	}
}

// views checks the handlers' calls and, with want, their views.
func (w *iworld) views(want []apiserver.Object) string {
	var out []string
	for i, v := range w.viewers {
		view, bad := v.state()
		if len(bad) > 0 {
			w.fail(GHandlerCalls, "handler %d: %s", i, strings.Join(bad, "; "))
		}
		if want != nil {
			if d := diff(view, want); d != "" {
				out = append(out, fmt.Sprintf("handler %d: %s", i, d))
			}
		}
	}
	return strings.Join(out, "; ")
}

// cacheDiff compares the informer's cache with the server's state, if
// the informer offers it (Cache): "" when they agree or it does not.
func (w *iworld) cacheDiff() string {
	c, ok := w.inf.(Cache)
	if !ok {
		return ""
	}
	items := map[string]int64{}
	for _, obj := range c.List() {
		k, rv, ok := objKey(obj)
		if !ok {
			return fmt.Sprintf("an object of type %T in the cache", obj)
		}
		items[k] = rv
	}
	return strings.TrimSpace(diff(items, w.current()))
}

func (w *iworld) current() []apiserver.Object {
	_, objs := w.srv.Current()
	return objs
}

func (w *iworld) synced() string {
	var out []string
	if !w.inf.HasSynced() {
		out = append(out, "the informer")
	}
	for i, r := range w.regs {
		if !r.HasSynced() {
			out = append(out, fmt.Sprintf("handler %d", i))
		}
	}
	return strings.Join(out, ", ")
}

func assembledConverge(s InformerSubject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, cfg checkkit.Config) error {
		return checkkit.Rapid(t, cfg, func(rt *rapid.T, rec *checkkit.Recorder) {
			checkkit.Bubble(t, func() {
				rec.Timed()
				fail := func(g, f string, a ...any) { rec.Fail(rt, g, f, a...) }
				noWL := rapid.Bool().Draw(rt, "server-without-watch-list")
				watchList := false
				if !s.Capabilities.NoWatchList {
					watchList = rapid.Bool().Draw(rt, "watch-list")
				}
				n := rapid.IntRange(0, 10).Draw(rt, "objects")
				faults := rapid.SliceOfN(modelserver.FaultGen(), 0, 6).Draw(rt, "faults")
				before := rapid.IntRange(0, 2).Draw(rt, "handlers-before-run")
				rec.Step(fmt.Sprintf("server watch-list=%v, informer watch-list=%v, %d objects, %d handlers before Run, faults %v", !noWL, watchList, n, before, faults), "", "")
				srv := modelserver.NewServer(apiserver.Config{NoWatchList: noWL}, faults)
				seed(srv, n)
				w := startInformer(fail, s, srv, watchList, before)
				defer w.stop(false)
				// The first requests before the first write, so that a
				// counterexample replays the same way.
				synctest.Wait()
				keys := keyPool(8)
				ww := &world{t: rt, rec: rec, srv: srv}
				steps := rapid.IntRange(0, 20).Draw(rt, "steps")
				for i := 0; i < steps; i++ {
					var op string
					if rapid.IntRange(0, 5).Draw(rt, "add-handler") == 0 {
						w.add()
						op = fmt.Sprintf("add handler %d", len(w.viewers)-1)
					} else {
						op = ww.step(keys)
					}
					rec.Step(op, "", "")
					synctest.Wait()
					w.views(nil)
				}
				if len(w.viewers) == 0 {
					w.add()
				}
				var d, unsynced string
				for r := 0; r < 120; r++ {
					srv.Bookmark()
					time.Sleep(61 * time.Second)
					synctest.Wait()
					d, unsynced = w.views(w.current()), w.synced()
					if d == "" && unsynced == "" {
						break
					}
				}
				if d != "" {
					fail(GConverge, "once faults stopped the handlers' views differ from the server: %s", d)
				}
				if d := w.cacheDiff(); d != "" {
					fail(GCache, "once faults stopped and every handler has the server's objects, the informer's cache differs: %s", d)
				}
				if unsynced != "" {
					fail(GAllSynced, "once faults stopped, not synced: %s", unsynced)
				}
				w.stop(true)
			})
		})
	}
}

func assembledSync(s InformerSubject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, cfg checkkit.Config) error {
		modes := []bool{false, true}
		if s.Capabilities.NoWatchList {
			modes = modes[:1] // the subject never streams
		}
		for _, watchList := range modes {
			err := checkkit.Scenario(t, cfg, fmt.Sprintf("sync (watch-list %v)", watchList), func(rec *checkkit.Recorder) error {
				var fails error
				fail := func(g, f string, a ...any) {
					fails = checkkit.Broke(g, f, a...)
					checkkit.AbortScenario(rec.Attach(fails))
				}
				// The first three requests are refused: no sync for a while.
				srv := modelserver.NewServer(apiserver.Config{}, []modelserver.Fault{{Refuse: true}, {Refuse: true}, {Refuse: true}})
				seed(srv, 3)
				w := startInformer(fail, s, srv, watchList, 1)
				defer w.stop(false)
				synctest.Wait()
				if un := w.synced(); un != "the informer, handler 0" {
					fail(GSyncedOnlyAfter, "with every request so far refused, not synced: %q, want the informer and handler 0", un)
				}
				time.Sleep(30 * time.Second)
				synctest.Wait()
				if d := w.views(w.current()); d != "" || w.synced() != "" {
					fail(GSyncedAfter, "after the refusals: views %s; not synced: %q", d, w.synced())
				}
				listed := w.current()
				if d := w.expectCalls(0, 0, initialAdds(listed), true); d != "" {
					fail(GCallFields, "the initial list: %s", d)
				}
				w.markSynced()
				w.add()
				synctest.Wait()
				if d := w.views(w.current()); d != "" || w.synced() != "" {
					fail(GLateHandler, "views %s; not synced: %q", d, w.synced())
				}
				if d := w.expectCalls(1, 0, initialAdds(listed), true); d != "" {
					fail(GCallFields, "a handler added after the sync: %s", d)
				}
				w.markSynced()
				mark, before := w.marks(), w.current()
				_ = srv.Delete("default/o000")
				_ = srv.Update("default/o001")
				_ = srv.Create("default/o009")
				synctest.Wait()
				if d := w.views(w.current()); d != "" {
					fail(GEveryChange, "after a delete, an update and a create: %s", d)
				}
				after := w.current()
				for i := range w.viewers {
					got := w.viewers[i].since(mark[i])
					want := []hcall{
						{kind: "delete", old: hobj{Key: "default/o000"}},
						{kind: "update", old: objAt(before, "default/o001"), new: objAt(after, "default/o001")},
						{kind: "add", new: objAt(after, "default/o009")}}
					if len(got) == 3 && got[0].kind == "delete" && !got[0].old.tomb {
						got[0].old.RV = 0 // a watch's delete carries the server's object at deletion; its version is checked by the view
					}
					if d := strings.Join(strs(got), " "); d != strings.Join(strs(want), " ") {
						fail(GCallFields, "the watch's delete, update and create: handler %d got [%s], want [%s]", i, d, strings.Join(strs(want), " "))
					}
				}
				// A relist: the watch closes, the server changes meanwhile,
				// the next watch is refused with 410 Gone.
				mark, before = w.marks(), w.current()
				if err := srv.Outage(func(m *apiserver.Server) error {
					if _, err := m.Delete("default/o001"); err != nil {
						return err
					}
					if _, err := m.Update("default/o002"); err != nil {
						return err
					}
					_, err := m.Create("default/o010")
					return err
				}, modelserver.Fault{Reject: 410}); err != nil {
					fail(GModelServer, "outage: %v", err)
				}
				time.Sleep(30 * time.Second)
				synctest.Wait()
				if d := w.views(w.current()); d != "" {
					fail(GConverge, "after a relist: %s", d)
				}
				if d := w.cacheDiff(); d != "" {
					fail(GCache, "after a relist that deleted default/o001: %s", d)
				}
				after = w.current()
				for i := range w.viewers {
					// client-go's listeners stay in the resync round until
					// the first resync check, which never comes without a
					// resync period (shared_informer.go:1198,1248-1256):
					// unchanged relisted objects reach them as updates.
					gone := objAt(before, "default/o001")
					gone.tomb = true
					want := []hcall{{kind: "delete", old: gone}}
					for _, o := range after {
						if was := objAt(before, o.Key); was.RV >= 0 {
							want = append(want, hcall{kind: "update", old: was, new: hobj{Key: o.Key, RV: o.RV}})
						} else {
							want = append(want, hcall{kind: "add", new: hobj{Key: o.Key, RV: o.RV}})
						}
					}
					if d := w.expectCalls(i, mark[i], want, true); d != "" {
						fail(GCallFields, "a relist after a closed watch and 410 Gone: %s", d)
					}
				}
				w.stop(true)
				return nil
			})
			if err != nil {
				return err
			}
		}
		return nil
	}
}

func assembledStop(s InformerSubject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, cfg checkkit.Config) error {
		for _, held := range []func(*testing.T, checkkit.Config, InformerSubject) error{stopHeld, stopWatchStopHeld, stopListHeld} {
			if err := held(t, cfg, s); err != nil {
				return err
			}
		}
		return checkkit.Scenario(t, cfg, "stop", func(rec *checkkit.Recorder) error {
			fail := checkkit.ScenarioFail(rec)
			srv := modelserver.NewServer(apiserver.Config{}, []modelserver.Fault{{}, {Slow: time.Minute}})
			seed(srv, 3)
			w := startInformer(fail, s, srv, false, 2)
			defer w.stop(false)
			time.Sleep(time.Second)
			_ = srv.Create("default/late")
			synctest.Wait()
			w.stop(true)
			again := make(chan struct{})
			go func() {
				defer close(again)
				w.inf.Run(context.Background())
			}()
			synctest.Wait()
			select {
			case <-again:
			default:
				fail(GCancel, "a second Run, after the first returned, does not return")
			}
			return nil
		})
	}
}
