package reflector

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kverify/kverify/props/checkkit"
	"github.com/kverify/kverify/props/modelserver"
	"github.com/kverify/kverify/spec/apiserver"
	sinf "github.com/kverify/kverify/spec/informer"
	"github.com/kverify/kverify/traces"
)

// CheckAssembledResyncOrders enumerates the orders in which handlers with
// different resync periods join, Run starts and the first sync lands.
const CheckAssembledResyncOrders = "assembled/resync-orders"

// assembled/resync-orders closes what assembled/resync's one timeline
// leaves open (issue 41, items 2 and 10): handlers asking for different
// resync periods join in every order, before Run, between Run and the
// first sync, and after it; the server's answer to the first request,
// which the informer's resync timer waits for, comes before or after time
// has passed. Those are the choices the check owns about when the
// informer's goroutines first run: the reflector's is held at its first
// request, the resync timer's is armed only once that request is
// answered, and the listeners' first calls come with the sync. Every
// sequence is played to the end (the sync, and 12.35s of resync checks)
// and compared, at every step and every check, with spec/informer.Resync.

// orderStep is one choice of assembled/resync-orders.
type orderStep uint8

// The steps: a handler joins asking for one of the periods (the
// informer's default 4s through AddEventHandler, 300ms, 2.5s, 6s; a
// period of 0 is assembled/resync's);
// Run; the server answers the held first request; 700ms pass.
const (
	oJoinDefault orderStep = iota
	oJoin300ms
	oJoin2500ms
	oJoin6s
	oRun
	oRelease
	oAdvance
)

var orderNames = [...]string{"join default (4s)", "join 300ms", "join 2.5s", "join 6s", "Run", "Release", "advance 700ms"}

func (s orderStep) String() string { return orderNames[s] }

var orderAlphabet = []orderStep{oJoinDefault, oJoin300ms, oJoin2500ms, oJoin6s, oRun, oRelease, oAdvance}

// orderJoins are the handlers the join steps add, by step.
var orderJoins = [...]rsJoin{
	oJoinDefault: {dflt: true, comment: "default period (4s)"},
	oJoin300ms:   {period: 300 * time.Millisecond, comment: "300ms: 1s, lowers the check period before Run"},
	oJoin2500ms:  {period: 2500 * time.Millisecond, comment: "2.5s"},
	oJoin6s:      {period: 6 * time.Second, comment: "6s: above the check period"},
}

// The bounds: at most orderMaxJoins handlers and orderMaxAdvances steps
// of orderAdvance; orderDepth steps (KVERIFY_DEEPER adds to it: more
// handlers and more time). Steps fall on multiples of 700ms and resync
// checks on the sync's instant plus multiples of 1s, 2.5s or 4s, so no
// step meets a check (rsRun.advance panics if one does); the end,
// orderEnd, meets none either.
const (
	orderMaxJoins    = 2
	orderMaxAdvances = 2
	orderDepth       = orderMaxJoins + orderMaxAdvances + 2
	orderAdvance     = 700 * time.Millisecond
	orderEnd         = 12350 * time.Millisecond
)

// oworld is one run of assembled/resync-orders.
type oworld struct {
	*rsRun
	started, released, synced bool
	joins, advances           int
	maxJoins, maxAdvances     int
}

func (x *oworld) enabled(s orderStep) bool {
	switch s {
	case oRun:
		return !x.started
	case oRelease:
		return !x.released
	case oAdvance:
		return x.advances < x.maxAdvances
	}
	return x.joins < x.maxJoins
}

// apply takes one step and compares every handler's calls with the
// model's: rounds as time passes, the initial list to every handler at the
// sync and to a handler joining after it, nothing else.
func (x *oworld) apply(rec *checkkit.Recorder, s orderStep) {
	switch s {
	case oRun:
		x.m.Run()
		x.w.run()
		x.started = true
	case oRelease:
		x.w.srv.Release()
		x.released = true
	case oAdvance:
		x.advances++
		rec.Step(s.String(), "", "")
		x.advance(time.Duration(x.advances) * orderAdvance)
		x.expect(s.String(), func(int) []hcall { return nil })
		return
	default:
		x.joins++
		rec.Step(s.String(), "", "")
		x.join(rec, orderJoins[s])
		synctest.Wait()
		n := len(x.w.viewers) - 1
		x.expect(s.String(), func(i int) []hcall {
			if i == n && x.synced {
				return initialAdds(x.w.current())
			}
			return nil
		})
		return
	}
	rec.Step(s.String(), "", "")
	synctest.Wait()
	syncs := !x.synced && x.started && x.released
	if syncs {
		x.synced = true
		x.m.Arm(time.Now())
	}
	x.expect(s.String(), func(int) []hcall {
		if syncs {
			return initialAdds(x.w.current())
		}
		return nil
	})
}

// key is the model's state: where the run is, the check period, when the
// timer was armed, and each handler's periods and next due time, as a set
// (handlers are interchangeable).
func (x *oworld) key() string {
	var b strings.Builder
	fmt.Fprintf(&b, "run=%v released=%v advanced=%d check=%v", x.started, x.released, x.advances, x.m.CheckPeriod())
	if at, ok := x.m.Armed(); ok {
		fmt.Fprintf(&b, " armed=%v", at.Sub(x.t0))
	}
	hs := make([]string, x.m.Len())
	for i := range hs {
		h := x.m.Handler(i)
		hs[i] = fmt.Sprintf("%v/%v/%v", h.Requested, h.Effective, h.Next.Sub(x.t0))
	}
	slices.Sort(hs)
	fmt.Fprintf(&b, " handlers=%v joins=%d", hs, x.joins)
	return b.String()
}

// finish lets the server answer and runs the informer if the steps did
// not, then plays the resync checks to orderEnd, and stops it.
func (x *oworld) finish(rec *checkkit.Recorder) {
	if !x.released {
		x.apply(rec, oRelease)
	}
	if !x.started {
		x.apply(rec, oRun)
	}
	x.advance(orderEnd)
	rec.Step(fmt.Sprintf("advance to %v", orderEnd), "", "")
	x.w.views(x.w.current())
	x.w.stop(true)
}

// resyncOrders runs assembled/resync-orders, by LIST and by watch-list.
func resyncOrders(s InformerSubject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, cfg checkkit.Config) error {
		deeper := cfg.Deeper()
		sp := checkkit.Space[orderStep]{Name: "join, Run, answer and time steps", Steps: orderAlphabet, Depth: orderDepth}
		bound := fmt.Sprintf(" (at most %d joins and %d advances)", orderMaxJoins+deeper/2, orderMaxAdvances+(deeper+1)/2)
		return exploreModes(t, cfg, s, sp, bound, func(watchList bool, steps []orderStep) (string, []int, error) {
			return runOrders(t, cfg, s, watchList, steps, deeper)
		})
	}
}

// ordersPrefix starts the Want of a resync-orders trace's first step.
const ordersPrefix = "resync-orders watch-list="

// runOrders plays steps on a fresh informer, then finishes the run, and
// returns the model's state after the steps and the steps enabled there.
func runOrders(t *testing.T, cfg checkkit.Config, s InformerSubject, watchList bool, steps []orderStep, deeper int) (key string, enabled []int, err error) {
	err = checkkit.Scenario(t, cfg, fmt.Sprintf("resync orders (watch-list %v)", watchList), func(rec *checkkit.Recorder) error {
		rec.Step(fmt.Sprintf("informer watch-list=%v, default resync %v, 3 objects, first request held", watchList, rsDefault), ordersPrefix+fmt.Sprint(watchList), "")
		fail := checkkit.ScenarioFail(rec)
		srv := modelserver.NewServer(apiserver.Config{}, []modelserver.Fault{{Hold: true}})
		seed(srv, 3)
		x := &oworld{rsRun: &rsRun{w: newIWorld(fail, s, srv, watchList, rsDefault), m: sinf.NewResync(rsDefault), t0: time.Now(), fail: fail},
			maxJoins: orderMaxJoins + deeper/2, maxAdvances: orderMaxAdvances + (deeper+1)/2}
		defer x.w.stop(false)
		defer srv.Release()
		for _, st := range steps {
			x.apply(rec, st)
		}
		key = x.key()
		for i, st := range orderAlphabet {
			if x.enabled(st) {
				enabled = append(enabled, i)
			}
		}
		x.finish(rec)
		return nil
	})
	return key, enabled, err
}

// replayOrders runs a saved assembled/resync-orders trace's steps again.
func replayOrders(t *testing.T, cfg checkkit.Config, s InformerSubject, tr *traces.Trace) (bool, error) {
	if len(tr.Steps) < 2 || !strings.HasPrefix(tr.Steps[1].Want, ordersPrefix) {
		return false, nil
	}
	watchList := strings.TrimPrefix(tr.Steps[1].Want, ordersPrefix) == "true"
	var steps []orderStep
	for _, st := range tr.Steps[2:] {
		if strings.HasPrefix(st.Op, "advance to ") {
			break // the finish
		}
		// A join's description (rsRun.join) is not a step; a Release
		// or Run the finish added replays the same.
		if i := slices.Index(orderNames[:], st.Op); i >= 0 {
			steps = append(steps, orderStep(i))
		}
	}
	_, _, err := runOrders(t, cfg, s, watchList, steps, cfg.Deeper())
	if err == nil {
		return true, nil
	}
	var v *checkkit.Violation
	if errors.As(err, &v) {
		v.Trace = nil
	}
	return true, err
}
