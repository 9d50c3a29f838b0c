package informer

import (
	"fmt"
	"testing"

	"github.com/kverify/kverify/props/checkkit"
	"pgregory.net/rapid"
)

// Component is this suite's name in traces and in kverify's table.
const Component = "informer"

// Check names, stable: divergences, traces and the kill matrix refer to them.
const (
	CheckDelivery  = "listener/delivery"
	CheckIsolation = "processor/isolation"
	CheckSync      = "processor/sync"
	CheckShutdown  = "processor/shutdown"
	CheckStart     = "processor/start"
	CheckPumpStep  = "pump/step"
	CheckLookahead = "listener/lookahead"
	CheckLinear    = "linear/listener"

	CheckPhases         = "processor/phases"
	CheckResyncSchedule = "resync/schedule"
	CheckResyncSyncOnly = "resync/sync-only"
	CheckSlowWarning    = "listener/slow-warning"
	CheckFaults         = "processor/faults"
)

// Checks returns every check of the suite: pump/step is not offered
// without s.Pump, the resync checks without s.NewResync, the
// linearizability check without s.Linear; listener/lookahead,
// listener/slow-warning and processor/faults find out at run time that
// they are not offered when the subject lacks Backlog, Slow or
// ContainPanics.
func Checks(s Subject) []checkkit.Check {
	const noResync = "the subject has no resync (Subject.NewResync is nil)"
	// Cheap, fixed scenarios first and the randomized explorations last, so
	// that a bug one of them shows is reported (and a mutant killed) before
	// the long runs.
	cs := []checkkit.Check{
		checkkit.Check{Name: CheckPumpStep, Family: checkkit.FamilyModel,
			Guarantee: "the pump's decision function agrees with the model pump on every event sequence: hold the first notification in hand, stash behind it, refill from the buffer in order, go idle when empty, stop on close; Delivered with nothing in hand and any event after close are invalid and change nothing; nothing is stashed while the hand is empty",
			Run:       pumpStep(s.Pump)}.OfferedIf(s.Pump != nil, "the subject exposes no pump decision function (Subject.Pump is nil)"),
		{Name: CheckIsolation, Family: checkkit.FamilyTiming,
			Guarantee: "with one handler blocked forever, 200 emits all return, every other handler receives all 200 events in order, and once released the blocked handler receives all 200 in order",
			Run:       isolation(s)},
		{Name: CheckSync, Family: checkkit.FamilyTiming,
			Guarantee: "a handler's HasSynced stays false while any of its initial-list adds has not returned (checked with the last one blocked in OnAdd) and turns true once it returns, for handlers added before and after start",
			Run:       syncCheck(s)},
		{Name: CheckShutdown, Family: checkkit.FamilyLeak,
			Guarantee: "RemoveHandler (before or after start, twice, or of a handler blocked in a call) closes Done once no call is in progress and the handler is not called afterwards; Stop waits for a handler call in progress, then returns with every Done closed, and leaves no goroutine behind",
			Run:       shutdown(s)},
		{Name: CheckLifecycle, Family: checkkit.FamilyLeak,
			Guarantee: "Start twice, Start twice at once, Stop twice, Stop twice at once, and Stop before Start never panic and all return; the handler then gets 200 events exactly once, in order, one call at a time, and its Done closes; so does a handler whose listener is added to the running processor again, twice and twice at once (where the subject offers Readder); on the processor, a second Run (while one runs, at the same instant, or after it stopped) returns at once and cancelling its context stops nothing",
			Run:       lifecycle(s)},
		{Name: CheckRetention, Family: checkkit.FamilyRetention,
			Guarantee: "once delivered, a notification is not referenced by the running fan-out: 1100 keys added and deleted behind a blocked handler (2200 notifications buffered), then delivered, are all collectable while the fan-out runs on, idle; and 1100 more behind a blocked handler that is then removed are collectable once its call returns, while its registration is still held; then the same for 1100 keys given as the initial list of a handler added later (blocked in its first initial add) and deleted from the store, once delivered and once that handler is removed",
			Run:       retention(s)},
		{Name: CheckBurstMemory, Family: checkkit.FamilyRetention,
			Guarantee: "a drained burst gives its memory back: 250,000 updates behind a blocked handler, then released and delivered, leave the running fan-out at most 6 MiB of live heap above what it held before the burst; and so do initial lists of 40,000 keys piled up behind 5 handlers added later, each blocked in its first initial add, once delivered",
			Run:       burstMemory(s)},
		{Name: CheckStart, Family: checkkit.FamilyWitness,
			Guarantee: "an event emitted right after Start, before the listeners run, is delivered and Emit returns: distribution does not deadlock with listeners that are starting (it waits for them, as client-go, or buffers, as ours)",
			Run:       startRace(s)},
		{Name: CheckLookahead, Family: checkkit.FamilyWitness,
			Guarantee: "a handler that keeps up never has more than the one notification in hand pending (high-water mark 1); with the handler blocked in a call, N emits leave exactly N pending; after release, 0 pending, a high-water mark of N, and everything delivered in order; again for a second, larger burst through the drained buffer; and a handler added with 1500 or more keys in the store, blocked in its first initial add, has the rest of its initial list pending, then 0, with a high-water mark of the list or all but one",
			Run:       lookahead(s)},
		{Name: CheckPhases, Family: checkkit.FamilyWitness,
			Guarantee: "with more than 1024 keys in the store, events emitted before Start, right after Start (in the initial list or after it, never both or neither, the same snapshot for every handler added before Start), while handlers added before and after Start are blocked in their initial lists (more than 1024 notifications pending) and after every handler synced: each handler receives its initial list exactly once, then every later event exactly once, in order; HasSynced is false before Start and while an initial add is in progress, and true once the initial list returned",
			Run:       phases(s)},
		checkkit.Check{Name: CheckResyncSchedule, Family: checkkit.FamilyTiming,
			Guarantee: "on fake time, a resync round every check period from Start delivers OnUpdate(k, k) for every key in the store to exactly the handlers due, at the round's exact time: a handler is due at or after its next resync time (inclusive) and is rescheduled one effective period after the round; periods under 1s become 1s; a period under the check period lowers the check period before Start (every handler's period re-derived from what it asked for) and is raised to the check period after Start; the default period is the informer's; a check period of 0 means no resync at all",
			Run:       resyncSchedule(s)}.OfferedIf(s.NewResync != nil, noResync),
		checkkit.Check{Name: CheckResyncSyncOnly, Family: checkkit.FamilyTiming,
			Guarantee: "resync notifications reach only the handlers due in the round (never a handler that asked for no resync, nor a removed one), ordinary events reach every handler registered, and a handler added after a round is first resynced one period after it joined; a round that comes while a handler is blocked in a call with a delete and an add pending reaches it after them",
			Run:       resyncSyncOnly(s)}.OfferedIf(s.NewResync != nil, noResync),
		{Name: CheckSlowWarning, Family: checkkit.FamilyTiming,
			Guarantee: "the slow-handler warning fires exactly for the handler calls that start with strictly more than 1024 notifications pending behind them and take strictly longer than 100ms of fake time (probed at 1024/1025 pending and at 100ms/100ms+1ns), reporting that backlog",
			Run:       slowWarning(s)},
		{Name: CheckFaults, Family: checkkit.FamilyTiming,
			Guarantee: "a handler call that panics (in an initial add or an event) is contained and reported once: that notification is skipped, the next one is delivered at once, the handler still syncs, its listener keeps running and closes Done on RemoveHandler; a handler blocked forever stalls only itself (Emit returns, others get everything, RemoveHandler returns at once, Done waits for the call); a handler taking 1s per call gets everything in order, back to back, while the others are not delayed",
			Run:       faults(s)},
		{Name: CheckRace, Family: checkkit.FamilyLinear,
			Guarantee: "on a started fan-out, two calls at the same instant (Emit/AddHandler, Emit/Emit, Emit/RemoveHandler, Emit/Stop; on the processor, Distribute/Distribute and Distribute/shutdown), swept across each other round by round: both return; a handler added as an event is emitted sees it exactly once, in its initial list or after it; every handler sees concurrent events in the same order; a removed handler gets at most the event and closes Done; Stop leaves every Done closed",
			Run:       raceCheck(s)},
		{Name: CheckDelivery, Family: checkkit.FamilyModel,
			Guarantee: "with handlers added before and after start, blocked, released and removed at random: each handler receives its initial list once (as init adds), then every event emitted while it is registered exactly once, in emit order, never two calls at a time; a removed handler gets nothing new and its Done closes once no call is in progress; HasSynced is true exactly when the fan-out runs and every initial add for that handler has returned",
			Run:       delivery(s)},
		checkkit.Check{Name: CheckLinear, Family: checkkit.FamilyLinear,
			Guarantee: "with several goroutines distributing at once and handlers that stall, every listener's history of adds and handler calls is linearizable against a FIFO: each value delivered exactly once, in an order consistent with the adds",
			Run:       linear(s.Linear)}.OfferedIf(s.Linear != nil, "the subject offers no listener for the linearizability check (Subject.Linear is nil)"),
		{Name: CheckExhaustive, Family: checkkit.FamilyExhaustive,
			Guarantee: fmt.Sprintf("every sequence of up to %d steps (events that add, update and delete two keys; up to two handlers added before Start, after it, while the other is blocked in its initial list or behind events; handlers blocked, released and removed; Start), breadth first with one run per state of the model, each run ending with every handler released and Stop: the delivery guarantees hold after every step", exhaustiveDepth),
			Run:       exhaustive(s), Replay: replayExhaustive(s)},
	}
	return cs
}

func delivery(s Subject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, cfg checkkit.Config) error {
		gen := stepGen()
		err := checkkit.Rapid(t, cfg, func(rt *rapid.T, rec *checkkit.Recorder) {
			checkkit.Bubble(t, func() {
				x := newMachine(s.New(), rec)
				closed := false
				defer func() {
					if !closed {
						_ = x.Close()
					}
				}()
				rt.Repeat(map[string]func(*rapid.T){
					"step": func(rt *rapid.T) {
						if err := x.Apply(gen.Draw(rt, "step")); err != nil {
							rec.Errorf(rt, err)
						}
					},
				})
				closed = true
				rec.Step("Stop", "", "")
				if err := x.Close(); err != nil {
					rec.Errorf(rt, err)
				}
			})
		})
		return checkkit.Save(t, cfg, Component, CheckDelivery, err)
	}
}
