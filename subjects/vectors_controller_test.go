package subjects

import (
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	pctl "github.com/kverify/kverify/props/controller"
	spec "github.com/kverify/kverify/spec/controller"
	"github.com/kverify/kverify/traces"
)

// The controller's vectors are vectors of its model (traces/vectors'
// controller.go): what a controller's handler was told and what its
// reconciles did, with spec/controller's Ledger verdict at every step.
// They are replayed into a fresh Ledger, not on ours and upstream: a
// controller's reconcile starts and reads come from its workers, its
// queue and its informer running on their own, which a sequential script
// of events cannot drive; props/controller's checks run the subjects
// against the same Ledger.

// replayControllerVector feeds vector v's events to a fresh ledger,
// comparing each verdict with the step's want; it returns the promise the
// vector breaks ("" for none).
func replayControllerVector(v traces.Vector) (broken string, err error) {
	ns := func(name string) time.Duration { return time.Duration(v.Header.Params[name]) }
	led := spec.New(spec.Limiter{Base: ns("base_ns"), Max: ns("max_ns")})
	epoch := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC) // any instant: the ledger compares times only
	num := func(s *string) (int64, error) {
		if s == nil {
			return 0, fmt.Errorf("no value")
		}
		return strconv.ParseInt(*s, 10, 64)
	}
	err = replaySteps(v.Steps, func(s traces.VStep) (got traces.Want, err error) {
		if broken != "" {
			return got, fmt.Errorf("a step after the broken promise %q", broken)
		}
		var at time.Time
		if s.NS != nil {
			at = epoch.Add(time.Duration(*s.NS))
		}
		key := func() string {
			if s.Key == nil {
				err = fmt.Errorf("%s without a key", s.Op)
				return ""
			}
			return *s.Key
		}
		var verdict error
		switch s.Op {
		case "Notify", "NotifyDeleted":
			k := key()
			rv, nerr := num(s.Value)
			if err != nil || nerr != nil {
				return got, fmt.Errorf("%s: %v %v", s.Op, err, nerr)
			}
			verdict = led.Notify(k, spec.Seen{Present: s.Op == "Notify", RV: rv}, at)
		case "Start":
			k := key()
			var r spec.Seen
			if s.Value != nil {
				rv, nerr := num(s.Value)
				if nerr != nil {
					return got, nerr
				}
				r = spec.Seen{Present: true, RV: rv}
			}
			if err != nil {
				return got, err
			}
			verdict = led.Start(k, at, r)
		case "Succeed", "Fail", "Requeue":
			k := key()
			o := spec.Outcome{Failed: s.Op == "Fail"}
			if s.Op == "Requeue" {
				d, nerr := num(s.Value)
				if nerr != nil {
					return got, nerr
				}
				o.RequeueAfter = time.Duration(d)
			}
			if err != nil {
				return got, err
			}
			verdict = led.End(k, at, o)
		case "Stop":
			led.Stop()
			return got, nil
		case "Final":
			server := map[string]int64{}
			for _, o := range s.Objects {
				rv, nerr := strconv.ParseInt(o.Value, 10, 64)
				if nerr != nil {
					return got, nerr
				}
				server[o.Key] = rv
			}
			verdict = led.Final(server)
		default:
			return got, fmt.Errorf("unknown operation %q", s.Op)
		}
		ok := verdict == nil
		got.OK = &ok
		if !ok {
			b, isBroken := verdict.(*spec.Broken)
			if !isBroken {
				return got, fmt.Errorf("the ledger returned %v, not a *Broken", verdict)
			}
			broken, got.Value = b.Promise, &b.Promise
		}
		return got, nil
	})
	return broken, err
}

// TestControllerVectors replays every controller vector into
// spec/controller's Ledger: every verdict is the recorded one, a vector
// ends at its broken step or its Final, its header names the guarantee it
// breaks (props/controller's), and the vectors as a whole break every
// promise of the ledger and keep them all too.
func TestControllerVectors(t *testing.T) {
	vs := readVectors(t, pctl.Component)
	if len(vs) == 0 {
		t.Fatal("no controller vectors")
	}
	brokenBy := map[string]int{}
	kept := 0
	for _, v := range vs {
		broken, err := replayControllerVector(v)
		if err != nil {
			t.Errorf("vector seed %d (%s): %v", v.Header.Seed, v.Header.Check, err)
			continue
		}
		last := v.Steps[len(v.Steps)-1]
		switch {
		case broken != "":
			brokenBy[broken]++
			if g := pctl.GuaranteeOf(broken); !slices.Equal(v.Header.Guarantees, []string{g}) {
				t.Errorf("vector seed %d breaks %q: its header names %q, want [%q]", v.Header.Seed, broken, v.Header.Guarantees, g)
			}
		case last.Op != "Final":
			t.Errorf("vector seed %d: keeps every promise but ends with %s, not Final", v.Header.Seed, last.Op)
		default:
			kept++
		}
		for _, g := range v.Header.Guarantees {
			if !slices.Contains(pctl.Guarantees(), g) {
				t.Errorf("vector seed %d names %q, not a props/controller guarantee", v.Header.Seed, g)
			}
		}
	}
	for _, p := range spec.Promises() {
		if brokenBy[p] == 0 {
			t.Errorf("no vector breaks %q", p)
		}
	}
	if kept == 0 {
		t.Error("no vector keeps every promise")
	}
	t.Logf("%d vectors: %d keep every promise; broken: %v", len(vs), kept, brokenBy)
}

// TestControllerVectorsCatchABrokenLedger: the replay fails on a vector
// whose recorded verdict is changed (a want of ok for its broken step),
// so that it compares what it claims to.
func TestControllerVectorsCatchABrokenLedger(t *testing.T) {
	for _, v := range readVectors(t, pctl.Component) {
		last := &v.Steps[len(v.Steps)-1]
		if last.Want == nil || last.Want.OK == nil || *last.Want.OK {
			continue
		}
		ok := true
		steps := slices.Clone(v.Steps)
		steps[len(steps)-1].Want = &traces.Want{OK: &ok}
		if _, err := replayControllerVector(traces.Vector{Header: v.Header, Steps: steps}); err == nil {
			t.Fatalf("vector seed %d with its broken step's want changed to ok replays cleanly", v.Header.Seed)
		}
		return
	}
	t.Fatal("no controller vector breaks a promise")
}
