package subjects

import (
	"cmp"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kverify/kverify/subjects/ours"

	pinf "github.com/kverify/kverify/props/informer"
	"github.com/kverify/kverify/subjects/upstream"
	"github.com/kverify/kverify/traces"
)

// vectorHandler records the calls one handler of an informer vector gets,
// with the fake time each started, in the vector's notation.
type vectorHandler struct {
	name string
	t0   time.Time

	mu    sync.Mutex
	calls []traces.VCall
	seen  int // calls already reported by a step
}

func (h *vectorHandler) record(call, key string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.calls = append(h.calls, traces.VCall{Handler: h.name, Call: call, Key: key, At: int64(time.Since(h.t0))})
}

// OnAdd records an initial-list add as "init", any other as "add".
func (h *vectorHandler) OnAdd(key string, isInInitialList bool) {
	if isInInitialList {
		h.record("init", key)
	} else {
		h.record("add", key)
	}
}

// OnUpdate records an update of key; one whose old and new objects have
// different keys (no vector expects it) is recorded as "old>new", so
// that it shows in the mismatch.
func (h *vectorHandler) OnUpdate(oldKey, newKey string) {
	if oldKey != newKey {
		newKey = oldKey + ">" + newKey
	}
	h.record("update", newKey)
}

// OnDelete records a delete of key.
func (h *vectorHandler) OnDelete(key string) { h.record("delete", key) }

// since returns the calls not reported yet in the vectors' order (by
// time, then key: within one step the calls a handler gets at one
// instant are a set) and marks them reported.
func (h *vectorHandler) since() []traces.VCall {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := slices.Clone(h.calls[h.seen:])
	h.seen = len(h.calls)
	slices.SortStableFunc(out, func(a, b traces.VCall) int {
		return cmp.Or(cmp.Compare(a.At, b.At), cmp.Compare(a.Key, b.Key))
	})
	return out
}

// replayInformerVector runs an informer vector on a fan-out the subject
// makes with NewResync, inside a synctest bubble: Sleep moves the
// bubble's clock, and after every step the bubble is let settle
// (synctest.Wait: every goroutine of the fan-out is durably blocked), so
// that what the step delivered has been delivered. The error names the
// first step whose calls differ.
func replayInformerVector(t *testing.T, s pinf.Subject, v traces.Vector) (err error) {
	synctest.Test(t, func(*testing.T) {
		t0 := time.Now()
		f := s.NewResync(time.Duration(v.Header.Params["check_ns"]))
		defer f.Stop()
		var order []*vectorHandler
		byName := map[string]*vectorHandler{}
		regs := map[string]pinf.Registration{}
		err = replaySteps(v.Steps, func(st traces.VStep) (got traces.Want, err error) {
			if st.Key == nil && st.Op != "Start" && st.Op != "Sleep" {
				return got, fmt.Errorf("%s without a key", st.Op)
			}
			switch st.Op {
			case "AddHandler":
				name := *st.Key
				if byName[name] != nil {
					return got, fmt.Errorf("handler %s added twice", name)
				}
				h := &vectorHandler{name: name, t0: t0}
				var reg pinf.Registration
				if st.NS == nil {
					reg, err = f.AddHandler(h)
				} else {
					reg, err = f.AddHandlerWithResync(h, time.Duration(*st.NS))
				}
				if err != nil {
					return got, err
				}
				order, byName[name], regs[name] = append(order, h), h, reg
			case "RemoveHandler":
				reg, ok := regs[*st.Key]
				if !ok {
					return got, fmt.Errorf("no handler %s", *st.Key)
				}
				if err := f.RemoveHandler(reg); err != nil {
					return got, err
				}
			case "Add":
				f.Emit(pinf.Add, *st.Key)
			case "Update":
				f.Emit(pinf.Update, *st.Key)
			case "Delete":
				f.Emit(pinf.Delete, *st.Key)
			case "Start":
				f.Start()
			case "Sleep":
				if st.NS == nil {
					return got, fmt.Errorf("Sleep without ns")
				}
				time.Sleep(time.Duration(*st.NS))
			default:
				return got, fmt.Errorf("unknown operation %q", st.Op)
			}
			synctest.Wait()
			var calls []traces.VCall
			for _, h := range order {
				calls = append(calls, h.since()...)
			}
			n := int64(len(calls))
			return traces.Want{N: &n, Calls: calls}, nil
		})
	})
	return err
}

// TestVectorsInformer: our informer fan-out passes every informer
// (resync) vector; client-go's shared informer fails only vectors of the
// checks it declares a divergence for (none of the resync checks: so
// none), and a declared divergence of a check that has vectors shows in
// at least one. Every vector names a check the informer suite has.
func TestVectorsInformer(t *testing.T) {
	vs := readVectors(t, pinf.Component)
	counts := vectorChecks(t, "informer", vs, pinf.Checks(ours.Informer()))
	for _, want := range []string{pinf.CheckResyncSchedule, pinf.CheckResyncSyncOnly} {
		if counts[want] == 0 {
			t.Errorf("no informer vector of %s", want)
		}
	}
	replayOn := func(s pinf.Subject) func(traces.Vector) error {
		return func(v traces.Vector) error { return replayInformerVector(t, s, v) }
	}
	checkVectorReplays(t, "informer", vs, pinned(upstream.InformerDivergences), covered(pinned(upstream.InformerDivergences), counts), []vectorSubject{
		{name: Ours, replay: replayOn(ours.Informer())}, {name: Upstream, replay: replayOn(upstream.Informer())},
	})
}

// TestVectorsInformerCompares: an informer vector with one outcome
// changed (a call's time, key, kind or handler, a call fewer, the count)
// or one input changed (a handler's requested period) fails on ours, so
// the replay compares what the informer did, not what the vector says.
func TestVectorsInformerCompares(t *testing.T) {
	vs := readVectors(t, pinf.Component)
	type change struct {
		name  string
		apply func(*traces.VStep) bool // false: not applicable to this step
	}
	firstCall := func(s *traces.VStep, op string) *traces.VCall {
		if s.Op != op || s.Want == nil || len(s.Want.Calls) == 0 {
			return nil
		}
		return &s.Want.Calls[0]
	}
	changes := []change{
		{"a round's time", func(s *traces.VStep) bool {
			c := firstCall(s, "Sleep")
			if c == nil {
				return false
			}
			c.At += int64(time.Millisecond)
			return true
		}},
		{"a resynced key", func(s *traces.VStep) bool {
			c := firstCall(s, "Sleep")
			if c == nil {
				return false
			}
			c.Key += "x"
			return true
		}},
		{"an initial add's kind", func(s *traces.VStep) bool {
			c := firstCall(s, "Start")
			if c == nil {
				return false
			}
			c.Call = "add"
			return true
		}},
		{"the handler an event reaches", func(s *traces.VStep) bool {
			c := firstCall(s, "Update")
			if c == nil {
				return false
			}
			c.Handler += "x"
			return true
		}},
		{"a round's call fewer", func(s *traces.VStep) bool {
			if firstCall(s, "Sleep") == nil {
				return false
			}
			s.Want.Calls = s.Want.Calls[1:]
			n := int64(len(s.Want.Calls))
			s.Want.N = &n
			return true
		}},
		{"a quiet step's count", func(s *traces.VStep) bool {
			if s.Op != "Sleep" || s.Want == nil || len(s.Want.Calls) != 0 {
				return false
			}
			n := int64(1)
			s.Want.N = &n
			return true
		}},
		{"a requested period", func(s *traces.VStep) bool {
			if s.Op != "AddHandler" || s.NS == nil || *s.NS != int64(time.Second) {
				return false
			}
			d := int64(10 * time.Second)
			s.NS = &d
			return true
		}},
	}
	// A changed outcome must fail the first vector it applies to; a
	// changed period may not show in every vector (a handler removed
	// before its first round), so it must fail one of the first ten.
	for _, c := range changes {
		tried, failed := 0, false
		for _, v := range vs {
			if failed || tried == 10 {
				break
			}
			for i := range v.Steps {
				st := cloneStep(v.Steps[i])
				if !c.apply(&st) {
					continue
				}
				w := v
				w.Steps = slices.Clone(v.Steps)
				w.Steps[i] = st
				tried++
				if err := replayInformerVector(t, ours.Informer(), w); err != nil {
					failed = true
					t.Logf("%s: vector %d fails: %v", c.name, v.Header.Seed, err)
				}
				break
			}
		}
		switch {
		case failed:
		case tried == 0:
			t.Errorf("%s: no vector to change", c.name)
		default:
			t.Errorf("%s: ours passes %d vectors with it changed", c.name, tried)
		}
	}
}
