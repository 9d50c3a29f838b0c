package backoff

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kverify/kverify/props/checkkit"
	spec "github.com/kverify/kverify/spec/backoff"
	"github.com/kverify/kverify/traces"
	testingclock "k8s.io/utils/clock/testing"
)

// The randomized checks and the witnesses built on them run scripts
// through one engine, so that a saved trace is a script too: Replay parses
// it back and runs it on any subject. Two kinds of script:
//
//	New(<params>)                      a backoff, then
//	Step | Step(rand=<r>)              its steps (rand only with jitter)
//
//	NewDelay(<params>, Reset=<d>)      a Delay on a fake clock, then
//	Sleep(<d>) | Next | Next(rand=<r>) clock steps and calls

// stepRun is a backoff with parameters P stepped once per element of
// Rands, each the random number for its step's jitter (0 without jitter).
type stepRun struct {
	P     Params
	Rands []float64
}

// delayRun is a Delay over P with reset interval Reset, called once per
// element of Gaps after the fake clock moved on by it, with the random
// number of the same index in Rands (0 if Rands is shorter).
type delayRun struct {
	P     Params
	Reset time.Duration
	Gaps  []time.Duration
	Rands []float64
}

// runner is a script of either kind.
type runner interface {
	run(s Subject, rec *checkkit.Recorder, rule ResetRule) error
}

// constRand is a random source that always returns r.
func constRand(r float64) func() float64 { return func() float64 { return r } }

// run steps the subject's backoff and the model side by side.
func (sr stepRun) run(s Subject, rec *checkkit.Recorder, _ ResetRule) error {
	var b Backoff
	var err error
	if p := checkkit.Protect(func() { b, err = s.New(sr.P) }); p != nil {
		rec.Step("New("+sr.P.String()+")", "ok", p.Error())
		return checkkit.Broke(GNoPanic, "New(%v): %v", sr.P, p)
	}
	rec.Step("New("+sr.P.String()+")", "ok", errString(err))
	if err != nil {
		return checkkit.Broke(GAccepted, "New(%v): %v", sr.P, err)
	}
	m := sr.P.spec()
	for i, r := range sr.Rands {
		op := "Step"
		if sr.P.Jitter != 0 {
			op = "Step(rand=" + fmtF(r) + ")"
		}
		base, next := m.Step()
		var got time.Duration
		if p := checkkit.Protect(func() { got = b.Step(constRand(r)) }); p != nil {
			rec.Step(op, fmtD(base), p.Error())
			return checkkit.Broke(GNoPanic, "Step #%d of %v: %v", i+1, sr.P, p)
		}
		state := b.State()
		want, ok := wantDelay(s, sr.P.Jitter, base, r, got)
		rec.Step(op, want+"; then "+fmtState(fromSpec(next), sr.P), fmtD(got)+"; then "+fmtState(state, sr.P))
		switch {
		case got < 0:
			return checkkit.Broke(GNegative, "Step #%d of %v returned %s", i+1, sr.P, fmtD(got))
		case !ok && sr.P.Jitter == 0:
			return checkkit.Broke(GSequence, "Step #%d of %v returned %s, want %s", i+1, sr.P, fmtD(got), want)
		case !ok:
			g := GJitterRange
			if s.Rand && inRange(got, base, sr.P.Jitter) {
				g = GJitterExact
			}
			return checkkit.Broke(g, "Step #%d of %v (base %s, rand %s) returned %s, want %s", i+1, sr.P, fmtD(base), fmtF(r), fmtD(got), want)
		case state != fromSpec(next):
			return checkkit.Broke(GState, "after Step #%d of %v the backoff is %s, want %s", i+1, sr.P, fmtState(state, sr.P), fmtState(fromSpec(next), sr.P))
		}
		m = next
	}
	return nil
}

// wantDelay describes the delay a step with jitter j, base delay base and
// random number r must return, and whether got is it.
func wantDelay(s Subject, j float64, base time.Duration, r float64, got time.Duration) (string, bool) {
	if j == 0 {
		return fmtD(base), got == base
	}
	if s.Rand {
		want := spec.Jittered(base, j, r)
		return fmtD(want), near(got, want) && inRange(got, base, j)
	}
	_, hi := spec.JitterBounds(base, j)
	top := spec.MaxDuration // float64(MaxDuration) is 2^63, which converts to no int64
	if hi < float64(spec.MaxDuration) {
		top = time.Duration(hi)
	}
	return fmt.Sprintf("[%s, %s]", fmtD(base), fmtD(top)), inRange(got, base, j)
}

// inRange reports whether got lies in [base, base*(1+j)], the upper bound
// compared in float64 with a tolerance for its rounding.
func inRange(got, base time.Duration, j float64) bool {
	lo, hi := spec.JitterBounds(base, j)
	g := float64(got)
	return got >= base && g >= lo && g <= hi*(1+1e-12)+1
}

// near reports whether got is want up to the rounding of another order of
// the same float64 product: 1ns, or a few units in the last place.
func near(got, want time.Duration) bool {
	diff := math.Abs(float64(got) - float64(want))
	return diff <= math.Max(1, 4*math.Abs(float64(want))*0x1p-52)
}

// fmtState renders a backoff's changing fields, and the others only if
// they differ from the initial parameters p0, which no step may do.
func fmtState(p, p0 Params) string {
	s := fmt.Sprintf("Duration=%s Steps=%d", fmtD(p.Duration), p.Steps)
	if p.Factor != p0.Factor || p.Jitter != p0.Jitter || p.Cap != p0.Cap {
		s += fmt.Sprintf(" Factor=%s Jitter=%s Cap=%s", fmtF(p.Factor), fmtF(p.Jitter), fmtD(p.Cap))
	}
	return s
}

// run drives the subject's Delay on a fake clock and the model side by
// side under rule.
func (dr delayRun) run(s Subject, rec *checkkit.Recorder, rule ResetRule) error {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := testingclock.NewFakeClock(start)
	op := fmt.Sprintf("NewDelay(%v, Reset=%s)", dr.P, fmtD(dr.Reset))
	var d Delay
	var err error
	r := 0.0 // the random number of the current call
	rand := func() float64 { return r }
	if p := checkkit.Protect(func() { d, err = s.NewDelay(dr.P, c, dr.Reset, rand) }); p != nil {
		rec.Step(op, "ok", p.Error())
		return checkkit.Broke(GNoPanic, "%s: %v", op, p)
	}
	rec.Step(op, "ok", errString(err))
	if err != nil {
		return checkkit.Broke(GAccepted, "%s: %v", op, err)
	}
	m := spec.NewDelay(dr.P.spec(), dr.Reset, rule)
	var at time.Duration
	for i, gap := range dr.Gaps {
		if gap != 0 { // a negative gap sets the clock back
			c.Step(gap)
			at += gap
			rec.Step("Sleep("+fmtD(gap)+")", "", "")
		}
		op := "Next"
		r = 0
		if i < len(dr.Rands) {
			r = dr.Rands[i]
		}
		if dr.P.Jitter != 0 {
			op = "Next(rand=" + fmtF(r) + ")"
		}
		// The model's state does not depend on r: its base is the delay
		// at r = 0.
		next, base := m.Next(at, 0)
		var got time.Duration
		if p := checkkit.Protect(func() { got = d.Next() }); p != nil {
			rec.Step(op, fmtD(base), p.Error())
			return checkkit.Broke(GNoPanic, "Next #%d at %s: %v", i+1, fmtD(at), p)
		}
		want, ok := wantDelay(s, dr.P.Jitter, base, r, got)
		rec.Step(op, want, fmtD(got))
		switch {
		case got < 0:
			return checkkit.Broke(GNegative, "Next #%d at %s returned %s", i+1, fmtD(at), fmtD(got))
		case !ok:
			return checkkit.Broke(resetGuarantee(rule),
				"Next #%d at %s after creation (reset interval %s, base %s, rand %s) returned %s, want %s", i+1, fmtD(at), fmtD(dr.Reset), fmtD(base), fmtF(r), fmtD(got), want)
		}
		m = next
	}
	return nil
}

// Replay runs a saved trace of backoff/sequence, backoff/jitter,
// backoff/reset or backoff/reset-declared on s and returns the violation
// it shows, if it still does.
func Replay(_ *testing.T, s Subject, tr *traces.Trace) error {
	rule := SinceLastCall
	switch tr.Check {
	case CheckSequence, CheckJitter, CheckReset:
	case CheckResetDeclared, CheckResetExhaustive:
		rule = s.ResetRule
	default:
		return fmt.Errorf("%s saves no replayable script: run the check again", tr.Check)
	}
	runs, err := parseScript(tr.Steps)
	if err != nil {
		return err
	}
	rec := checkkit.NewRecorder(nil)
	for _, r := range runs {
		if err := r.run(s, rec, rule); err != nil {
			return rec.Attach(err)
		}
	}
	return nil
}

// parseScript turns a trace's operations back into the scripts that made
// them.
func parseScript(steps []traces.Step) ([]runner, error) {
	var runs []runner
	var sr *stepRun
	var dr *delayRun
	var gap time.Duration
	flush := func() {
		if sr != nil {
			runs = append(runs, *sr)
		}
		if dr != nil {
			runs = append(runs, *dr)
		}
		sr, dr, gap = nil, nil, 0
	}
	for i, st := range steps {
		op := st.Op
		bad := func(err error) error { return fmt.Errorf("trace step %d %q: %v", i, op, err) }
		switch {
		case strings.HasPrefix(op, "New("):
			flush()
			p, _, err := parseParams(strings.TrimSuffix(strings.TrimPrefix(op, "New("), ")"), false)
			if err != nil {
				return nil, bad(err)
			}
			sr = &stepRun{P: p}
		case strings.HasPrefix(op, "NewDelay("):
			flush()
			p, reset, err := parseParams(strings.TrimSuffix(strings.TrimPrefix(op, "NewDelay("), ")"), true)
			if err != nil {
				return nil, bad(err)
			}
			dr = &delayRun{P: p, Reset: reset}
		case op == "Step" || strings.HasPrefix(op, "Step(rand="):
			if sr == nil {
				return nil, bad(errors.New("no New before this Step"))
			}
			r, err := parseRand(op, "Step")
			if err != nil {
				return nil, bad(err)
			}
			sr.Rands = append(sr.Rands, r)
		case strings.HasPrefix(op, "Sleep("):
			if dr == nil {
				return nil, bad(errors.New("no NewDelay before this Sleep"))
			}
			v, err := parseD(strings.TrimSuffix(strings.TrimPrefix(op, "Sleep("), ")"))
			if err != nil {
				return nil, bad(err)
			}
			gap += v
		case op == "Next" || strings.HasPrefix(op, "Next(rand="):
			if dr == nil {
				return nil, bad(errors.New("no NewDelay before this Next"))
			}
			r, err := parseRand(op, "Next")
			if err != nil {
				return nil, bad(err)
			}
			dr.Gaps = append(dr.Gaps, gap)
			dr.Rands = append(dr.Rands, r)
			gap = 0
		default:
			return nil, bad(errors.New("unknown operation"))
		}
	}
	flush()
	if len(runs) == 0 {
		return nil, fmt.Errorf("trace has no New or NewDelay")
	}
	return runs, nil
}

// parseRand parses the random number of "<name>(rand=<r>)"; plain
// "<name>" is 0.
func parseRand(op, name string) (float64, error) {
	if op == name {
		return 0, nil
	}
	return strconv.ParseFloat(strings.TrimSuffix(strings.TrimPrefix(op, name+"(rand="), ")"), 64)
}

// parseParams parses Params.String's notation, followed by ", Reset=<d>"
// when withReset.
func parseParams(s string, withReset bool) (Params, time.Duration, error) {
	var p Params
	var reset time.Duration
	seen := map[string]bool{}
	for _, kv := range strings.Split(s, ", ") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return p, 0, fmt.Errorf("%q is not key=value", kv)
		}
		var err error
		switch k {
		case "Duration":
			p.Duration, err = parseD(v)
		case "Factor":
			p.Factor, err = strconv.ParseFloat(v, 64)
		case "Jitter":
			p.Jitter, err = strconv.ParseFloat(v, 64)
		case "Steps":
			p.Steps, err = strconv.Atoi(v)
		case "Cap":
			p.Cap, err = parseD(v)
		case "Reset":
			reset, err = parseD(v)
		default:
			err = fmt.Errorf("unknown field %q", k)
		}
		if err != nil {
			return p, 0, err
		}
		seen[k] = true
	}
	if len(seen) != 5 && !(withReset && len(seen) == 6 && seen["Reset"]) {
		return p, 0, fmt.Errorf("want Duration, Factor, Jitter, Steps, Cap%s", map[bool]string{true: " and Reset"}[withReset])
	}
	return p, reset, nil
}

// parseD parses fmtD's notation: a time.Duration string, with the exact
// nanoseconds in parentheses for extreme values.
func parseD(s string) (time.Duration, error) {
	if i := strings.IndexByte(s, '('); i >= 0 && strings.HasSuffix(s, "ns)") {
		n, err := strconv.ParseInt(s[i+1:len(s)-3], 10, 64)
		return time.Duration(n), err
	}
	return time.ParseDuration(s)
}

func errString(err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	return "ok"
}

// resetGuarantee is the guarantee a Delay breaks when its Next differs
// from the model under rule.
func resetGuarantee(rule ResetRule) string {
	if rule == SinceLastReset {
		return GResetSinceLastReset
	}
	return GResetSinceLastCall
}
