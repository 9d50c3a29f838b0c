package resource

import (
	"fmt"
	"testing"

	"github.com/kverify/kverify/props/checkkit"
	"github.com/kverify/kverify/traces"
)

// Component is this suite's name in traces and in kverify's table.
const Component = "resource"

// CheckLevel is the check's name, stable: divergences and traces refer to
// it.
const CheckLevel = "resource/level"

// Schedules is how many random runs resource/level makes at least per
// round.
const Schedules = 1000

// The guarantees resource/level names in violations.
const (
	// GSerial: an event of a key was handed out while the subscriber had
	// not marked the key's last event Done.
	GSerial = "one event per key at a time: none before the key's last event is Done"
	// GUpsert: an Upsert carried a state the server never had, a state
	// older than the key's last event, or an object whose Delete the
	// subscriber was already given (a resurrection).
	GUpsert = "an Upsert carries a state the server had, never older than the key's last event, never an object whose Delete was given"
	// GDelete: a Delete of an object the subscriber was not given (or
	// whose Delete it handled), of another incarnation than the one it
	// was given, or of an object the server had not deleted.
	GDelete = "a Delete names the object the subscriber was given, and only once the server deleted it"
	// GSync: a second Sync, a Sync before the server served a complete
	// sync, or a Sync before an Upsert of every object that stood from the
	// first sync served until the Sync.
	GSync = "one Sync per subscription, after the server served a sync and after an Upsert of every object that stood since"
	// GConverge: once writes and faults stopped, a subscription's last
	// event of some key (handed out or handled) is not the server's state,
	// it never got its Sync, or an event stayed unhandled.
	GConverge = "after quiescence every subscription's last event of each key, handed out and handled, is the server's state (no lost delete, no lost update, no ghost), and it got its Sync"
	// GStop: Stop did not return once every event was Done, or left a
	// subscription's channel open; or a subscription whose context ended
	// stayed open.
	GStop = "Stop returns once every event handed out is Done and closes every subscription; a subscription whose context ends is closed"
	// GConstruction: New or Start failed.
	GConstruction = "the subject builds and starts"
)

// Guarantees returns every guarantee the component's checks can name
// (besides checkkit's).
func Guarantees() []string {
	return []string{GSerial, GUpsert, GDelete, GSync, GConverge, GStop, GConstruction}
}

// Checks returns the component's checks for s.
func Checks(s Subject) []checkkit.Check {
	cs := []checkkit.Check{
		{Name: s.check(CheckLevel), Family: checkkit.FamilyModel,
			Guarantee: fmt.Sprintf("over %d random runs per round (fault schedules, server histories with re-creates and restarts, subscriptions before Start and later, some ended, slow and failing handlers retried by the subject): "+
				"every subscription gets one event per key at a time; each Upsert a state the server had, never older than the key's last event and never an object already deleted; "+
				"each Delete only for the object it was given and once the server deleted it; one Sync, only after the server served a sync and an Upsert of every object that stood since; "+
				"and once writes and faults stop, each key's last event, handed out and handled, is the server's state, and every ended subscription is closed; then Stop returns and closes every subscription", Schedules),
			Run: level(s)},
	}
	for i := range cs {
		name, run := cs[i].Name, cs[i].Run
		cs[i].Run = func(t *testing.T, cfg checkkit.Config) error {
			return checkkit.Save(t, cfg, Component, name, run(t, cfg))
		}
	}
	return checkkit.Replayable(cs, func(t *testing.T, tr *traces.Trace) error { return Replay(t, s, tr) })
}
