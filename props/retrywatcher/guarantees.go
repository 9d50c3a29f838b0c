package retrywatcher

import "github.com/kverify/kverify/props/checkkit"

// The guarantees the RetryWatcher checks name in violations.
const (
	// GResume: a watch asked for another version than the last one taken
	// in (the last event's or bookmark's, or the initial one), or without
	// bookmarks; or a watch came that the model does not allow (after the
	// end, or with a stream open); or New refused a valid version.
	GResume = "Resume from the last version"
	// GDelivery: the consumer missed an Added, Modified or Deleted event,
	// got one twice, out of order, or got a bookmark.
	GDelivery = "Every event once, in order"
	// GEnd: it ended on something it recovers from, complained of it, or
	// did not end (with one Error event naming why) on a 410 in the stream,
	// a 401 or 403 refusal, an event without a version or of an unknown
	// type.
	GEnd = "Ends on what it cannot recover from"
	// GRestart: a watch came sooner than the server's retry-after after
	// the failure or the restart period after the last watch began, or
	// not within a minute of the moment it was allowed.
	GRestart = "Restart timing"
	// GStop: after Stop, or the end, the result channel is still open, or
	// Done is not closed; Stop waited for the consumer to read an event.
	GStop = "Stop ends it"
	// GStreams: a stream the watcher moved on from, or left at its end,
	// was not stopped; or it stopped the open stream and opened no other.
	GStreams = "Streams left are stopped"
	// GRefused: New accepted an initial version no watch can resume from
	// ("" or "0"), or made a watch call before refusing it.
	GRefused = "Unresumable versions refused"
	// GNoPanic is checkkit's: New, Stop or the watcher panicked.
	GNoPanic = checkkit.GNoPanic
)

// Guarantees lists every guarantee the checks can break.
func Guarantees() []string {
	return []string{GResume, GDelivery, GEnd, GRestart, GStop, GStreams, GRefused, GNoPanic}
}
