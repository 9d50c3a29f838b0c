package reflector

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kverify/kverify/props/checkkit"
	"github.com/kverify/kverify/props/modelserver"
	"github.com/kverify/kverify/spec/apiserver"
	"github.com/kverify/kverify/traces"
)

// CheckAssembledJoins enumerates where handlers join the informer's first
// sync.
const CheckAssembledJoins = "assembled/joins"

// joinObjects is how many objects the server holds in assembled/joins.
const joinObjects = 3

// joinHeldKey is the object a held handler's call waits on: the second
// of the list, so that a handler held there is in the middle of its
// initial list.
const joinHeldKey = "default/o001"

// joinsDepth is assembled/joins' default bound, in steps (KVERIFY_DEEPER
// adds to it): past the depth where the search closes (8 on ours and on
// client-go v0.37.2: every order of Run, two joins, the server's answer
// and a hold and release of each handler).
const joinsDepth = 9

// joinStep is one choice of assembled/joins.
type joinStep uint8

// The steps: start Run; add a handler (at most two); let the server
// answer the first request (held until then: the first LIST, or the
// first watch-list WATCH); make handler i's call about joinHeldKey wait
// (Hold) or let it go on (Open).
const (
	jRun joinStep = iota
	jAdd
	jRelease
	jHold0
	jOpen0
	jHold1
	jOpen1
)

var joinNames = [...]string{"Run", "AddHandler", "Release", "h0:Hold", "h0:Open", "h1:Hold", "h1:Open"}

func (s joinStep) String() string { return joinNames[s] }

var joinAlphabet = []joinStep{jRun, jAdd, jRelease, jHold0, jOpen0, jHold1, jOpen1}

// jworld is one run of assembled/joins: the informer, the server that
// holds its first request, and what the steps did.
type jworld struct {
	*iworld
	started, released bool
	// open[i] lets handler i's held call go on; nil while not held.
	open []func()
	held []bool
}

func (x *jworld) enabled(s joinStep) bool {
	switch s {
	case jRun:
		return !x.started
	case jAdd:
		return len(x.viewers) < 2
	case jRelease:
		return !x.released
	}
	i := int(s-jHold0) / 2
	if i >= len(x.viewers) {
		return false
	}
	if (s-jHold0)%2 == 0 {
		return !x.held[i] && x.initialAdds(i) <= 1 // before its add of joinHeldKey
	}
	return x.held[i]
}

func (x *jworld) apply(s joinStep) {
	switch s {
	case jRun:
		x.run()
		x.started = true
	case jAdd:
		x.add()
		x.open, x.held = append(x.open, nil), append(x.held, false)
	case jRelease:
		x.srv.Release()
		x.released = true
	case jHold0, jHold1:
		i := int(s-jHold0) / 2
		x.open[i], x.held[i] = x.viewers[i].hold(joinHeldKey), true
	case jOpen0, jOpen1:
		i := int(s-jHold0) / 2
		x.open[i]()
		x.held[i] = false
	}
}

// initialAdds is how many adds handler i has received (its view's size:
// the server holds joinObjects objects and nothing changes them).
func (x *jworld) initialAdds(i int) int {
	view, _ := x.viewers[i].state()
	return len(view)
}

// judge checks, at a quiescent point, what each side reports: the
// informer has synced exactly when the server has answered its first
// request; a handler reports synced only once the informer has and its
// whole initial list has returned, and, the machine being quiescent,
// as soon as both hold.
func (x *jworld) judge() error {
	if x.started {
		if got := x.inf.HasSynced(); got != x.released {
			if got {
				return checkkit.Broke(GSyncedOnlyAfter, "the informer reports synced while the server has not answered its first request")
			}
			return checkkit.Broke(GSyncedAfter, "the server answered the first request and everything is quiescent, but the informer does not report synced")
		}
	}
	infSynced := x.started && x.released
	for i, v := range x.viewers {
		_, bad := v.state()
		if len(bad) > 0 {
			return checkkit.Broke(GHandlerCalls, "handler %d: %s", i, strings.Join(bad, "; "))
		}
		n, busy := x.initialAdds(i), v.inProgress()
		done := infSynced && n == joinObjects && busy == 0
		switch got := x.regs[i].HasSynced(); {
		case got && !done:
			return checkkit.Broke(GSyncedOnlyAfter, "handler %d reports synced with the informer synced %v and %d of its %d initial adds returned (%d call(s) in progress)", i, x.inf.HasSynced(), n, joinObjects, busy)
		case !got && done:
			return checkkit.Broke(GLateHandler, "handler %d has its %d initial adds returned, the informer has synced and everything is quiescent, but it does not report synced", i, n)
		}
	}
	return nil
}

// key is the abstract state: what the steps did and what each side has
// received and reports.
func (x *jworld) key() string {
	var b strings.Builder
	fmt.Fprintf(&b, "run=%v released=%v", x.started, x.released)
	if x.started {
		fmt.Fprintf(&b, " synced=%v", x.inf.HasSynced())
	}
	for i, v := range x.viewers {
		fmt.Fprintf(&b, " | h%d held=%v adds=%d busy=%d synced=%v", i, x.held[i], x.initialAdds(i), v.inProgress(), x.regs[i].HasSynced())
	}
	return b.String()
}

// finish lets everything go on, then checks that every handler has the
// server's objects and reports synced, and stops the informer.
func (x *jworld) finish() error {
	for i, open := range x.open {
		if open != nil && x.held[i] {
			open()
		}
	}
	x.srv.Release()
	if !x.started {
		x.run()
	}
	time.Sleep(time.Minute)
	synctest.Wait()
	if d := x.views(x.current()); d != "" {
		return checkkit.Broke(GConverge, "once every hold was let go, the handlers' views differ from the server: %s", d)
	}
	if un := x.synced(); un != "" {
		return checkkit.Broke(GAllSynced, "once every hold was let go, not synced: %s", un)
	}
	if d := x.cacheDiff(); d != "" {
		return checkkit.Broke(GCache, "once every hold was let go, the informer's cache differs from the server: %s", d)
	}
	return nil
}

// joins runs assembled/joins: for a listing informer and a streaming one,
// every sequence of up to joinsDepth steps, breadth first with one run per
// abstract state, judged at every quiescent point and at the end.
func joins(s InformerSubject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, cfg checkkit.Config) error {
		sp := checkkit.Space[joinStep]{Name: "join steps", Steps: joinAlphabet, Depth: joinsDepth}
		return exploreModes(t, cfg, s, sp, "", func(watchList bool, steps []joinStep) (string, []int, error) {
			return runJoins(t, cfg, s, watchList, steps)
		})
	}
}

// exploreModes runs the search sp for a listing informer and for a
// streaming one (only the first if the subject has no watch-list), with
// run told the mode, and reports their summed coverage; bound is added to
// the coverage's bound.
func exploreModes[S any](t *testing.T, cfg checkkit.Config, s InformerSubject, sp checkkit.Space[S], bound string, run func(watchList bool, steps []S) (string, []int, error)) error {
	modes, names := []bool{false, true}, "list and watch-list"
	if s.Capabilities.NoWatchList {
		modes, names = modes[:1], "list only"
	}
	var total checkkit.Coverage
	for _, watchList := range modes {
		sp.Run = func(steps []S) (string, []int, error) { return run(watchList, steps) }
		cov, err := checkkit.Explore(cfg, sp)
		total = total.Plus(cov)
		total.Bound = fmt.Sprintf("%s%s, %s", cov.Bound, bound, names)
		if err != nil {
			checkkit.ReportCoverage(t, total)
			return err
		}
	}
	checkkit.ReportCoverage(t, total)
	return nil
}

// runJoins plays steps on a fresh informer and returns the state reached,
// the steps enabled there, and the first violation (with the trace).
func runJoins(t *testing.T, cfg checkkit.Config, s InformerSubject, watchList bool, steps []joinStep) (key string, enabled []int, err error) {
	rec := checkkit.NewRecorder(cfg.Progress)
	rec.Step(fmt.Sprintf("informer watch-list=%v, %d objects, first request held", watchList, joinObjects), joinsPrefix+fmt.Sprint(watchList), "")
	var failed error
	err = checkkit.InBubble(t, func() error {
		fail := func(g, f string, a ...any) { failed = checkkit.Broke(g, f, a...); panic(joinAbort{}) }
		defer func() {
			if r := recover(); r != nil {
				if _, ok := r.(joinAbort); !ok {
					panic(r)
				}
			}
		}()
		srv := modelserver.NewServer(apiserver.Config{}, []modelserver.Fault{{Hold: true}})
		seed(srv, joinObjects)
		x := &jworld{iworld: newIWorld(fail, s, srv, watchList, 0)}
		defer x.stop(false)
		defer func() {
			for i, open := range x.open {
				if open != nil && x.held[i] {
					open()
				}
			}
		}()
		for _, st := range steps {
			x.apply(st)
			rec.Step(st.String(), "", "")
			synctest.Wait()
			if err := x.judge(); err != nil {
				return err
			}
		}
		key = x.key()
		for i, st := range joinAlphabet {
			if x.enabled(st) {
				enabled = append(enabled, i)
			}
		}
		rec.Step("finish", "", "")
		if err := x.finish(); err != nil {
			return err
		}
		x.stop(true)
		return nil
	})
	if failed != nil {
		err = failed
	}
	return key, enabled, rec.Attach(err)
}

// joinAbort unwinds a run of assembled/joins at a failure its world
// reports (iworld's fail).
type joinAbort struct{}

// joinsPrefix starts the Want of a joins trace's first step: the mode.
const joinsPrefix = "joins watch-list="

// replayJoins runs a saved assembled/joins trace's steps again, exactly.
func replayJoins(t *testing.T, cfg checkkit.Config, s InformerSubject, tr *traces.Trace) (bool, error) {
	if len(tr.Steps) == 0 || !strings.HasPrefix(tr.Steps[0].Want, joinsPrefix) {
		return false, nil
	}
	watchList := strings.TrimPrefix(tr.Steps[0].Want, joinsPrefix) == "true"
	var steps []joinStep
	for _, st := range tr.Steps[1:] {
		if st.Op == "finish" {
			break
		}
		i := -1
		for j, n := range joinNames {
			if n == st.Op {
				i = j
			}
		}
		if i < 0 {
			return true, fmt.Errorf("reflector: trace step %q is not a join step", st.Op)
		}
		steps = append(steps, joinStep(i))
	}
	_, _, err := runJoins(t, cfg, s, watchList, steps)
	if err == nil {
		return true, nil
	}
	var v *checkkit.Violation
	if errors.As(err, &v) {
		v.Trace = nil // replayed: the trace is the one given
	}
	return true, err
}
