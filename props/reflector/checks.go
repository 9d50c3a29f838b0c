package reflector

import (
	"fmt"
	"testing"

	"github.com/kverify/kverify/props/checkkit"
	"github.com/kverify/kverify/traces"
)

// Component is this suite's name in traces and in kverify's table.
const Component = "reflector"

// Check names, stable: divergences, traces and the kill matrix refer to them.
const (
	CheckRequests    = "reflector/requests"
	CheckWithholding = "reflector/withholding"
	CheckMachine     = "reflector/machine"
	CheckMalformed   = "reflector/malformed"
	CheckCancel      = "reflector/cancel"
	CheckBackoff     = "reflector/backoff"
	CheckBound       = "reflector/initial-events-bound"
	CheckResync      = "reflector/resync"
	CheckBadInput    = "reflector/bad-input"
	CheckStops       = "reflector/stops"
)

// Checks returns the reflector checks for s, fixed scenarios first.
func Checks(s Subject) []checkkit.Check {
	cs := []checkkit.Check{
		{Name: CheckRequests, Family: checkkit.FamilyWitness,
			Guarantee: "in fixed scenarios: the first sync is a watch-list from \"\" (sendInitialEvents, NotOlderThan, bookmarks, timeout in [300s, 600s)) when streaming, else a list from \"0\" with limit 500; a server without watch-list gets a list after the refused stream; a relist after a watch ends starts at the last synced version with no limit; an expired list is retried at once from \"\"; pages of a list from \"0\" make later lists paged; WatchListPageSize wins; watches start at the last synced version",
			Run:       requests(s)},
		{Name: CheckStops, Family: checkkit.FamilyLeak,
			Guarantee: "every watch the reflector starts is stopped exactly once, whichever way it ends: a watch-list stream handed over to the watch, a stream that ends with an ERROR, closes, times out, carries a malformed event, is refused or is cut by cancellation",
			Run:       stopsCheck(s)},
		{Name: CheckWithholding, Family: checkkit.FamilyModel,
			Guarantee: "after a list whose version is \"\" or \"0\", the watch from that version publishes nothing while it delivers ADDED events (in any order, not by version), publishes at its first MODIFIED, DELETED or BOOKMARK and at every event after it, and every publish reaches UpdateResourceVersion in order",
			Run:       withholding(s)},
		{Name: CheckCancel, Family: checkkit.FamilyLeak,
			Guarantee: "cancelling Run's context while it backs off after refused watches, refused watch-lists or a failed list, while it waits for a slow stream or a stream without events, returns at once (no fake time passes) with every watch it started stopped exactly once and no goroutine left",
			Run:       cancel(s)},
		{Name: CheckBackoff, Family: checkkit.FamilyTiming,
			Guarantee: "with every request refused, the gap before the n-th retry lies in [b, 2b] for b = min(0.8s·2^(n-1), 30s) (jitter 1.0), without starting over while failures continue; after a watch that ran for more than 2 minutes, the next gap starts over at 0.8s",
			Run:       backoffCheck(s)},
		checkkit.Check{Name: CheckBound, Family: checkkit.FamilyTiming,
			Guarantee: "a watch-list stream that never sends its initial-events-end bookmark and never closes is stopped within its own timeout (at most 10 minutes) and the reflector syncs by LIST",
			Run:       bound(s)}.OfferedIf(!s.Capabilities.NoWatchList, "the subject declares no watch-list (Capabilities.NoWatchList): the check's one scenario is a watch-list stream without its end bookmark"),
		checkkit.Check{Name: CheckResync, Family: checkkit.FamilyTiming,
			Guarantee: "with a resync period, the store's Resync is called every period while watching, only when ShouldResync agrees; a failing Resync ends the watch (a new sync follows) and later failures do the same; cancelling leaves no goroutine",
			Run:       resync(s)}.OfferedIf(!s.Capabilities.NoResync, "the subject declares no resync (Capabilities.NoResync): every scenario of the check resyncs; that the store's Resync is never called is checked by the others"),
		{Name: CheckMalformed, Family: checkkit.FamilyModel,
			Guarantee: "events with a nil object, an object of the wrong type, or a missing or non-numeric resource version, in watch and watch-list streams, are never stored and never published; the reflector still converges to the server's state and never panics",
			Run:       malformed(s)},
		{Name: CheckMachine, Family: checkkit.FamilyModel,
			Guarantee: "over at least 1000 random histories (up to 540 objects, writes, compactions, bookmarks, time) and fault schedules (refusals, 410 Expired or Gone/429/500/504, too-large versions, stale reads, ignored limits, initial events out of version order, bookmarks among a watch-list's initial events, streams ending early, at once, right after their end bookmark or with errors, missing end bookmarks, slow streams), on servers with and without watch-list: at every quiescent point the published version is earned, every request has client-go's shape and is a relist or a re-watch as the way the request before it ended requires (spec/reflector), one Replace per completed sync; once faults stop the store converges to the server's state at its current version; after cancelling, every watch was stopped and no timer is left armed",
			Run:       machine(s, false)},
		{Name: CheckFaultsExhaustive, Family: checkkit.FamilyExhaustive,
			Guarantee: fmt.Sprintf("every schedule of up to %d faults (healthy, refused, 410, 500, a watch ended at once or after one event with a 410, too large a version, a stale list), on a listing reflector, a streaming one and a streaming one on a server without watch-list, with a history of writes, a compaction, a bookmark and time past every watch's timeout: reflector/machine's invariants hold at every quiescent point, the store converges once the faults are spent, and every watch is stopped", faultsDepth),
			Run:       faultsExhaustive(s)},
	}
	for i := range cs {
		cs[i].Name = s.checkName(cs[i].Name)
		cs[i].Run = saved(Component, cs[i].Name, cs[i].Run)
		if cs[i].NotOffered == "" {
			cs[i].Guarantee += declared(s.Capabilities)
		}
	}
	bad := checkkit.Check{Name: s.checkName(CheckBadInput), Family: checkkit.FamilyModel,
		Guarantee: "New with a nil ListerWatcher, a nil store, a negative resync period or a negative page size returns an error and does not panic" + declared(s.Capabilities),
		Run:       badInput(s)}.OfferedIf(s.BadInput != nil, "the subject's constructor returns no error to check (Subject.BadInput is nil)")
	return checkkit.Replayable(append([]checkkit.Check{bad}, cs...), func(t *testing.T, tr *traces.Trace) error { return Replay(t, s, tr) })
}

// declared is what a check's guarantee adds for a subject that declares
// features absent ("" for none): see Capabilities.
func declared(c Capabilities) string {
	if c == (Capabilities{}) {
		return ""
	}
	return " [the subject declares " + c.String() + ": scenarios and schedules that need these are not generated, and requests are judged by the rules without them]"
}

// saved makes run save its counterexample as a trace (checkkit.Save).
func saved(component, name string, run func(*testing.T, checkkit.Config) error) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, cfg checkkit.Config) error {
		return checkkit.Save(t, cfg, component, name, run(t, cfg))
	}
}
