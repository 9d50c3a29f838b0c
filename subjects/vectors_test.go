package subjects

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kverify/kverify/subjects/ours"

	pbo "github.com/kverify/kverify/props/backoff"
	"github.com/kverify/kverify/props/checkkit"
	prl "github.com/kverify/kverify/props/ratelimit"
	pring "github.com/kverify/kverify/props/ring"
	pwq "github.com/kverify/kverify/props/workqueue"
	"github.com/kverify/kverify/subjects/upstream"
	"github.com/kverify/kverify/traces"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"
)

func readVectors(t *testing.T, component string) []traces.Vector {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "traces", "vectors", "data", component+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	vs, err := traces.DecodeVectors(f)
	if err != nil {
		t.Fatal(err)
	}
	return vs
}

// replayQueueVector runs one work queue vector on q; the error names the
// first step whose outcome differs.
func replayQueueVector(q pwq.Queue, v traces.Vector) error {
	defer q.ShutDown()
	return replayQueueSteps(q, v)
}

// replayQueueSteps runs the vector's work queue steps on q.
func replayQueueSteps(q pwq.Queue, v traces.Vector) error {
	return replaySteps(v.Steps, func(s traces.VStep) (got traces.Want, err error) {
		switch s.Op {
		case "Add":
			q.Add(*s.Key)
		case "Done":
			q.Done(*s.Key)
		case "Get":
			k, sd := q.Get()
			got = traces.Want{Key: &k, Shutdown: &sd}
		case "Len":
			n := int64(q.Len())
			got = traces.Want{N: &n}
		case "ShutDown":
			q.ShutDown()
		case "ShutDownWithDrain":
			q.ShutDownWithDrain()
		case "ShuttingDown":
			f := q.ShuttingDown()
			got = traces.Want{Flag: &f}
		default:
			err = fmt.Errorf("unknown operation %q", s.Op)
		}
		return got, err
	})
}

func replayRingVector(r pring.Ring, v traces.Vector) error {
	return replaySteps(v.Steps, func(s traces.VStep) (got traces.Want, err error) {
		switch s.Op {
		case "Write":
			r.WriteOne(*s.Value)
		case "Read":
			x, ok := r.ReadOne()
			got = traces.Want{Value: &x, OK: &ok}
		case "Len":
			n := int64(r.Len())
			got = traces.Want{N: &n}
		case "Cap":
			n := int64(r.Cap())
			got = traces.Want{N: &n}
		default:
			err = fmt.Errorf("unknown operation %q", s.Op)
		}
		return got, err
	})
}

// replaySteps applies each step and compares what it returned with the
// step's want; the error names the first step that differs.
func replaySteps(steps []traces.VStep, apply func(traces.VStep) (traces.Want, error)) error {
	for i, s := range steps {
		got, err := apply(s)
		if err != nil {
			return fmt.Errorf("step %d: %v", i, err)
		}
		if s.Want != nil && !sameWant(*s.Want, got) {
			return fmt.Errorf("step %d %s: got %s, want %s", i, s.Op, wantString(got), wantString(*s.Want))
		}
	}
	return nil
}

func sameWant(a, b traces.Want) bool { return wantString(a) == wantString(b) }

func wantString(w traces.Want) string {
	s := ""
	add := func(name string, v any) { s += fmt.Sprintf("%s=%v ", name, v) }
	if w.Key != nil {
		add("key", *w.Key)
	}
	if w.Value != nil {
		add("value", *w.Value)
	}
	if w.OK != nil {
		add("ok", *w.OK)
	}
	if w.Shutdown != nil {
		add("shutdown", *w.Shutdown)
	}
	if w.Flag != nil {
		add("flag", *w.Flag)
	}
	if w.N != nil {
		add("n", *w.N)
	}
	if w.NS != nil {
		add("ns", time.Duration(*w.NS))
	}
	if w.Deltas != nil {
		// As the vector writes them: every field of every delta.
		b, err := json.Marshal(w.Deltas)
		if err != nil {
			b = []byte(err.Error())
		}
		add("deltas", string(b))
	}
	if w.Initial != nil {
		add("initial", *w.Initial)
	}
	if w.Synced != nil {
		add("synced", *w.Synced)
	}
	// The lists of informer and reflector vectors, as the vector writes
	// them.
	for _, l := range []struct {
		name string
		v    any
		n    int
	}{{"calls", w.Calls, len(w.Calls)}, {"objects", w.Objects, len(w.Objects)}, {"rvs", w.RVs, len(w.RVs)}} {
		if l.n == 0 {
			continue
		}
		b, err := json.Marshal(l.v)
		if err != nil {
			b = []byte(err.Error())
		}
		add(l.name, string(b))
	}
	return s
}

// TestVectorsOurs: our work queue and growing ring pass every golden
// vector meant for them (the Python replayer in examples/python replays
// the same files).
func TestVectorsOurs(t *testing.T) {
	for _, v := range readVectors(t, "workqueue") {
		if err := replayQueueVector(ours.Workqueue().New(pwq.Deps{Clock: clock.RealClock{}}), v); err != nil {
			t.Errorf("workqueue vector %d (%s): %v", v.Header.Seed, v.Header.Check, err)
		}
	}
	ran := 0
	for _, v := range readVectors(t, "ring") {
		if v.Header.Profile != "doubling" {
			continue // the shrinking Ring's normal size varies per vector; ours has no such ring
		}
		ran++
		if err := replayRingVector(ours.Ring().New(int(v.Header.Params["initial"])), v); err != nil {
			t.Errorf("ring vector %d (%s): %v", v.Header.Seed, v.Header.Check, err)
		}
	}
	if ran < 100 {
		t.Errorf("only %d doubling ring vectors", ran)
	}
}

// TestVectorsUpstream: client-go's queue fails exactly vectors of the
// checks it declares divergences for (a drain that does not wait for
// queued items, Done re-queueing an unheld item), and passes the rest.
func TestVectorsUpstream(t *testing.T) {
	checkVectorReplays(t, "workqueue", readVectors(t, "workqueue"), pinned(upstream.WorkqueueDivergences), []string{pwq.CheckDoneUnheld}, []vectorSubject{
		{name: Upstream, replay: func(v traces.Vector) error {
			return replayQueueVector(upstream.Workqueue().New(pwq.Deps{Clock: clock.RealClock{}}), v)
		}},
	})
}

// replayLimiterVector runs a rate limiter vector on the subject's
// limiter of the vector's kind.
func replayLimiterVector(s prl.Subject, v traces.Vector) error {
	p := v.Header.Params
	var l prl.Limiter
	var err error
	switch v.Header.Check {
	case "ratelimit/exponential":
		l, err = s.Exponential(time.Duration(p["base_ns"]), time.Duration(p["max_ns"]))
	case "ratelimit/fastslow":
		l, err = s.FastSlow(time.Duration(p["fast_ns"]), time.Duration(p["slow_ns"]), int(p["max_fast"]))
	default:
		return fmt.Errorf("unknown vector check %q", v.Header.Check)
	}
	if err != nil {
		return err
	}
	return replaySteps(v.Steps, func(st traces.VStep) (got traces.Want, err error) {
		switch st.Op {
		case "When":
			d := int64(l.When(*st.Key))
			got = traces.Want{NS: &d}
		case "NumRequeues":
			n := int64(l.NumRequeues(*st.Key))
			got = traces.Want{N: &n}
		case "Forget":
			l.Forget(*st.Key)
		default:
			err = fmt.Errorf("unknown operation %q", st.Op)
		}
		return got, err
	})
}

// replayBackoffVector runs a backoff vector on the subject, with jitter 0
// and, for a Delay, a fake clock the Sleep steps advance.
func replayBackoffVector(s pbo.Subject, v traces.Vector) error {
	p := v.Header.Params
	params := pbo.Params{Duration: time.Duration(p["duration_ns"]), Factor: p["factor"], Steps: int(p["steps"]), Cap: time.Duration(p["cap_ns"])}
	zero := func() float64 { return 0 }
	var next func() time.Duration
	fc := clocktesting.NewFakeClock(time.Unix(0, 0))
	switch v.Header.Check {
	case "backoff/sequence":
		b, err := s.New(params)
		if err != nil {
			return err
		}
		next = func() time.Duration { return b.Step(zero) }
	case "backoff/reset":
		if s.NewDelay == nil {
			return nil
		}
		d, err := s.NewDelay(params, fc, time.Duration(p["reset_ns"]), zero)
		if err != nil {
			return err
		}
		next = d.Next
	default:
		return fmt.Errorf("unknown vector check %q", v.Header.Check)
	}
	return replaySteps(v.Steps, func(st traces.VStep) (got traces.Want, err error) {
		switch st.Op {
		case "Sleep":
			fc.Step(time.Duration(*st.NS))
		case "Step", "Next":
			d := int64(next())
			got = traces.Want{NS: &d}
		default:
			err = fmt.Errorf("unknown operation %q", st.Op)
		}
		return got, err
	})
}

// TestVectorsLimitersAndBackoff: ours and client-go's rate limiters and
// backoffs pass every rate limiter and backoff vector, except where
// client-go declares a divergence.
func TestVectorsLimitersAndBackoff(t *testing.T) {
	divs := slices.Concat(pinned(upstream.WorkqueueDivergences), pinned(upstream.BackoffDivergences))
	for _, sub := range []struct {
		name string
		rl   prl.Subject
		bo   pbo.Subject
	}{{Ours, ours.Limiters(), ours.Backoff()}, {Upstream, upstream.Limiters(), upstream.Backoff()}} {
		checkVectorReplays(t, "ratelimit", readVectors(t, "ratelimit"), divs, nil, []vectorSubject{
			{name: sub.name, replay: func(v traces.Vector) error { return replayLimiterVector(sub.rl, v) }},
		})
		checkVectorReplays(t, "backoff", readVectors(t, "backoff"), divs, nil, []vectorSubject{
			{name: sub.name, replay: func(v traces.Vector) error { return replayBackoffVector(sub.bo, v) }},
		})
	}
}

// replayDelayingVector runs a delaying queue vector inside a synctest
// bubble: Sleep moves the bubble's clock and waits until the queue has
// moved every item that became ready.
func replayDelayingVector(t *testing.T, newQ func(pwq.Deps) pwq.Delaying, v traces.Vector) (err error) {
	synctest.Test(t, func(*testing.T) {
		q := newQ(pwq.Deps{Clock: clock.RealClock{}})
		defer q.ShutDown()
		for i, s := range v.Steps {
			switch s.Op {
			case "AddAfter":
				q.AddAfter(*s.Key, time.Duration(*s.NS))
				synctest.Wait()
				continue
			case "Sleep":
				time.Sleep(time.Duration(*s.NS))
				synctest.Wait()
				continue
			}
			one := traces.Vector{Steps: []traces.VStep{s}}
			if e := replayQueueSteps(q, one); e != nil {
				err = fmt.Errorf("step %d: %v", i, e)
				return
			}
		}
	})
	return err
}

// TestVectorsDelaying: our delaying queue passes every delaying vector;
// client-go's fails only ties vectors, its declared divergence (an
// unstable heap).
func TestVectorsDelaying(t *testing.T) {
	replayOn := func(newQ func(pwq.Deps) pwq.Delaying) func(traces.Vector) error {
		return func(v traces.Vector) error { return replayDelayingVector(t, newQ, v) }
	}
	checkVectorReplays(t, "delaying", readVectors(t, "delaying"), pinned(upstream.DelayingDivergences), []string{pwq.CheckDelayingTies}, []vectorSubject{
		{name: Ours, replay: replayOn(ours.Workqueue().NewDelaying)},
		{name: Upstream, replay: replayOn(upstream.Workqueue().NewDelaying)},
	})
}

// TestReplayStepsCompares: every field of a want is compared (a vector
// replay that compared nothing would pass any implementation), and equal
// outcomes match.
func TestReplayStepsCompares(t *testing.T) {
	a, b, yes, no, one, two := "a", "b", true, false, int64(1), int64(2)
	delta := func(change func(*traces.VDelta)) []traces.VDelta {
		ds := []traces.VDelta{{Type: "Added", Key: &a, Value: &a}, {Type: "ReplacedAll", RV: &a, Objects: []traces.VObject{{Key: "a", Value: "a"}}}}
		change(&ds[0])
		change(&ds[1])
		return ds
	}
	same := func(*traces.VDelta) {}
	for _, c := range []struct{ want, got traces.Want }{
		{traces.Want{Key: &a}, traces.Want{Key: &b}},
		{traces.Want{Value: &a}, traces.Want{Value: &b}},
		{traces.Want{OK: &yes}, traces.Want{OK: &no}},
		{traces.Want{Shutdown: &yes}, traces.Want{Shutdown: &no}},
		{traces.Want{Flag: &yes}, traces.Want{Flag: &no}},
		{traces.Want{N: &one}, traces.Want{N: &two}},
		{traces.Want{NS: &one}, traces.Want{NS: &two}},
		{traces.Want{Initial: &yes}, traces.Want{Initial: &no}},
		{traces.Want{Synced: &yes}, traces.Want{Synced: &no}},
		{traces.Want{Deltas: delta(same)}, traces.Want{Deltas: delta(same)[:1]}},
		{traces.Want{Deltas: delta(same)}, traces.Want{Deltas: delta(func(d *traces.VDelta) { d.Type = "Updated" })}},
		{traces.Want{Deltas: delta(same)}, traces.Want{Deltas: delta(func(d *traces.VDelta) { d.Key = &b })}},
		{traces.Want{Deltas: delta(same)}, traces.Want{Deltas: delta(func(d *traces.VDelta) { d.Value = &b })}},
		{traces.Want{Deltas: delta(same)}, traces.Want{Deltas: delta(func(d *traces.VDelta) { d.Gen = 1 })}},
		{traces.Want{Deltas: delta(same)}, traces.Want{Deltas: delta(func(d *traces.VDelta) { d.Tombstone = true })}},
		{traces.Want{Deltas: delta(same)}, traces.Want{Deltas: delta(func(d *traces.VDelta) { d.RV = &b })}},
		{traces.Want{Deltas: delta(same)}, traces.Want{Deltas: delta(func(d *traces.VDelta) { d.Objects = []traces.VObject{{Key: "a", Value: "b"}} })}},
		{traces.Want{Calls: []traces.VCall{{Handler: "h0", Call: "init", Key: "a", At: 1}}}, traces.Want{Calls: []traces.VCall{{Handler: "h0", Call: "init", Key: "a", At: 2}}}},
		{traces.Want{Calls: []traces.VCall{{Handler: "h0", Call: "init", Key: "a"}}}, traces.Want{Calls: []traces.VCall{{Handler: "h1", Call: "init", Key: "a"}}}},
		{traces.Want{Calls: []traces.VCall{{Handler: "h0", Call: "init", Key: "a"}}}, traces.Want{Calls: []traces.VCall{{Handler: "h0", Call: "add", Key: "a"}}}},
		{traces.Want{Calls: []traces.VCall{{Handler: "h0", Call: "init", Key: "a"}}}, traces.Want{Calls: []traces.VCall{{Handler: "h0", Call: "init", Key: "b"}}}},
		{traces.Want{Calls: []traces.VCall{{Handler: "h0", Call: "init", Key: "a"}}}, traces.Want{}},
		{traces.Want{Objects: []traces.VObject{{Key: "a", Value: "1"}}}, traces.Want{Objects: []traces.VObject{{Key: "a", Value: "2"}}}},
		{traces.Want{Objects: []traces.VObject{{Key: "a", Value: "1"}}}, traces.Want{}},
		{traces.Want{RVs: []string{"1", "2"}}, traces.Want{RVs: []string{"1"}}},
	} {
		run := func(got traces.Want) error {
			w := c.want
			return replaySteps([]traces.VStep{{Op: "X", Want: &w}}, func(traces.VStep) (traces.Want, error) { return got, nil })
		}
		if run(c.got) == nil {
			t.Errorf("want %s matched %s", wantString(c.want), wantString(c.got))
		}
		if err := run(c.want); err != nil {
			t.Errorf("want %s did not match itself: %v", wantString(c.want), err)
		}
	}
}

// vectorSubject is one implementation a component's vectors replay on.
// confirm, if set, is asked about each vector upstream fails under a
// declared divergence: it returns an error when the failure is not the
// declared one.
type vectorSubject struct {
	name    string
	replay  func(traces.Vector) error
	confirm func(traces.Vector) error
}

// checkVectorReplays replays vs on each subject. Ours must pass every
// vector; upstream may fail only vectors of a check it declares a
// divergence for (divs), and must fail at least one vector of each check
// in mustShow, or the vectors miss the declared case.
func checkVectorReplays(t *testing.T, component string, vs []traces.Vector, divs []checkkit.Divergence, mustShow []string, subs []vectorSubject) {
	t.Helper()
	declared := map[string]bool{}
	for _, d := range divs {
		declared[d.Check] = true
	}
	for _, sub := range subs {
		failed, first := map[string]int{}, map[string]string{}
		for _, v := range vs {
			err := sub.replay(v)
			if err == nil {
				continue
			}
			if failed[v.Header.Check]++; first[v.Header.Check] == "" {
				first[v.Header.Check] = fmt.Sprintf("vector %d: %v", v.Header.Seed, err)
			}
			switch {
			case sub.name == Ours || !declared[v.Header.Check]:
				t.Errorf("%s fails %s vector %d (%s): %v", sub.name, component, v.Header.Seed, v.Header.Check, err)
			case sub.confirm != nil:
				if err := sub.confirm(v); err != nil {
					t.Errorf("%s fails %s vector %d (%s) also where the declared divergence cannot show: %v", sub.name, component, v.Header.Seed, v.Header.Check, err)
				}
			}
		}
		t.Logf("%s %s: %d vectors, failed per check: %v", sub.name, component, len(vs), failed)
		for ch, msg := range first {
			t.Logf("  %s, first failure of %s: %s", sub.name, ch, msg)
		}
		if sub.name != Upstream {
			continue
		}
		for _, ch := range mustShow {
			if failed[ch] == 0 {
				t.Errorf("client-go passes every %s vector, but declares a divergence for it: the vectors miss the case", ch)
			}
		}
	}
}

// vectorChecks counts vs per check, and fails t for a vector naming a
// check that is not in checks.
func vectorChecks(t *testing.T, component string, vs []traces.Vector, checks []checkkit.Check) map[string]int {
	t.Helper()
	names := map[string]bool{}
	for _, c := range checks {
		names[c.Name] = true
	}
	n := map[string]int{}
	for _, v := range vs {
		n[v.Header.Check]++
		if !names[v.Header.Check] {
			t.Errorf("%s vector %d names check %q, which the %s suite does not have", component, v.Header.Seed, v.Header.Check, component)
		}
	}
	return n
}

// covered returns the checks of divs that have vectors (counts from
// vectorChecks): a divergence declared for such a check must show in one.
func covered(divs []checkkit.Divergence, counts map[string]int) []string {
	var out []string
	for _, d := range divs {
		if counts[d.Check] > 0 && !slices.Contains(out, d.Check) {
			out = append(out, d.Check)
		}
	}
	return out
}

// pinned is the declarations of ds that hold for the pinned release (the
// vectors replay on it); the others belong to older releases.
func pinned(ds []checkkit.Divergence) []checkkit.Divergence {
	return upstream.ForRelease(ds, upstream.Release)
}
