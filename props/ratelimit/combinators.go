package ratelimit

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kverify/kverify/props/checkkit"
	"pgregory.net/rapid"
)

// recorder is a scripted fake limiter that records how it is called. Its
// n-th When (over all items) returns script[n % len(script)]; NumRequeues
// returns the number of Whens of the item since its last Forget plus bias
// (which may make it negative).
type recorder struct {
	name   string
	script []time.Duration
	bias   int

	calls   int            // When calls, all items
	whens   map[string]int // When calls per item
	forgets map[string]int // Forget calls per item
	count   map[string]int // Whens per item since its last Forget
}

func newRecorder(name string, script []time.Duration, bias int) *recorder {
	return &recorder{name: name, script: script, bias: bias,
		whens: map[string]int{}, forgets: map[string]int{}, count: map[string]int{}}
}

func (f *recorder) When(item string) time.Duration {
	d := f.script[f.calls%len(f.script)]
	f.calls++
	f.whens[item]++
	f.count[item]++
	return d
}

func (f *recorder) Forget(item string) {
	f.forgets[item]++
	delete(f.count, item)
}

func (f *recorder) NumRequeues(item string) int {
	return f.count[item] + f.bias
}

func (f *recorder) String() string {
	ds := make([]string, len(f.script))
	for i, d := range f.script {
		ds[i] = fmtD(d)
	}
	return fmt.Sprintf("%s{script [%s], bias %d}", f.name, strings.Join(ds, " "), f.bias)
}

// expectation is what the check knows a recorder must have seen.
type expectation struct {
	calls   int
	whens   map[string]int
	forgets map[string]int
	count   map[string]int
}

func newExpectation() *expectation {
	return &expectation{whens: map[string]int{}, forgets: map[string]int{}, count: map[string]int{}}
}

// next is the delay the recorder's next When returns.
func (e *expectation) next(f *recorder) time.Duration { return f.script[e.calls%len(f.script)] }

func (e *expectation) when(item string) { e.calls++; e.whens[item]++; e.count[item]++ }

func (e *expectation) forget(item string) { e.forgets[item]++; delete(e.count, item) }

// consulted compares what f saw with e: every item's When and Forget calls.
func consulted(f *recorder, e *expectation) string {
	for _, it := range items {
		if f.whens[it] != e.whens[it] {
			return fmt.Sprintf("%s saw %d When(%s) calls, want %d", f.name, f.whens[it], it, e.whens[it])
		}
		if f.forgets[it] != e.forgets[it] {
			return fmt.Sprintf("%s saw %d Forget(%s) calls, want %d", f.name, f.forgets[it], it, e.forgets[it])
		}
	}
	return ""
}

// scriptGen draws the delays of a recorder: mostly small, some negative,
// some huge, some equal so that ties happen.
var scriptGen = rapid.SliceOfN(rapid.OneOf(
	durs(0, 1, 5*time.Millisecond, 10*time.Millisecond, time.Second, math.MaxInt64, -time.Millisecond),
	dur(rapid.Int64Range(-int64(time.Millisecond), int64(10*time.Second))),
), 1, 5)

var biasGen = rapid.IntRange(-3, 3)

func maxOf(s Subject) func(*testing.T, checkkit.Config) error {
	ops := rapid.SliceOfN(itemOpGen(3), 1, 30)
	return func(t *testing.T, cfg checkkit.Config) error {
		err := checkkit.Rapid(t, cfg, func(rt *rapid.T, rec *checkkit.Recorder) {
			n := rapid.IntRange(1, 4).Draw(rt, "parts")
			fakes := make([]*recorder, n)
			exps := make([]*expectation, n)
			parts := make([]Limiter, n)
			names := make([]string, n)
			for i := range n {
				fakes[i] = newRecorder("p"+strconv.Itoa(i), scriptGen.Draw(rt, "script"), biasGen.Draw(rt, "bias"))
				exps[i] = newExpectation()
				parts[i] = fakes[i]
				names[i] = fakes[i].String()
			}
			l, err := s.MaxOf(parts...)
			rec.Step("MaxOf("+strings.Join(names, ", ")+")", "ok", errString(err))
			if err != nil {
				rec.Fail(rt, GAccepted, "MaxOf of %d limiters: %v", n, err)
			}
			check := func(op string) {
				for i, f := range fakes {
					if msg := consulted(f, exps[i]); msg != "" {
						rec.Fail(rt, GMaxOfConsulted, "after %s: %s", op, msg)
					}
				}
			}
			for _, o := range ops.Draw(rt, "ops") {
				switch o.Kind {
				case opWhen:
					for range o.N {
						want := time.Duration(0)
						for i, f := range fakes {
							want = max(want, exps[i].next(f))
							exps[i].when(o.Item)
						}
						got := l.When(o.Item)
						op := "When(" + o.Item + ")"
						rec.Step(op, fmtD(want), fmtD(got))
						check(op)
						if got != want {
							rec.Fail(rt, GMaxOfWhen, "%s = %s, want %s", op, fmtD(got), fmtD(want))
						}
					}
				case opNumRequeues:
					want := 0
					for i, f := range fakes {
						want = max(want, exps[i].count[o.Item]+f.bias)
					}
					got := l.NumRequeues(o.Item)
					op := "NumRequeues(" + o.Item + ")"
					rec.Step(op, strconv.Itoa(want), strconv.Itoa(got))
					check(op)
					if got != want {
						rec.Fail(rt, GMaxOfNumRequeues, "%s = %d, want %d", op, got, want)
					}
				case opForget:
					for _, e := range exps {
						e.forget(o.Item)
					}
					l.Forget(o.Item)
					op := "Forget(" + o.Item + ")"
					rec.Step(op, "", "")
					check(op)
				}
			}
		})
		return checkkit.Save(t, cfg, Component, CheckMaxOf, err)
	}
}

// maxWaitMaxGen draws the max of the max-wait check.
var maxWaitMaxGen = rapid.OneOf(
	durs(0, 1, 5*time.Millisecond, time.Second, math.MaxInt64),
	dur(rapid.Int64Range(0, int64(10*time.Second))),
	dur(rapid.Int64Range(0, math.MaxInt64)),
)

// maxWaitScriptGen draws the inner limiter's delays for max maxD: delays
// around it, so that the cap is hit, missed and tied, and any others.
func maxWaitScriptGen(maxD time.Duration) *rapid.Generator[[]time.Duration] {
	near := []time.Duration{0, maxD, -time.Millisecond, math.MaxInt64}
	if maxD > 0 {
		near = append(near, maxD-1)
	}
	if maxD < math.MaxInt64 {
		near = append(near, maxD+1)
	}
	return rapid.SliceOfN(rapid.OneOf(
		rapid.SampledFrom(near),
		dur(rapid.Int64Range(-int64(time.Millisecond), math.MaxInt64)),
	), 1, 5)
}

func maxWait(s Subject) func(*testing.T, checkkit.Config) error {
	maxGen := maxWaitMaxGen
	ops := rapid.SliceOfN(itemOpGen(3), 1, 30)
	return func(t *testing.T, cfg checkkit.Config) error {
		err := checkkit.Rapid(t, cfg, func(rt *rapid.T, rec *checkkit.Recorder) {
			maxD := maxGen.Draw(rt, "max")
			script := maxWaitScriptGen(maxD).Draw(rt, "script")
			f := newRecorder("inner", script, biasGen.Draw(rt, "bias"))
			e := newExpectation()
			l, err := s.MaxWait(f, maxD)
			rec.Step(fmt.Sprintf("MaxWait(%s, %s)", f, fmtD(maxD)), "ok", errString(err))
			if err != nil {
				rec.Fail(rt, GAccepted, "MaxWait(%s, %v): %v", f, maxD, err)
			}
			for _, o := range ops.Draw(rt, "ops") {
				switch o.Kind {
				case opWhen:
					for range o.N {
						inner := e.next(f)
						want := min(inner, maxD)
						e.when(o.Item)
						got := l.When(o.Item)
						op := "When(" + o.Item + ")"
						rec.Step(op, fmtD(want), fmtD(got))
						if msg := consulted(f, e); msg != "" {
							rec.Fail(rt, GMaxWaitConsulted, "after %s: %s", op, msg)
						}
						if got > maxD {
							rec.Fail(rt, GMaxWaitNeverAbove, "%s = %s > max %s", op, fmtD(got), fmtD(maxD))
						}
						if got != want {
							rec.Fail(rt, GMaxWaitWhen, "%s = %s with inner %s, want %s", op, fmtD(got), fmtD(inner), fmtD(want))
						}
					}
				case opNumRequeues:
					want := e.count[o.Item] + f.bias
					got := l.NumRequeues(o.Item)
					op := "NumRequeues(" + o.Item + ")"
					rec.Step(op, strconv.Itoa(want), strconv.Itoa(got))
					if got != want {
						rec.Fail(rt, GMaxWaitNumRequeues, "%s = %d, want %d", op, got, want)
					}
				case opForget:
					e.forget(o.Item)
					l.Forget(o.Item)
					op := "Forget(" + o.Item + ")"
					rec.Step(op, "", "")
					if msg := consulted(f, e); msg != "" {
						rec.Fail(rt, GMaxWaitForget, "after %s: %s", op, msg)
					}
				}
			}
		})
		return checkkit.Save(t, cfg, Component, CheckMaxWait, err)
	}
}
