package reflector

// The guarantees the reflector checks and the assembled informer's checks
// (InformerChecks) name in violations.
const (
	// GuaranteeEarned: the reflector published a version the server did
	// not issue, went back, or published one whose state the store does
	// not hold.
	GuaranteeEarned = "earned resource version (the store holds the server's state at the published version, which never goes back)"
	// GuaranteePublish: a published version did not reach the store (by
	// Replace or UpdateResourceVersion), or a bookmark reached it other
	// than once.
	GuaranteePublish = "every published version reaches the store (Replace or UpdateResourceVersion)"
	// GuaranteeWithhold: a watch from "" or "0" published a version
	// before its first MODIFIED, DELETED or BOOKMARK.
	GuaranteeWithhold = "a watch from \"\" or \"0\" publishes nothing before its first MODIFIED, DELETED or BOOKMARK"
	// GuaranteeRequests: a list or watch request differs from client-go's
	// shape, or one was made while a stream was open.
	GuaranteeRequests = "request shapes (client-go's versions, page sizes, timeouts, bookmarks, sendInitialEvents; no request while a stream is open)"
	// GuaranteeRelist: a request's kind (a relist: LIST or watch-list;
	// a re-watch: plain WATCH) is not what spec/reflector's model allows
	// after the way the request before it ended: a relist after a clean
	// close, a refused or throttled watch or a completed LIST; a re-watch
	// after 410, another error, a very short watch, a failed or paged
	// LIST or an unfinished watch-list.
	GuaranteeRelist = "relist or re-watch as the last request's ending requires (spec/reflector)"
	// GuaranteeReplace: the store got other than one Replace per
	// completed sync.
	GuaranteeReplace = "exactly one Replace per completed sync"
	// GuaranteeMalformed: a malformed event's object reached the store.
	GuaranteeMalformed = "malformed events are never stored"
	// GuaranteeConverge: once faults stopped, the published version or
	// the store (or a handler's view) did not come to the server's state.
	GuaranteeConverge = "convergence once faults stop"
	// GuaranteeCancel: Run did not return at once when its context was
	// cancelled (or a second Run did not return).
	GuaranteeCancel = "cancellation returns at once"
	// GuaranteeStops: a watch the reflector started was not stopped, or
	// was stopped more than once.
	GuaranteeStops = "every watch started is stopped (exactly once in reflector/stops)"
	// GuaranteeBackoff: failing attempts were retried without the backoff
	// sequence, or it did not start over after a long watch.
	GuaranteeBackoff = "backoff between failing attempts"
	// GuaranteeBound: a watch-list stream without its end bookmark kept
	// the reflector waiting instead of falling back.
	GuaranteeBound = "a watch-list stream without its end bookmark ends in a fallback within bounded time"
	// GuaranteeTimers: a timer or ticker made through the reflector's
	// clock is still armed after Run returned.
	GuaranteeTimers = "no timer left armed after Run returns (resync timers are stopped each cycle, backoff timers on cancel)"
	// GuaranteeResync: the store was not resynced every period while
	// watching, or a failed resync did not end the watch.
	GuaranteeResync = "resync every period while watching; a failed resync ends the watch"
	// GuaranteeBadInput: the constructor accepted (or panicked on) a
	// setup it cannot run.
	GuaranteeBadInput = "bad input rejected"
	// GuaranteeConstruction: the subject's constructor failed on a valid
	// setup.
	GuaranteeConstruction = "construction"
	// GuaranteeModelServer: the check's model server refused one of the
	// check's own writes: the check, not the subject, is at fault.
	GuaranteeModelServer = "model server"
	// GuaranteeHandlerRegistration: the assembled informer's
	// AddEventHandler returned an error.
	GuaranteeHandlerRegistration = "handler registration"
	// GuaranteeHandlerCalls: a handler got OnAdd of a key it holds, or
	// OnUpdate or OnDelete of one it does not (or old and new of
	// different keys), an update whose old object is not the one it was
	// last given or whose new one is not newer, a delete older than what
	// it holds, or an initial-list add after its initial list.
	GuaranteeHandlerCalls = "handler calls consistent with the handler's view"
	// GuaranteeAllSynced: once faults stopped, the informer or a handler
	// does not report synced.
	GuaranteeAllSynced = "every handler reports synced"
	// GuaranteeSyncedOnlyAfter: the informer or a handler reported synced
	// before the first sync was processed.
	GuaranteeSyncedOnlyAfter = "synced only after the first sync"
	// GuaranteeSyncedAfter: after the first sync, a handler's view is not
	// the server's objects or it does not report synced.
	GuaranteeSyncedAfter = "synced after the first sync"
	// GuaranteeLateHandler: a handler added after the sync did not get the
	// store as initial-list adds, or did not report synced.
	GuaranteeLateHandler = "a late handler gets the store as initial-list adds and syncs"
	// GuaranteeEveryChange: a handler missed a delete, an update or a
	// create made after the sync.
	GuaranteeEveryChange = "every handler sees every change"
	// GuaranteeCallFields: a handler call differed from client-go's in a
	// field (kind, old or new object, isInInitialList) on the initial
	// list (by LIST or watch-list), a late handler's join, a watch event
	// or a relist.
	GuaranteeCallFields = "every handler call carries client-go's kind, old and new objects and isInInitialList"
	// GuaranteeNothingAfterStop: Run returned while a handler call was in
	// progress, or a handler call or a request came after it returned.
	GuaranteeNothingAfterStop = "nothing of the informer runs once Run returned"
)

// Guarantees returns every guarantee the package's checks (Checks and
// InformerChecks) can name in a violation (besides checkkit's
// GTermination and GNoPanic, which any check can).
func Guarantees() []string {
	return []string{GuaranteeEarned, GuaranteePublish, GuaranteeWithhold, GuaranteeRequests, GuaranteeRelist, GuaranteeReplace,
		GuaranteeMalformed, GuaranteeConverge, GuaranteeCancel, GuaranteeStops, GuaranteeBackoff, GuaranteeBound,
		GuaranteeTimers, GuaranteeResync, GuaranteeBadInput, GuaranteeConstruction, GuaranteeModelServer,
		GuaranteeHandlerRegistration, GuaranteeHandlerCalls, GuaranteeAllSynced, GuaranteeSyncedOnlyAfter,
		GuaranteeSyncedAfter, GuaranteeLateHandler, GuaranteeEveryChange, GuaranteeCallFields, GuaranteeNothingAfterStop, GuaranteeHandlerResync, GuaranteeRunWaitsReflector}
}

// InformerGuarantees returns the guarantees the assembled informer's
// checks (InformerChecks) can name in a violation: those the informer
// component takes from this package. Its random histories are written
// through the reflector machine's model server, hence
// GuaranteeModelServer.
func InformerGuarantees() []string {
	return []string{GuaranteeConstruction, GuaranteeModelServer, GuaranteeHandlerRegistration, GuaranteeHandlerCalls,
		GuaranteeCancel, GuaranteeStops, GuaranteeConverge, GuaranteeAllSynced, GuaranteeSyncedOnlyAfter,
		GuaranteeSyncedAfter, GuaranteeLateHandler, GuaranteeEveryChange, GuaranteeCallFields, GuaranteeNothingAfterStop, GuaranteeHandlerResync, GuaranteeRunWaitsReflector}
}
