package wire

// The guarantees the wire checks name in violations.
const (
	// GStart: the client did not start, or broke the protocol.
	GStart = "the client starts and speaks kverify-client/v1"
	// GResume: a watch from a version the server never sent the
	// client before the request.
	GResume = "a watch resumes from a version the server sent the client, never from one it was not sent"
	// GContinue: a continue token the server had not issued.
	GContinue = "continue tokens are used as issued"
	// GExpired: more than two requests answered 410 for the same
	// expired version (or an older one), or an expired token used again.
	GExpired = "after 410 the client moves on (no more than two requests for an expired version, no expired token reused)"
	// GRate: more than maxPerSecond requests in a second or
	// maxPerSchedule in a schedule.
	GRate = "a bounded request rate (at most 10 requests in any second, 400 in a schedule): never a tight loop"
	// GEarned: a reported version whose state the cache does not
	// hold.
	GEarned = "a reported version is earned: the cache holds the server's state at the version the client reports"
	// GHandlers: a handler call inconsistent with the server's
	// history or the handler's view of the key.
	GHandlers = "handler calls are consistent per key with the server's history (add when absent, update and delete when present, never back in time, only states the server had)"
	// GInitialAdds: an object present at the first sync the
	// client was served never got an add.
	GInitialAdds = "every object present at the first sync gets its add"
	// GSynced: synced reported before a sync was served, or never.
	GSynced = "synced is reported, and only after a sync was served"
	// GConverge: after the schedule, within the bound, the cache
	// and the handlers' view did not come to the server's state.
	GConverge = "after quiescence the cache and the handlers' view equal the server's state, within the bound (in process: 15 minutes of fake time, and 11 more for each stalling fault; real time: 20 s and 2 more for each fault)"
)

// GFidelity: the served model answered a recorded scenario
// other than the real stack did (a check of the server, not the client).
const GFidelity = "the served model answers the recorded real-apiserver scenarios as the real stack did"

// Guarantees returns every guarantee the wire checks can name (besides
// checkkit's GTermination and GNoPanic).
func Guarantees() []string {
	return []string{GStart, GResume, GContinue, GExpired, GRate,
		GEarned, GHandlers, GInitialAdds, GSynced, GConverge, GFidelity}
}
