package workqueue

import (
	"fmt"
	"github.com/kverify/kverify/traces"
	"runtime"
	"strings"
	"testing"
	"unsafe"
	"weak"

	"github.com/kverify/kverify/props"
	"github.com/kverify/kverify/props/ratelimit"
	wq "github.com/kverify/kverify/spec/workqueue"
	"go.uber.org/goleak"
	"k8s.io/utils/clock"
	"pgregory.net/rapid"
)

// Component is this suite's name in traces and in kverify's table.
const Component = "workqueue"

// Check names, stable: divergences, traces and the kill matrix refer to them.
const (
	CheckModel      = "queue/model"
	CheckDrain      = "queue/drain"
	CheckDoneUnheld = "queue/done-unheld"
	CheckRetention  = "queue/retention"
	CheckLeak       = "queue/leak"
	CheckMetrics    = "queue/metrics"
)

// Checks returns every check of the suite that s can take.
func Checks(s Subject) []props.Check {
	cs := []props.Check{
		{Name: CheckModel, Family: props.FamilyModel,
			Guarantee: "with several workers holding items: fair FIFO order, stingy (never handed out twice before Done), adds collapse, a re-add during processing comes back exactly once after Done, blocked Gets wake on Add and on shutdown, Len counts the FIFO",
			Run:       machineCheck(s, CheckModel, Mode{})},
		{Name: CheckDrain, Family: props.FamilyModel,
			Guarantee: "ShutDownWithDrain returns only once every item queued before it has been handed out and marked Done",
			Run:       machineCheck(s, CheckDrain, Mode{FullDrain: true})},
		{Name: CheckDoneUnheld, Family: props.FamilyModel,
			Guarantee: "Done of an item that is not being processed changes nothing",
			Run:       machineCheck(s, CheckDoneUnheld, Mode{Misuse: true})},
		{Name: CheckMetrics, Family: props.FamilyModel,
			Guarantee: "with metrics on, depth counts the dirty items, adds the times an item became dirty, and queue latency and work duration are observed once per item handed out and once per Done",
			Run:       machineCheck(s, CheckMetrics, Mode{Metrics: true})},
		{Name: CheckRetention, Family: props.FamilyRetention,
			Guarantee: "an item that was handed out and marked Done is not referenced by the queue",
			Run:       retention(s)},
		{Name: CheckLeak, Family: props.FamilyLeak,
			Guarantee: "no goroutine of the queue survives ShutDown or ShutDownWithDrain (metrics on)",
			Run:       leak(s)},
	}
	cs = append(cs, linearChecks(s)...)
	cs = append(cs, delayingChecks(s)...)
	cs = append(cs, rateLimitingChecks(s)...)
	cs = append(cs, ratelimit.Checks(s.Limiters)...)
	return cs
}

// modeFor maps a machine check to its mode, for replay.
var modeFor = map[string]Mode{
	CheckModel:      {},
	CheckDrain:      {FullDrain: true},
	CheckDoneUnheld: {Misuse: true},
	CheckMetrics:    {Metrics: true},
}

func stepGen(mode Mode) *rapid.Generator[Step] {
	return rapid.Custom(func(t *rapid.T) Step {
		// Weighted choice; shrinking moves towards 0, that is towards Add.
		switch r := rapid.IntRange(0, 99).Draw(t, "op"); {
		case r < 30:
			return Step{Kind: wq.Add, Key: rapid.SampledFrom(Keys).Draw(t, "key")}
		case r < 55:
			return Step{Kind: wq.Get, Worker: rapid.IntRange(0, Workers-1).Draw(t, "worker")}
		case r < 80:
			return Step{Kind: wq.Done, Worker: rapid.IntRange(0, Workers-1).Draw(t, "worker")}
		case r < 86:
			return Step{Kind: wq.Len}
		case r < 89:
			return Step{Kind: wq.ShuttingDown}
		case r < 92 && mode.Misuse:
			return Step{Kind: wq.Done, Key: rapid.SampledFrom(Keys).Draw(t, "key")}
		case r < 96:
			return Step{Kind: wq.ShutDownWithDrain}
		default:
			return Step{Kind: wq.ShutDown}
		}
	})
}

func machineCheck(s Subject, name string, mode Mode) func(*testing.T, props.Config) error {
	return func(t *testing.T, cfg props.Config) error {
		gen := stepGen(mode)
		err := props.Rapid(t, cfg, func(rt *rapid.T, rec *props.Recorder) {
			props.Bubble(t, func() {
				x := newMachine(s, mode, rec)
				defer x.Close()
				rt.Repeat(map[string]func(*rapid.T){
					"step": func(rt *rapid.T) {
						if err := x.Apply(gen.Draw(rt, "step")); err != nil {
							rec.Errorf(rt, err)
						}
					},
				})
				// Every run ends with a checked ShutDown: it must release
				// every blocked Get.
				if err := x.Apply(Step{Kind: wq.ShutDown}); err != nil {
					rec.Errorf(rt, err)
				}
			})
		})
		return props.Save(t, cfg, Component, name, err)
	}
}

// RunSteps runs steps on a fresh queue from s inside a synctest bubble and
// checks every outcome against the model. It is the engine behind the
// rapid checks, trace replay and the fuzz targets. rec may be nil.
func RunSteps(t *testing.T, s Subject, mode Mode, steps []Step, rec *props.Recorder) error {
	if rec == nil {
		rec = &props.Recorder{}
	}
	var err error
	props.Bubble(t, func() {
		x := newMachine(s, mode, rec)
		defer x.Close()
		for _, st := range steps {
			if err = x.Apply(st); err != nil {
				return
			}
		}
	})
	return err
}

func retention(s Subject) func(*testing.T, props.Config) error {
	return func(t *testing.T, _ props.Config) error {
		q := s.New(Deps{Clock: clock.RealClock{}})
		defer q.ShutDown()
		// A heap-allocated key whose bytes nothing else references; a weak
		// pointer to them tells whether the queue still holds the key.
		key := string([]byte("retention-probe-item"))
		probe := weak.Make(unsafe.StringData(key))
		q.Add("other-1")
		q.Add(key)
		q.Add("other-2") // keeps the FIFO's storage alive and non-empty
		for range 2 {
			k, _ := q.Get()
			q.Done(k)
		}
		key = ""
		for range 3 {
			runtime.GC()
		}
		if probe.Value() != nil {
			return props.Broke("No retention", "an item handed out by Get and marked Done is still referenced by the queue")
		}
		return nil
	}
}

func leak(s Subject) func(*testing.T, props.Config) error {
	return func(t *testing.T, _ props.Config) error {
		before := goleak.IgnoreCurrent()
		for _, drain := range []bool{false, true} {
			q := s.New(Deps{Clock: clock.RealClock{}, Metrics: true})
			q.Add("a")
			k, _ := q.Get()
			q.Done(k)
			stop := q.ShutDown
			if drain {
				stop = q.ShutDownWithDrain
			}
			if !props.ReturnsWithin(props.Watchdog, stop) {
				return props.Broke("Shutdown returns", "ShutDown (drain=%v) did not return within %v with nothing queued or processing", drain, props.Watchdog)
			}
			if err := goleak.Find(before); err != nil {
				return props.Broke("No leak", "after ShutDown (drain=%v): %v", drain, err)
			}
		}
		return nil
	}
}

// Replay runs a saved trace of a queue machine check against s. It returns
// the violation if the trace still breaks the subject.
func Replay(t *testing.T, s Subject, tr *traces.Trace) error {
	if _, ok := dmodeFor[tr.Check]; ok {
		return ReplayDelaying(t, s, tr)
	}
	mode, ok := modeFor[tr.Check]
	if !ok {
		return fmt.Errorf("workqueue: check %q has no replayable steps", tr.Check)
	}
	var steps []Step
	for _, op := range tr.Ops() {
		if strings.HasSuffix(op, " returned") {
			continue // an observation, not an operation
		}
		st, err := ParseStep(op)
		if err != nil {
			return fmt.Errorf("trace step %q: %w", op, err)
		}
		steps = append(steps, st)
	}
	return RunSteps(t, s, mode, steps, nil)
}
