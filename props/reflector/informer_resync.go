package reflector

import (
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kverify/kverify/props/checkkit"
	"github.com/kverify/kverify/props/modelserver"
	"github.com/kverify/kverify/spec/apiserver"
	sinf "github.com/kverify/kverify/spec/informer"
)

// assembled/resync runs one timeline on the whole informer, by LIST and by
// watch-list, and compares every handler call, at every instant something
// happens, with what the spec's resync schedule (spec/informer.Resync)
// and the server's state make of it: at each resync check, OnUpdate(o, o)
// for every stored object to exactly the handlers due (in any order), and
// nothing to the others; at each write, the write's one call to every
// handler; at each join, the initial list to the new handler.

// rsDefault is the informer's default resync period in the scenario.
const rsDefault = 4 * time.Second

// rsJoin is a handler of the scenario: when it joins (before Run when at
// is negative) and the period it asks for (default: AddEventHandler).
type rsJoin struct {
	at      time.Duration
	period  time.Duration
	dflt    bool
	comment string
}

// rsTimeline: the default period 4s; a handler asking for 2.5s before Run
// lowers the check period to 2.5s; handlers added after Run asking for
// 300ms are raised to 1s, then to the check period. No step falls on a
// check (every 2.5s).
var (
	rsHandlers = []rsJoin{
		{at: -1, dflt: true, comment: "default period (4s)"},
		{at: -1, period: 0, comment: "period 0: never"},
		{at: -1, period: 10 * time.Second, comment: "10s"},
		{at: -1, period: 2500 * time.Millisecond, comment: "2.5s, lowers the check period before Run"},
		{at: 3750 * time.Millisecond, period: 300 * time.Millisecond, comment: "300ms after Run: 1s, raised to the check period"},
		{at: 3750 * time.Millisecond, dflt: true, comment: "default period, after Run"},
		{at: 8750 * time.Millisecond, period: 0, comment: "period 0, after Run"},
	}
	rsWrites = []struct {
		at   time.Duration
		kind string
		key  string
	}{
		{1500 * time.Millisecond, "update", "default/o001"},
		{6250 * time.Millisecond, "delete", "default/o000"},
		{6250 * time.Millisecond, "create", "default/o009"},
		{11250 * time.Millisecond, "update", "default/o002"},
		{16250 * time.Millisecond, "update", "default/o009"},
	}
	rsEnd = 21 * time.Second
)

// rsRun is one run of the timeline: the informer, the model and each
// handler's index in it.
type rsRun struct {
	w     *iworld
	m     *sinf.Resync
	t0    time.Time
	marks []int
	fail  func(string, string, ...any)
}

func assembledResync(s InformerSubject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, cfg checkkit.Config) error {
		modes := []bool{false, true}
		if s.Capabilities.NoWatchList {
			modes = modes[:1]
		}
		for _, watchList := range modes {
			err := checkkit.Scenario(t, cfg, fmt.Sprintf("resync (watch-list %v)", watchList), func(rec *checkkit.Recorder) error {
				fail := checkkit.ScenarioFail(rec)
				srv := modelserver.NewServer(apiserver.Config{}, nil)
				seed(srv, 3)
				r := &rsRun{w: newIWorld(fail, s, srv, watchList, rsDefault), m: sinf.NewResync(rsDefault), t0: time.Now(), fail: fail}
				defer r.w.stop(false)
				for _, j := range rsHandlers {
					if j.at < 0 {
						r.join(rec, j)
					}
				}
				r.m.Start(r.t0)
				r.w.run()
				synctest.Wait()
				r.expect("the first sync", func(int) []hcall { return initialAdds(r.w.current()) })
				joins := slices.DeleteFunc(slices.Clone(rsHandlers), func(j rsJoin) bool { return j.at < 0 })
				writes := slices.Clone(rsWrites)
				for len(joins) > 0 || len(writes) > 0 {
					switch {
					case len(writes) == 0 || len(joins) > 0 && joins[0].at <= writes[0].at:
						j := joins[0]
						joins = joins[1:]
						r.advance(j.at)
						r.join(rec, j)
						synctest.Wait()
						n := len(r.w.viewers) - 1
						r.expect("a handler added after Run, "+j.comment, func(i int) []hcall {
							if i == n {
								return initialAdds(r.w.current())
							}
							return nil
						})
					default:
						wr := writes[0]
						writes = writes[1:]
						r.advance(wr.at)
						r.write(rec, srv, wr.kind, wr.key)
					}
				}
				r.advance(rsEnd)
				r.w.views(r.w.current())
				r.w.stop(true)
				return nil
			})
			if err != nil {
				return err
			}
		}
		return nil
	}
}

// join adds handler j to the informer and to the model.
func (r *rsRun) join(rec *checkkit.Recorder, j rsJoin) {
	v := newViewer()
	var reg Registration
	var err error
	period := j.period
	if j.dflt {
		reg, err = r.w.inf.AddEventHandler(v)
		period = rsDefault
	} else {
		reg, err = r.w.inf.AddEventHandlerWithResyncPeriod(v, j.period)
	}
	if err != nil {
		r.fail(GHandlerRegistration, "adding handler %d (%s): %v", len(r.w.viewers), j.comment, err)
	}
	r.w.viewers, r.w.regs = append(r.w.viewers, v), append(r.w.regs, reg)
	r.m.AddHandler(period, time.Now())
	r.marks = append(r.marks, 0)
	rec.Step(fmt.Sprintf("at %v add handler %d: %s", time.Since(r.t0), len(r.w.viewers)-1, j.comment), "", "")
}

// write applies one write to the server and expects its one call at every
// handler.
func (r *rsRun) write(rec *checkkit.Recorder, srv *modelserver.Server, kind, key string) {
	before := r.w.current()
	var err error
	switch kind {
	case "update":
		err = srv.Update(key)
	case "delete":
		err = srv.Delete(key)
	default:
		err = srv.Create(key)
	}
	if err != nil {
		r.fail(GModelServer, "%s %s: %v", kind, key, err)
	}
	rec.Step(fmt.Sprintf("at %v %s %s", time.Since(r.t0), kind, key), "", "")
	synctest.Wait()
	after := r.w.current()
	var c hcall
	switch kind {
	case "update":
		c = hcall{kind: "update", old: objAt(before, key), new: objAt(after, key)}
	case "delete":
		c = hcall{kind: "delete", old: hobj{Key: key}}
	default:
		c = hcall{kind: "add", new: objAt(after, key)}
	}
	r.expect(fmt.Sprintf("%s %s", kind, key), func(i int) []hcall {
		got := r.w.viewers[i].since(r.marks[i])
		if c.kind == "delete" && len(got) == 1 && got[0].kind == "delete" && !got[0].old.tomb {
			// A watch's delete carries the server's object at deletion;
			// the viewer checks its version.
			return []hcall{{kind: "delete", old: hobj{Key: key, RV: got[0].old.RV}}}
		}
		return []hcall{c}
	})
}

// advance runs every resync check before to, each compared on its own,
// then lets the time come to to. No check may fall at to.
func (r *rsRun) advance(to time.Duration) {
	end := r.t0.Add(to)
	for {
		at, ok := r.m.NextRound()
		if !ok || !at.Before(end) {
			if ok && at.Equal(end) {
				panic(fmt.Sprintf("props/reflector: a step of assembled/resync at %v falls on a resync check (a bug in the scenario)", to))
			}
			break
		}
		time.Sleep(time.Until(at))
		synctest.Wait()
		_, due := r.m.Round()
		objs := r.w.current()
		r.expect(fmt.Sprintf("the resync check at %v (every %v; handlers due: %v)", at.Sub(r.t0), r.m.CheckPeriod(), due), func(i int) []hcall {
			if !slices.Contains(due, i) {
				return nil
			}
			out := make([]hcall, len(objs))
			for k, o := range objs {
				out[k] = hcall{kind: "update", old: hobj{Key: o.Key, RV: o.RV}, new: hobj{Key: o.Key, RV: o.RV}}
			}
			return out
		})
	}
	time.Sleep(time.Until(end))
	synctest.Wait()
}

// expect compares every handler's calls since its mark with want(i), as
// sets (a resync and an initial list come in the store's order), then
// moves the marks.
func (r *rsRun) expect(what string, want func(i int) []hcall) {
	r.w.views(nil)
	for i := range r.w.viewers {
		if d := r.w.expectCalls(i, r.marks[i], want(i), true); d != "" {
			g := GCallFields
			if slices.ContainsFunc(r.w.viewers[i].since(r.marks[i]), isResync) || slices.ContainsFunc(want(i), isResync) {
				g = GHandlerResync
			}
			r.fail(g, "at %v, %s: %s", time.Since(r.t0), what, d)
		}
	}
	r.marks = r.w.marks()
}

// isResync reports whether c is a resync's update (old and new the same
// version).
func isResync(c hcall) bool { return c.kind == "update" && c.old == c.new }
