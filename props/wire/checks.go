package wire

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kverify/kverify/props/checkkit"
	"github.com/kverify/kverify/props/modelserver"
	"github.com/kverify/kverify/spec/apiserver"
	"github.com/kverify/kverify/traces"
	"pgregory.net/rapid"
)

// Component is this suite's name in traces and in kverify's table.
const Component = "wire"

// Check names, stable: divergences, traces and the kill matrix refer to them.
const (
	CheckSchedules = "wire/schedules"
	CheckOutage    = "wire/outage"
	CheckRestart   = "wire/restart"
	CheckStall     = "wire/stall"
	CheckFidelity  = "wire/fidelity"
	CheckMalformed = "wire/malformed"
	CheckPages     = "wire/pages"
)

// The fixed schedules: an outage (24 requests in a row refused or
// failed), restarts with compaction around writes, stalled streams (a
// watch-list without its end bookmark, a stream that sends an event every
// 4 minutes) and malformed events.
var (
	outage = Schedule{Objects: 3,
		Faults: append(slices.Repeat([]modelserver.Fault{{Refuse: true}}, 16),
			modelserver.Fault{Reject: 500}, modelserver.Fault{Refuse: true}, modelserver.Fault{Reject: 429}, modelserver.Fault{Refuse: true},
			modelserver.Fault{Reject: 504}, modelserver.Fault{Refuse: true}, modelserver.Fault{Reject: 500}, modelserver.Fault{Refuse: true}),
		Ops: []Op{{Kind: OpWait, Wait: 10 * time.Second}, {Kind: OpWrite, Key: 1}, {Kind: OpWait, Wait: 10 * time.Second},
			{Kind: OpWait, Wait: 10 * time.Second}, {Kind: OpDelete, Key: 0}, {Kind: OpWait, Wait: 10 * time.Second},
			{Kind: OpWrite, Key: 5}, {Kind: OpWait, Wait: 10 * time.Second}, {Kind: OpWait, Wait: 10 * time.Second}}}
	// restarts deletes an object and creates it again while the client
	// is cut off (after the second restart): a client that relists sees
	// only the new object, with a new uid, under the old name.
	restarts = Schedule{Objects: 4,
		Ops: []Op{{Kind: OpWait, Wait: time.Second}, {Kind: OpWrite, Key: 1}, {Kind: OpRestart}, {Kind: OpWrite, Key: 2},
			{Kind: OpWait, Wait: time.Second}, {Kind: OpRestart}, {Kind: OpDelete, Key: 0}, {Kind: OpWrite, Key: 0}, {Kind: OpWrite, Key: 6},
			{Kind: OpWait, Wait: 3 * time.Second}, {Kind: OpRestart}, {Kind: OpWait, Wait: 100 * time.Millisecond},
			{Kind: OpRestart}, {Kind: OpWrite, Key: 3}, {Kind: OpWait, Wait: 10 * time.Second}, {Kind: OpDelete, Key: 1}}}
	stall = Schedule{Objects: 5,
		Faults: []modelserver.Fault{{DropEndBookmark: true, NoTimeout: true}, {Slow: 4 * time.Minute}},
		Ops: []Op{{Kind: OpWrite, Key: 1}, {Kind: OpWait, Wait: 10 * time.Second}, {Kind: OpWrite, Key: 6},
			{Kind: OpWait, Wait: 10 * time.Second}, {Kind: OpDelete, Key: 2}}}
	// malformed puts a malformed event in each of the first five
	// requests' streams, at an index every client reaches whether it syncs
	// by LIST (whose answer has none: its watch is the next request) or by
	// a watch-list stream (3 initial events and the end bookmark, then the
	// writes); restarts make clients open the next streams.
	malformed = Schedule{Objects: 3,
		Faults: []modelserver.Fault{
			{Malform: []apiserver.Malformed{{Index: 5, How: apiserver.NilObject}}},
			{Malform: []apiserver.Malformed{{Index: 0, How: apiserver.NilObject}}},
			{Malform: []apiserver.Malformed{{Index: 1, How: apiserver.WrongType}}},
			{Malform: []apiserver.Malformed{{Index: 0, How: apiserver.BadRV}}},
			{Malform: []apiserver.Malformed{{Index: 1, How: apiserver.NoRV}}}},
		Ops: []Op{{Kind: OpWrite, Key: 0}, {Kind: OpWrite, Key: 1}, {Kind: OpWait, Wait: time.Second}, {Kind: OpWrite, Key: 2},
			{Kind: OpDelete, Key: 0}, {Kind: OpWait, Wait: time.Second}, {Kind: OpWrite, Key: 3}, {Kind: OpRestart},
			{Kind: OpWrite, Key: 4}, {Kind: OpWait, Wait: time.Second}, {Kind: OpWrite, Key: 5}, {Kind: OpRestart},
			{Kind: OpWrite, Key: 6}, {Kind: OpWait, Wait: 10 * time.Second}, {Kind: OpDelete, Key: 1}, {Kind: OpRestart},
			{Kind: OpWrite, Key: 7}, {Kind: OpWait, Wait: 10 * time.Second}}}
	// pages starts with more objects than two of client-go's pages (500)
	// and than 1,000, so that every client meets a paged list (or a long
	// initial-events stream) on every run, not only when wire/schedules
	// draws that many; a restart after writes makes it list again.
	pages = Schedule{Objects: pagesObjects,
		Ops: []Op{{Kind: OpWait, Wait: time.Second}, {Kind: OpWrite, Key: 1}, {Kind: OpDelete, Key: 0}, {Kind: OpRestart},
			{Kind: OpWrite, Key: 2}, {Kind: OpWait, Wait: 2 * time.Second}, {Kind: OpWrite, Key: 5}, {Kind: OpWait, Wait: 10 * time.Second}}}
)

// pagesObjects is wire/pages' first list: three pages of 500 with the
// last a short one.
const pagesObjects = 1203

// Checks returns the wire checks for s: the fixed schedules first, then
// the random ones.
func Checks(s Subject) []checkkit.Check {
	fixed := func(name, guarantee string, sc Schedule) checkkit.Check {
		return checkkit.Check{Name: name, Family: checkkit.FamilyWitness, Guarantee: guarantee,
			Run: func(t *testing.T, cfg checkkit.Config) error {
				rec := checkkit.NewRecorder(cfg.Progress)
				return withTrace(rec, Play(t, rec, s, sc), nil)
			}}
	}
	cs := []checkkit.Check{
		{Name: CheckFidelity, Family: checkkit.FamilyWitness,
			Guarantee: "the server itself, whatever the subject: the scenarios recorded against the real kube-apiserver storage stack (spec/apiserver's recordings), replayed over HTTP and decoded as plain JSON, get the real stack's answers (versions, items, continue tokens, bookmarks, errors with their codes and reasons)",
			Run:       fidelity},
		fixed(CheckOutage, "through 24 refused and failed requests in a row (16 connection refusals, then refusals among 500, 429 and 504) while the server is written to, the client backs off (at most 10 requests in any second) and then converges", outage),
		fixed(CheckRestart, "through server restarts (every stream cut mid-way, the history compacted) among writes and deletes, the client resumes only from versions it was sent, moves on after 410, and converges", restarts),
		fixed(CheckStall, "a watch-list stream without its end bookmark that never closes, then a stream that delivers an event every 4 minutes until the server's timeout closes it: the client still converges within the bound", stall),
		fixed(CheckPages, fmt.Sprintf("a first list of %d objects (three pages of client-go's 500, and more than 1,000 initial events for a client that streams it), then writes and a restart that makes it list again: every listed object gets its add, the client's cache and handlers hold each page, and it converges", pagesObjects), pages),
		fixed(CheckMalformed, "watch events with no object, an object of another kind, or a version that is missing or not a number, among initial events and later ones, across restarts: the client neither crashes nor hands them to its handlers, its cache and version stay earned, and it converges", malformed),
		checkkit.Check{Name: CheckFaultsExhaustive, Family: checkkit.FamilyExhaustive,
			Guarantee: fmt.Sprintf("every schedule of up to %d faults of: served, refused, 410, 500, a stream ended at once, one ended after an event with a 410, too large a version; with 3 objects, writes, a restart that compacts the history, a delete and waits: every guarantee of the wire component, as wire/schedules judges a schedule", wireFaultsDepth),
			Run:       faultsExhaustive(s)}.OfferedIf(!s.Realtime, "the subject runs in real time (a process): the 400 schedules of the bound would take an hour; wire/schedules draws its schedules instead"),
		{Name: CheckSchedules, Family: checkkit.FamilyModel,
			Guarantee: fmt.Sprintf("over %s: a fault schedule (refusals, 410/429/500/504, too-large versions, stale reads, ignored limits, initial events out of order, streams cut or ended early, missing end bookmarks, slow streams, malformed events), restarts with compaction, writes, deletes, bookmarks and waits, drawn as bytes (Decode); judged from the recorded requests and the client's lines: every guarantee of the wire component", scheduleCount(s)),
			Run: func(t *testing.T, cfg checkkit.Config) error {
				n := inProcessSchedules
				if s.Realtime {
					n = realtimeSchedules(s)
				}
				cfg.Checks = max(cfg.Checks, n)
				return checkkit.Rapid(t, cfg, func(rt *rapid.T, rec *checkkit.Recorder) {
					data := rapid.SliceOfN(rapid.Byte(), 3, 64).Draw(rt, "schedule")
					err := withTrace(rec, Play(t, rec, s, Decode(data)), data)
					if err != nil {
						rec.Errorf(rt, err)
					}
				})
			}},
	}
	for i := range cs {
		name, run := cs[i].Name, cs[i].Run
		cs[i].Run = func(t *testing.T, cfg checkkit.Config) error {
			return checkkit.Save(t, cfg, Component, name, run(t, cfg))
		}
	}
	return checkkit.Replayable(cs, func(t *testing.T, tr *traces.Trace) error { return Replay(t, s, tr) })
}

func realtimeSchedules(s Subject) int {
	if s.Schedules > 0 {
		return s.Schedules
	}
	return 6
}

// scheduleCount says how many schedules wire/schedules plays on s.
func scheduleCount(s Subject) string {
	if s.Realtime {
		return fmt.Sprintf("%d random schedules in real time", realtimeSchedules(s))
	}
	return fmt.Sprintf("%d random schedules in process", inProcessSchedules)
}

// schedulePrefix starts a trace's first step's want: the schedule as JSON.
const schedulePrefix = "schedule "

// withTrace judges run and, for a violation, records the run on rec (the
// schedule, then every request with its answer, then the client's lines)
// and returns the violation with that trace. data, if not nil, are the
// bytes the schedule was decoded from: kverify serve --schedule serves it.
func withTrace(rec *checkkit.Recorder, run *Run, data []byte) error {
	err := Judge(run)
	var v *checkkit.Violation
	if !errors.As(err, &v) {
		return err
	}
	b, _ := json.Marshal(run.Schedule)
	rec.Step("schedule", schedulePrefix+string(b), "")
	for _, q := range run.Requests {
		rec.Step(q.String(), "", "")
	}
	for _, l := range run.Lines {
		b, _ := json.Marshal(l)
		rec.Step("client", "", string(b))
	}
	if data != nil {
		v.Detail += fmt.Sprintf(" [schedule %s: kverify serve --schedule %x serves it]", run.Schedule, data)
	} else {
		v.Detail += fmt.Sprintf(" [schedule %s]", run.Schedule)
	}
	return rec.Attach(v)
}

// Replay plays the schedule saved in a wire trace on s again and judges it.
func Replay(t *testing.T, s Subject, tr *traces.Trace) error {
	for _, st := range tr.Steps {
		if !strings.HasPrefix(st.Want, schedulePrefix) {
			continue
		}
		var sc Schedule
		if err := json.Unmarshal([]byte(strings.TrimPrefix(st.Want, schedulePrefix)), &sc); err != nil {
			return fmt.Errorf("wire: trace's schedule: %w", err)
		}
		return Judge(Play(t, checkkit.NewRecorder(nil), s, sc))
	}
	return fmt.Errorf("wire: the trace holds no schedule")
}
