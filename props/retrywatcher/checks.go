package retrywatcher

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kverify/kverify/props/checkkit"
	spec "github.com/kverify/kverify/spec/retrywatcher"
	"github.com/kverify/kverify/traces"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"pgregory.net/rapid"
)

// The checks' names.
const (
	CheckModel      = "retrywatcher/model"
	CheckExhaustive = "retrywatcher/exhaustive"
	CheckBadInput   = "retrywatcher/bad-input"
)

// ExhaustiveLen is retrywatcher/exhaustive's bound: every script of up to
// this many steps over its alphabet (KVERIFY_DEEPER adds to it).
const ExhaustiveLen = 4

// Checks returns the checks for s, each replayable from its saved trace.
func Checks(s Subject) []checkkit.Check {
	if s.New == nil {
		return nil
	}
	return checkkit.Replayable([]checkkit.Check{
		{Name: CheckModel, Family: checkkit.FamilyModel,
			Guarantee: "in fake time, under a random script of events (bookmarks, versions missing, unknown types), closed streams, error statuses (410, 500, 504 and 429 with and without retry-after, not a Status) and refused watches (EOF, 410, 500, 401, 403), and Stop: every watch resumes from the version of the last event or bookmark (with bookmarks asked for); the consumer receives every Added, Modified and Deleted event once, in order, and no bookmark; a 410 in the stream, a 401 or 403 refusal, an event without a version or of an unknown type end it after one Error event, and nothing else does; a restart comes no sooner than the server's retry-after after the failure and the restart period after the last watch began, and within a minute of that; Stop (twice) closes the result channel and Done; every stream it leaves is stopped",
			Run:       modelCheck(s)},
		{Name: CheckExhaustive, Family: checkkit.FamilyExhaustive,
			Guarantee: fmt.Sprintf("the model check's guarantees for every script of up to %d steps over 13 things a server or consumer does (an event, a bookmark, a closed stream, a 410, a 500 asking for 2 s, an Error that is not a Status, an event without a version, one of an unknown type, a watch refused by EOF, 410 or 403, Stop, Stop with an event the consumer has not read), reduced by the model's state", ExhaustiveLen),
			Run:       exhaustive(s)},
		{Name: CheckBadInput, Family: checkkit.FamilyModel,
			Guarantee: `New refuses the initial versions "" and "0" (a watch from them starts with a synthetic state, not a resumable stream) with an error, without panicking and without a watch call`,
			Run:       badInput(s)},
	}, func(t *testing.T, tr *traces.Trace) error { return Replay(t, s, tr) })
}

func modelCheck(s Subject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, cfg checkkit.Config) error {
		err := checkkit.Rapid(t, cfg, func(rt *rapid.T, rec *checkkit.Recorder) {
			sc := scriptGen(rt)
			// The violation is raised inside the bubble, so that it, not
			// synctest's deadlock report, is what a subject that leaves a
			// goroutine behind (asleep past Stop) fails with.
			checkkit.Bubble(t, func() {
				if _, err := play(s, sc, rec); err != nil {
					rec.Errorf(rt, err)
				}
			})
		})
		return checkkit.Save(t, cfg, Component, CheckModel, err)
	}
}

// scriptGen draws a script: an initial version, then up to 30 steps.
func scriptGen(rt *rapid.T) Script {
	initial := rapid.IntRange(1, 1000).Draw(rt, "initial rv")
	sc := Script{Initial: strconv.Itoa(initial)}
	next := initial
	for range rapid.IntRange(1, 30).Draw(rt, "steps") {
		sc.Steps = append(sc.Steps, stepGen(rt, &next))
	}
	return sc
}

// stepGen draws what the server (or the consumer) does next; nextRV
// numbers the events.
func stepGen(rt *rapid.T, nextRV *int) spec.Step {
	rv := func() string { *nextRV++; return strconv.Itoa(*nextRV) }
	switch k := rapid.IntRange(0, 99).Draw(rt, "step"); {
	case k < 45:
		typ := rapid.SampledFrom([]spec.EventType{spec.Added, spec.Modified, spec.Deleted}).Draw(rt, "type")
		return spec.Step{Kind: spec.Event, Type: typ, RV: rv()}
	case k < 58:
		return spec.Step{Kind: spec.Event, Type: spec.Bookmark, RV: rv()}
	case k < 70:
		return spec.Step{Kind: spec.Closed}
	case k < 80:
		code := rapid.SampledFrom([]int{410, 500, 504, 429}).Draw(rt, "status")
		after := time.Duration(rapid.IntRange(0, 3).Draw(rt, "retry-after")) * time.Second
		return spec.Step{Kind: spec.Event, Type: spec.Error, Code: code, RetryAfter: after}
	case k < 90:
		return spec.Step{Kind: spec.Refused, Code: rapid.SampledFrom([]int{0, 410, 500, 401, 403}).Draw(rt, "refused")}
	case k < 93:
		return spec.Step{Kind: spec.Event, Type: spec.Error, NotStatus: true}
	case k < 95:
		return spec.Step{Kind: spec.Event, Type: rapid.SampledFrom([]spec.EventType{spec.Added, spec.Bookmark}).Draw(rt, "type"), RV: ""}
	case k < 97:
		return spec.Step{Kind: spec.Event, Type: "SURPRISE", RV: rv()}
	}
	if rapid.Bool().Draw(rt, "unread") {
		return spec.Step{Kind: spec.StopCalled, RV: rv()} // Stop with an event the consumer has not read
	}
	return spec.Step{Kind: spec.StopCalled}
}

// alphabet is retrywatcher/exhaustive's: what a server or consumer does,
// one of each kind of outcome the model tells apart (an event's version
// is filled in fresh when a script runs).
var alphabet = []spec.Step{
	{Kind: spec.Event, Type: spec.Added},
	{Kind: spec.Event, Type: spec.Bookmark},
	{Kind: spec.Closed},
	{Kind: spec.Event, Type: spec.Error, Code: 410},
	{Kind: spec.Event, Type: spec.Error, Code: 500, RetryAfter: 2 * time.Second},
	{Kind: spec.Event, Type: spec.Error, NotStatus: true},
	{Kind: spec.Event, Type: spec.Added, RV: "-"}, // no version
	{Kind: spec.Event, Type: "SURPRISE"},
	{Kind: spec.Refused, Code: 0},
	{Kind: spec.Refused, Code: 410},
	{Kind: spec.Refused, Code: 403},
	{Kind: spec.StopCalled},
	{Kind: spec.StopCalled, RV: "+"}, // with an event the consumer has not read
}

// exhaustiveInitial is the version retrywatcher/exhaustive's scripts
// start from; their events are numbered after it.
const exhaustiveInitial = 5

// Alphabet is retrywatcher/exhaustive's alphabet, for the golden vectors
// of the same steps: an event whose RV is "-" has no version; the others,
// and a Stop whose RV is "+" (an unread event, then Stop), get theirs from
// ScriptOf.
func Alphabet() []spec.Step { return append([]spec.Step(nil), alphabet...) }

// ScriptOf is the script of steps drawn from Alphabet: from version 5, its
// events numbered after it.
func ScriptOf(steps []spec.Step) Script { return fill(steps) }

// fill gives the events of an alphabet script fresh versions.
func fill(steps []spec.Step) Script {
	sc := Script{Initial: strconv.Itoa(exhaustiveInitial), Steps: make([]spec.Step, len(steps))}
	next := exhaustiveInitial
	for i, s := range steps {
		if s.Kind == spec.StopCalled && s.RV == "+" {
			next++
			s.RV = strconv.Itoa(next)
		} else if s.Kind == spec.Event && s.Type != spec.Error {
			if s.RV == "-" {
				s.RV = ""
			} else {
				next++
				s.RV = strconv.Itoa(next)
			}
		}
		sc.Steps[i] = s
	}
	return sc
}

func exhaustive(s Subject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, cfg checkkit.Config) error {
		all := checkkit.Every(len(alphabet))
		cov, err := checkkit.Explore(cfg, checkkit.Space[spec.Step]{
			Name: "server and consumer steps", Steps: alphabet, Depth: ExhaustiveLen, NoReduce: true,
			Run: func(steps []spec.Step) (string, []int, error) {
				rec := checkkit.NewRecorder(cfg.Progress)
				var key string
				err := checkkit.InBubble(t, func() (err error) {
					key, err = play(s, fill(steps), rec)
					return err
				})
				if err != nil {
					return "", nil, rec.Attach(err)
				}
				if key == ended {
					return key, nil, nil // nothing follows the end
				}
				return key, all, nil
			},
		})
		checkkit.ReportCoverage(t, cov)
		return checkkit.Save(t, cfg, Component, CheckExhaustive, err)
	}
}

// Replay runs a saved trace of a RetryWatcher check on s and returns the
// violation it shows, if it still does.
func Replay(t *testing.T, s Subject, tr *traces.Trace) error {
	switch tr.Check {
	case CheckModel, CheckExhaustive:
	default:
		return fmt.Errorf("%s is not a check of %s", tr.Check, Component)
	}
	sc, err := ParseScript(tr.Steps)
	if err != nil {
		return err
	}
	rec := checkkit.NewRecorder(nil)
	err = checkkit.InBubble(t, func() (err error) {
		_, err = play(s, sc, rec)
		return err
	})
	if err != nil {
		return rec.Attach(err)
	}
	return nil
}

// badInput runs retrywatcher/bad-input: New from "" and from "0".
func badInput(s Subject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, cfg checkkit.Config) error {
		return checkkit.InBubble(t, func() error {
			for _, rv := range []string{"", "0"} {
				if err := refuses(s, rv); err != nil {
					return err
				}
			}
			return nil
		})
	}
}

// refuses checks that New(rv) fails without a watch call.
func refuses(s Subject, rv string) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	calls := 0
	server := func(ctx context.Context, _ metav1.ListOptions) (watch.Interface, error) {
		calls++
		<-ctx.Done()
		return nil, ctx.Err()
	}
	var w Watch
	var err error
	if p := checkkit.Protect(func() { w, err = s.New(ctx, rv, server) }); p != nil {
		return checkkit.Broke(GNoPanic, "New(rv=%q): %v", rv, p)
	}
	synctest.Wait()
	if err == nil {
		if w != nil {
			w.Stop()
			synctest.Wait()
		}
		return checkkit.Broke(GRefused, "New(rv=%q) returned no error (%d watch calls): a watch from %q is not resumable", rv, calls, rv)
	}
	if calls > 0 {
		return checkkit.Broke(GRefused, "New(rv=%q) returned %v, but made %d watch calls first", rv, err, calls)
	}
	return nil
}
