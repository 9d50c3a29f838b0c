package vectors

import (
	"math/rand/v2"
	"strconv"
	"time"

	prw "github.com/kverify/kverify/props/retrywatcher"
	spec "github.com/kverify/kverify/spec/retrywatcher"
	"github.com/kverify/kverify/traces"
)

// The RetryWatcher's vectors (retrywatcher/model): a server script in fake
// time and what the watcher must do. Params initial_rv is the version it
// starts from. Steps:
//
//   - Watch: the watcher's next watch call, which must come at or after
//     want.ns (fake time since New) and within a minute of it, and ask for
//     want.value (the resourceVersion) with allowWatchBookmarks want.flag;
//     the next step answers it: Open (a stream) or Refuse.
//   - Open: the pending call gets a stream.
//   - Refuse (value: the status code, "0" for a failure that is not a
//     Status, such as EOF), Event (events: one watch event, type and the
//     object's key and value, its version; value "" for none; or a
//     BOOKMARK's rv), Error (value: the Status code; ns: its
//     RetryAfterSeconds in ns), ErrorNotStatus (an Error event whose
//     object is not a Status), Close (the server ends the stream), Stop
//     (the consumer calls Stop, twice; a watch call pending then is
//     answered with a failure, as a server would in time, so that a
//     watcher whose calls take no context ends too): want.deltas are the
//     events the consumer then receives, in order (an ERROR's value is
//     its Status code), want.n their number, and want.flag whether the
//     result channel is then closed.
//
// Even seeds draw up to 25 steps as retrywatcher/model does; odd ones
// take up to prw.ExhaustiveLen+2 steps of retrywatcher/exhaustive's
// alphabet.
func retrywatcherVector(seed uint64) traces.Vector {
	r := rng(seed)
	check := prw.CheckModel
	var sc prw.Script
	if seed%2 == 0 {
		initial := 1 + r.IntN(1000)
		sc.Initial = strconv.Itoa(initial)
		next := initial
		for range 1 + r.IntN(25) {
			sc.Steps = append(sc.Steps, retrywatcherStep(r, &next))
		}
	} else {
		check = prw.CheckExhaustive
		alphabet := prw.Alphabet()
		var steps []spec.Step
		for range 1 + r.IntN(prw.ExhaustiveLen+2) {
			s := alphabet[r.IntN(len(alphabet))]
			if s.Kind == spec.StopCalled {
				// A plain Stop: whether an unread event is still
				// delivered before the close is the subject's choice, not
				// an outcome a vector can state.
				s.RV = ""
			}
			steps = append(steps, s)
		}
		sc = prw.ScriptOf(steps)
	}
	m, err := spec.New(sc.Initial)
	if err != nil {
		panic(err)
	}
	var steps []traces.VStep
	var at time.Duration // fake time: it moves only to the next watch's earliest instant
	for _, s := range sc.Steps {
		if m.Phase == spec.Ended {
			break
		}
		if s.Kind != spec.StopCalled && (m.Phase == spec.Waiting || !m.Opened) {
			if m.Phase == spec.Waiting {
				at = max(at, m.Next)
			}
			var req spec.Request
			if m, req, err = m.Watch(at); err != nil {
				panic(err)
			}
			steps = append(steps, traces.VStep{Op: "Watch", Want: &traces.Want{Value: str(req.RV), Flag: boolp(req.Bookmarks), NS: i64d(at)}})
			if s.Kind != spec.Refused {
				steps = append(steps, traces.VStep{Op: "Open"})
			}
		} else if s.Kind == spec.Refused {
			continue // a stream is open: no call to refuse
		}
		var out *spec.Out
		if m, out, err = m.Apply(s, at); err != nil {
			panic(err)
		}
		v := retrywatcherInput(s)
		want := &traces.Want{N: i64(0), Flag: boolp(m.Phase == spec.Ended)}
		if out != nil {
			d := traces.VDelta{Type: string(out.Type)}
			switch {
			case out.Type == spec.Error:
				d.Value = str(strconv.Itoa(out.Code))
			default:
				d.Key, d.Value = str("ns/a"), str(out.RV)
			}
			want.Deltas, want.N = []traces.VDelta{d}, i64(1)
		}
		v.Want = want
		steps = append(steps, v)
	}
	initial, _ := strconv.Atoi(sc.Initial)
	return traces.Vector{Header: traces.Header{Profile: "client-go", Params: map[string]float64{"initial_rv": float64(initial)},
		Check: check, Guarantees: []string{prw.GResume, prw.GDelivery, prw.GEnd, prw.GRestart, prw.GStop}}, Steps: steps}
}

// retrywatcherStep draws what the server or consumer does, as the model
// check's generator does (a 410, 500 or 429 with a retry-after of 0-3 s).
func retrywatcherStep(r *rand.Rand, next *int) spec.Step {
	rv := func() string { *next++; return strconv.Itoa(*next) }
	switch k := r.IntN(100); {
	case k < 45:
		return spec.Step{Kind: spec.Event, Type: []spec.EventType{spec.Added, spec.Modified, spec.Deleted}[r.IntN(3)], RV: rv()}
	case k < 58:
		return spec.Step{Kind: spec.Event, Type: spec.Bookmark, RV: rv()}
	case k < 70:
		return spec.Step{Kind: spec.Closed}
	case k < 80:
		return spec.Step{Kind: spec.Event, Type: spec.Error, Code: []int{410, 500, 429}[r.IntN(3)], RetryAfter: time.Duration(r.IntN(4)) * time.Second}
	case k < 90:
		return spec.Step{Kind: spec.Refused, Code: []int{0, 410, 500, 401, 403}[r.IntN(5)]}
	case k < 93:
		return spec.Step{Kind: spec.Event, Type: spec.Error, NotStatus: true}
	case k < 95:
		return spec.Step{Kind: spec.Event, Type: spec.Added, RV: ""}
	case k < 97:
		return spec.Step{Kind: spec.Event, Type: "SURPRISE", RV: rv()}
	}
	return spec.Step{Kind: spec.StopCalled}
}

// retrywatcherInput is step s as a vector step, without its want.
func retrywatcherInput(s spec.Step) traces.VStep {
	switch s.Kind {
	case spec.Closed:
		return traces.VStep{Op: "Close"}
	case spec.StopCalled:
		return traces.VStep{Op: "Stop"}
	case spec.Refused:
		return traces.VStep{Op: "Refuse", Value: str(strconv.Itoa(s.Code))}
	}
	switch {
	case s.Type == spec.Error && s.NotStatus:
		return traces.VStep{Op: "ErrorNotStatus"}
	case s.Type == spec.Error:
		return traces.VStep{Op: "Error", Value: str(strconv.Itoa(s.Code)), NS: i64d(s.RetryAfter)}
	case s.Type == spec.Bookmark:
		return traces.VStep{Op: "Event", Events: []traces.VDelta{{Type: string(s.Type), RV: str(s.RV)}}}
	}
	return traces.VStep{Op: "Event", Events: []traces.VDelta{{Type: string(s.Type), Key: str("ns/a"), Value: str(s.RV)}}}
}
