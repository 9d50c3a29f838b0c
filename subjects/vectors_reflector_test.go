package subjects

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"testing"
	"testing/synctest"

	"github.com/kverify/kverify/subjects/ours"

	"github.com/kverify/kverify/props/modelserver"
	prefl "github.com/kverify/kverify/props/reflector"
	"github.com/kverify/kverify/spec/apiserver"
	"github.com/kverify/kverify/subjects/upstream"
	"github.com/kverify/kverify/traces"
	"k8s.io/apimachinery/pkg/watch"
)

// replayReflectorVector runs a reflector vector on a reflector the
// subject builds, against props/modelserver's Server (spec/apiserver's model
// served through client-go's ListerWatcher), inside a synctest bubble:
// after every step the bubble is let settle, so that the reflector has
// handled every event the step made the server deliver. Before comparing
// the outcome it checks that the server delivered exactly the step's
// events on one watch: the vector's events assume client-go's requests,
// and a reflector that asked otherwise fails the vector there.
func replayReflectorVector(t *testing.T, s prefl.Subject, v traces.Vector) (err error) {
	on := func(param string) bool { return v.Header.Params[param] == 1 }
	// The server's answers: the list's version ("" or "0") on the first
	// request, the initial events' order on the watch (the first request,
	// streaming).
	list := modelserver.Fault{BlankRV: on("blank_rv"), ZeroRV: on("zero_rv")}
	faults := []modelserver.Fault{list, {Reverse: on("reverse")}}
	if on("stream") {
		faults = []modelserver.Fault{{Reverse: on("reverse")}}
	}
	synctest.Test(t, func(*testing.T) {
		srv := modelserver.NewServer(apiserver.Config{NoWatchList: !on("watch_list")}, faults)
		defer srv.Close()
		for i := range int(v.Header.Params["objects"]) {
			if err = srv.Create(fmt.Sprintf("default/o%03d", i)); err != nil {
				return
			}
		}
		store := prefl.NewStore()
		var r prefl.Reflector
		cancel, done := context.CancelFunc(func() {}), make(chan struct{})
		close(done)
		defer func() {
			cancel()
			<-done
		}()
		delivered, notified := 0, 0
		err = replaySteps(v.Steps, func(st traces.VStep) (got traces.Want, err error) {
			switch st.Op {
			case "Run":
				if r != nil {
					return got, fmt.Errorf("Run twice")
				}
				r, err = s.New(prefl.Setup{Server: srv, Store: store, WatchList: on("stream"), Clock: &prefl.Clock{},
					Rand: func() float64 { return 0 }})
				if err != nil {
					return got, err
				}
				var ctx context.Context
				ctx, cancel = context.WithCancel(context.Background())
				done = make(chan struct{})
				go func() {
					defer close(done)
					r.Run(ctx)
				}()
			case "Create", "Update", "Delete":
				if st.Key == nil {
					return got, fmt.Errorf("%s without a key", st.Op)
				}
				write := map[string]func(string) error{"Create": srv.Create, "Update": srv.Update, "Delete": srv.Delete}[st.Op]
				if err := write(*st.Key); err != nil {
					return got, err
				}
			case "Progress":
				srv.Progress()
			case "Bookmark":
				srv.Bookmark()
			default:
				return got, fmt.Errorf("unknown operation %q", st.Op)
			}
			synctest.Wait()
			if r == nil {
				return got, fmt.Errorf("%s before Run", st.Op)
			}
			if st.RV != nil && st.Op != "Run" {
				if rv, _ := srv.Current(); strconv.FormatInt(rv, 10) != *st.RV {
					return got, fmt.Errorf("the server is at version %d, the vector says %s", rv, *st.RV)
				}
			}
			if delivered, err = sameEvents(srv, delivered, st.Events); err != nil {
				return got, err
			}
			state := store.State()
			published := r.LastSyncResourceVersion()
			got = traces.Want{Value: &published, RVs: state.Notified[notified:]}
			notified = len(state.Notified)
			for _, k := range slices.Sorted(maps.Keys(state.Items)) {
				got.Objects = append(got.Objects, traces.VObject{Key: k, Value: strconv.FormatInt(state.Items[k], 10)})
			}
			return got, nil
		})
	})
	return err
}

// sameEvents checks that the server's one watch delivered, after the
// first seen events, exactly want (types and versions: a version names
// one write, so it names the key too), and returns how many it delivered.
func sameEvents(srv *modelserver.Server, seen int, want []traces.VDelta) (int, error) {
	from, evs := srv.Delivered()
	if len(from) > 1 {
		return seen, fmt.Errorf("the reflector opened %d watches (from %q); the vector assumes one that stays open", len(from), from)
	}
	var got []modelserver.Event
	if len(evs) == 1 {
		got = evs[0][seen:]
	}
	var wantEvs []modelserver.Event
	for _, e := range want {
		rv := e.RV
		if rv == nil {
			rv = e.Value
		}
		if rv == nil {
			return seen, fmt.Errorf("event %s without a version", e.Type)
		}
		wantEvs = append(wantEvs, modelserver.Event{Type: watch.EventType(e.Type), RV: *rv})
	}
	if !slices.Equal(got, wantEvs) {
		return seen, fmt.Errorf("the server delivered %v, the vector's step lists %v: the reflector asked other requests than client-go's, or the vector is not the model server's", got, wantEvs)
	}
	return seen + len(got), nil
}

// TestVectorsReflector: our reflector passes every reflector vector;
// client-go's fails only vectors of the checks it declares a divergence
// for (none of reflector/withholding and reflector/machine: so none),
// and a declared divergence of a check that has vectors shows in at
// least one. Every vector names a check the reflector suite has, and
// guarantees its violations name.
func TestVectorsReflector(t *testing.T) {
	vs := readVectors(t, prefl.Component)
	counts := vectorChecks(t, "reflector", vs, prefl.Checks(ours.Reflector()))
	guarantees := map[string]bool{}
	for _, g := range []string{prefl.GEarned, prefl.GPublish, prefl.GWithhold, prefl.GRequests,
		prefl.GReplace, prefl.GMalformed, prefl.GConverge, prefl.GCancel, prefl.GStops,
		prefl.GBackoff, prefl.GBound, prefl.GTimers, prefl.GResync} {
		guarantees[g] = true
	}
	for _, v := range vs {
		for _, g := range v.Header.Guarantees {
			if !guarantees[g] {
				t.Errorf("reflector vector %d names guarantee %q, which no reflector violation names", v.Header.Seed, g)
			}
		}
	}
	replayOn := func(s prefl.Subject) func(traces.Vector) error {
		return func(v traces.Vector) error { return replayReflectorVector(t, s, v) }
	}
	checkVectorReplays(t, "reflector", vs, pinned(upstream.ReflectorDivergences), covered(pinned(upstream.ReflectorDivergences), counts), []vectorSubject{
		{name: Ours, replay: replayOn(ours.Reflector())}, {name: Upstream, replay: replayOn(upstream.Reflector())},
	})
}

// TestVectorsReflectorCompares: a reflector vector with one outcome
// changed (the published version while withheld, after an event, a
// version handed to UpdateResourceVersion, a stored object's version, an
// object fewer) or one input changed (an event the step lists) fails on
// ours, so the replay compares what the reflector did, not what the
// vector says.
func TestVectorsReflectorCompares(t *testing.T) {
	vs := readVectors(t, prefl.Component)
	changes := []struct {
		name  string
		apply func(v traces.Vector, s *traces.VStep) bool
	}{
		{"the withheld version", func(v traces.Vector, s *traces.VStep) bool {
			if v.Header.Check != "reflector/withholding" || s.Op != "Create" || len(s.Want.RVs) > 0 {
				return false
			}
			s.Want.Value = s.RV // published as if not withheld
			return true
		}},
		{"the published version", func(_ traces.Vector, s *traces.VStep) bool {
			if s.Op != "Update" {
				return false
			}
			p := *s.Want.Value + "0"
			s.Want.Value = &p
			return true
		}},
		{"a notified version", func(_ traces.Vector, s *traces.VStep) bool {
			if len(s.Want.RVs) == 0 {
				return false
			}
			s.Want.RVs[0] += "0"
			return true
		}},
		{"no notification", func(_ traces.Vector, s *traces.VStep) bool {
			if s.Op != "Bookmark" || len(s.Want.RVs) == 0 {
				return false
			}
			s.Want.RVs = nil
			return true
		}},
		{"a stored version", func(_ traces.Vector, s *traces.VStep) bool {
			if len(s.Want.Objects) == 0 {
				return false
			}
			s.Want.Objects[0].Value += "0"
			return true
		}},
		{"an object fewer after Run", func(_ traces.Vector, s *traces.VStep) bool {
			if s.Op != "Run" || len(s.Want.Objects) == 0 {
				return false
			}
			s.Want.Objects = s.Want.Objects[1:]
			return true
		}},
		{"an event listed", func(_ traces.Vector, s *traces.VStep) bool {
			if len(s.Events) == 0 || s.Events[0].Type != "MODIFIED" {
				return false
			}
			s.Events[0].Type = "ADDED"
			return true
		}},
	}
	for _, c := range changes {
		done := false
		for _, v := range vs {
			for i := range v.Steps {
				st := cloneStep(v.Steps[i])
				if !c.apply(v, &st) {
					continue
				}
				w := v
				w.Steps = slices.Clone(v.Steps)
				w.Steps[i] = st
				err := replayReflectorVector(t, ours.Reflector(), w)
				if err == nil {
					t.Errorf("%s: ours passes vector %d with step %d changed", c.name, v.Header.Seed, i)
				} else {
					t.Logf("%s: vector %d fails: %v", c.name, v.Header.Seed, err)
				}
				done = true
				break
			}
			if done {
				break
			}
		}
		if !done {
			t.Errorf("%s: no vector to change", c.name)
		}
	}
}
