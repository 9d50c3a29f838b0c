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
	"github.com/kverify/kverify/spec/apiserver"
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
	AddEventHandler(h Handler) (Registration, error)
	HasSynced() bool
	// Run runs until ctx ends and returns once everything it started has
	// stopped.
	Run(ctx context.Context)
}

// InformerSubject builds an informer over srv, inside the caller's
// synctest bubble, streaming its syncs when watchList is set.
type InformerSubject struct {
	New func(srv *Server, watchList bool) (Informer, error)
	// Capabilities declares the optional features the informer's
	// reflector lacks (the zero value: all of client-go's). Of them, only
	// NoWatchList changes the assembled checks: New is then always called
	// with watchList false, and the scenarios and random runs that stream
	// are not generated. The checks set no page size and no resync period
	// and do not judge requests, so NoPaging and NoResync take nothing
	// away from them.
	Capabilities Capabilities
}

// Assembled-informer check names, in the informer component.
const (
	CheckAssembledConverge = "assembled/converge"
	CheckAssembledSync     = "assembled/sync"
	CheckAssembledStop     = "assembled/stop"
)

// InformerChecks returns the checks of a whole informer over the model
// server, for the informer component.
func InformerChecks(s InformerSubject) []checkkit.Check {
	cs := []checkkit.Check{
		{Name: CheckAssembledSync, Family: checkkit.FamilyTiming,
			Guarantee: "the informer and a handler added before Run report synced only after the first sync was processed (not while the first list is refused and backing off), then every handler has the server's objects; a handler added after the sync gets them as initial-list adds and reports synced once they returned; then every handler sees a delete, an update and a create",
			Run:       assembledSync(s)},
		{Name: CheckAssembledStop, Family: checkkit.FamilyLeak,
			Guarantee: "cancelling Run returns at once with every goroutine stopped and every watch stopped; a second Run returns at once",
			Run:       assembledStop(s)},
		{Name: CheckAssembledConverge, Family: checkkit.FamilyModel,
			Guarantee: "over random server histories and fault schedules, with handlers added before Run and while it runs: every handler's calls are consistent with its view (OnAdd of a key it does not hold, OnUpdate and OnDelete of one it does, old and new of the same key); once faults stop every handler's view equals the server's state and every handler and the informer report synced",
			Run:       assembledConverge(s)},
	}
	for i := range cs {
		cs[i].Run = saved("informer", cs[i].Name, cs[i].Run)
		if s.Capabilities.NoWatchList {
			cs[i].Guarantee += " [the subject declares no watch-list: it is only built to list]"
		}
	}
	return cs
}

// viewer is a handler that keeps the view its calls imply.
type viewer struct {
	mu   sync.Mutex
	view map[string]int64
	bad  []string
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

func (v *viewer) OnAdd(obj any, _ bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	k, rv, ok := objKey(obj)
	if _, held := v.view[k]; !ok || held {
		v.bad = append(v.bad, fmt.Sprintf("OnAdd(%T %s) of a key it holds", obj, k))
	}
	v.view[k] = rv
}

func (v *viewer) OnUpdate(oldObj, newObj any) {
	v.mu.Lock()
	defer v.mu.Unlock()
	ok, _, _ := objKey(oldObj)
	k, rv, _ := objKey(newObj)
	if _, held := v.view[k]; !held || ok != k {
		v.bad = append(v.bad, fmt.Sprintf("OnUpdate(%s, %s) of a key it does not hold", ok, k))
	}
	v.view[k] = rv
}

func (v *viewer) OnDelete(obj any) {
	v.mu.Lock()
	defer v.mu.Unlock()
	k, _, _ := objKey(obj)
	if _, held := v.view[k]; !held {
		v.bad = append(v.bad, fmt.Sprintf("OnDelete(%s) of a key it does not hold", k))
	}
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
	srv     *Server
	inf     Informer
	cancel  context.CancelFunc
	done    chan struct{}
	viewers []*viewer
	regs    []Registration
}

func startInformer(fail func(string, string, ...any), s InformerSubject, srv *Server, watchList bool, before int) *iworld {
	if watchList && s.Capabilities.NoWatchList {
		panic("props/reflector: a check asked for a streaming informer from a subject that declares no watch-list (a bug in the check, not the subject)")
	}
	w := &iworld{fail: fail, srv: srv, done: make(chan struct{})}
	inf, err := s.New(srv, watchList)
	if err != nil {
		fail(GuaranteeConstruction, "New: %v", err)
	}
	w.inf = inf
	for i := 0; i < before; i++ {
		w.add()
	}
	ctx, cancel := context.WithCancel(context.Background())
	w.cancel = cancel
	go func() {
		defer close(w.done)
		inf.Run(ctx)
	}()
	return w
}

func (w *iworld) add() {
	v := newViewer()
	r, err := w.inf.AddEventHandler(v)
	if err != nil {
		w.fail(GuaranteeHandlerRegistration, "AddEventHandler: %v", err)
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
		w.fail(GuaranteeCancel, "the informer's Run did not return after its context was cancelled")
	}
	if msg := stops(w.srv, false); msg != "" {
		w.fail(GuaranteeStops, "%s", msg)
	}
}

// views checks the handlers' calls and, with want, their views.
func (w *iworld) views(want []apiserver.Object) string {
	var out []string
	for i, v := range w.viewers {
		view, bad := v.state()
		if len(bad) > 0 {
			w.fail(GuaranteeHandlerCalls, "handler %d: %s", i, strings.Join(bad, "; "))
		}
		if want != nil {
			if d := diff(view, want); d != "" {
				out = append(out, fmt.Sprintf("handler %d: %s", i, d))
			}
		}
	}
	return strings.Join(out, "; ")
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
				faults := rapid.SliceOfN(faultGen(false), 0, 6).Draw(rt, "faults")
				before := rapid.IntRange(0, 2).Draw(rt, "handlers-before-run")
				rec.Step(fmt.Sprintf("server watch-list=%v, informer watch-list=%v, %d objects, %d handlers before Run, faults %v", !noWL, watchList, n, before, faults), "", "")
				srv := NewServer(apiserver.Config{NoWatchList: noWL}, faults)
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
					fail(GuaranteeConverge, "once faults stopped the handlers' views differ from the server: %s", d)
				}
				if unsynced != "" {
					fail(GuaranteeAllSynced, "once faults stopped, not synced: %s", unsynced)
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
			err := scenario(t, cfg, fmt.Sprintf("sync (watch-list %v)", watchList), func(rec *checkkit.Recorder) error {
				var fails error
				fail := func(g, f string, a ...any) {
					fails = checkkit.Broke(g, f, a...)
					panic(errScenario{rec.Attach(fails)})
				}
				// The first three requests are refused: no sync for a while.
				srv := NewServer(apiserver.Config{}, []Fault{{Refuse: true}, {Refuse: true}, {Refuse: true}})
				seed(srv, 3)
				w := startInformer(fail, s, srv, watchList, 1)
				defer w.stop(false)
				synctest.Wait()
				if un := w.synced(); un != "the informer, handler 0" {
					fail(GuaranteeSyncedOnlyAfter, "with every request so far refused, not synced: %q, want the informer and handler 0", un)
				}
				time.Sleep(30 * time.Second)
				synctest.Wait()
				if d := w.views(w.current()); d != "" || w.synced() != "" {
					fail(GuaranteeSyncedAfter, "after the refusals: views %s; not synced: %q", d, w.synced())
				}
				w.add()
				synctest.Wait()
				if d := w.views(w.current()); d != "" || w.synced() != "" {
					fail(GuaranteeLateHandler, "views %s; not synced: %q", d, w.synced())
				}
				_ = srv.Delete("default/o000")
				_ = srv.Update("default/o001")
				_ = srv.Create("default/o009")
				synctest.Wait()
				if d := w.views(w.current()); d != "" {
					fail(GuaranteeEveryChange, "after a delete, an update and a create: %s", d)
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
		return scenario(t, cfg, "stop", func(rec *checkkit.Recorder) error {
			fail := func(g, f string, a ...any) { panic(errScenario{rec.Attach(checkkit.Broke(g, f, a...))}) }
			srv := NewServer(apiserver.Config{}, []Fault{{}, {Slow: time.Minute}})
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
				fail(GuaranteeCancel, "a second Run, after the first returned, does not return")
			}
			return nil
		})
	}
}
