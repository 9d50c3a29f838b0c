package reflector

// The guarantees the reflector checks and the assembled informer's checks
// (InformerChecks) name in violations.
const (
	// GEarned: the reflector published a version the server did
	// not issue, went back, or published one whose state the store does
	// not hold.
	GEarned = "earned resource version (the store holds the server's state at the published version, which never goes back)"
	// GPublish: a published version did not reach the store (by
	// Replace or UpdateResourceVersion), or a bookmark reached it other
	// than once.
	GPublish = "every published version reaches the store (Replace or UpdateResourceVersion)"
	// GWithhold: a watch from "" or "0" published a version
	// before its first MODIFIED, DELETED or BOOKMARK.
	GWithhold = "a watch from \"\" or \"0\" publishes nothing before its first MODIFIED, DELETED or BOOKMARK"
	// GRequests: a list or watch request differs from client-go's
	// shape, or one was made while a stream was open.
	GRequests = "request shapes (client-go's versions, page sizes, timeouts, bookmarks, sendInitialEvents; no request while a stream is open)"
	// GRelist: a request's kind (a relist: LIST or watch-list;
	// a re-watch: plain WATCH) is not what spec/reflector's model allows
	// after the way the request before it ended: a relist after a clean
	// close, a refused or throttled watch or a completed LIST; a re-watch
	// after 410, another error, a very short watch, a failed or paged
	// LIST or an unfinished watch-list.
	GRelist = "relist or re-watch as the last request's ending requires (spec/reflector)"
	// GReplace: the store got other than one Replace per
	// completed sync.
	GReplace = "exactly one Replace per completed sync"
	// GMalformed: a malformed event's object reached the store.
	GMalformed = "malformed events are never stored"
	// GConverge: once faults stopped, the published version or
	// the store (or a handler's view) did not come to the server's state.
	GConverge = "convergence once faults stop"
	// GCancel: Run did not return at once when its context was
	// cancelled (or a second Run did not return).
	GCancel = "cancellation returns at once"
	// GStops: a watch the reflector started was not stopped, or
	// was stopped more than once.
	GStops = "every watch started is stopped (exactly once in reflector/stops)"
	// GBackoff: failing attempts were retried without the backoff
	// sequence, or it did not start over after a long watch.
	GBackoff = "backoff between failing attempts"
	// GBound: a watch-list stream without its end bookmark kept
	// the reflector waiting instead of falling back.
	GBound = "a watch-list stream without its end bookmark ends in a fallback within bounded time"
	// GTimers: a timer or ticker made through the reflector's
	// clock is still armed after Run returned.
	GTimers = "no timer left armed after Run returns (resync timers are stopped each cycle, backoff timers on cancel)"
	// GResync: the store was not resynced every period while
	// watching, or a failed resync did not end the watch.
	GResync = "resync every period while watching; a failed resync ends the watch"
	// GBadInput: the constructor accepted (or panicked on) a
	// setup it cannot run.
	GBadInput = "bad input rejected"
	// GConstruction: the subject's constructor failed on a valid
	// setup.
	GConstruction = "construction"
	// GModelServer: the check's model server refused one of the
	// check's own writes: the check, not the subject, is at fault.
	GModelServer = "model server"
	// GHandlerRegistration: the assembled informer's
	// AddEventHandler returned an error.
	GHandlerRegistration = "handler registration"
	// GHandlerCalls: a handler got OnAdd of a key it holds, or
	// OnUpdate or OnDelete of one it does not (or old and new of
	// different keys), an update whose old object is not the one it was
	// last given or whose new one is not newer, a delete older than what
	// it holds, or an initial-list add after its initial list.
	GHandlerCalls = "handler calls consistent with the handler's view"
	// GAllSynced: once faults stopped, the informer or a handler
	// does not report synced.
	GAllSynced = "every handler reports synced"
	// GSyncedOnlyAfter: the informer or a handler reported synced
	// before the first sync was processed.
	GSyncedOnlyAfter = "synced only after the first sync"
	// GSyncedAfter: after the first sync, a handler's view is not
	// the server's objects or it does not report synced.
	GSyncedAfter = "synced after the first sync"
	// GLateHandler: a handler added after the sync did not get the
	// store as initial-list adds, or did not report synced.
	GLateHandler = "a late handler gets the store as initial-list adds and syncs"
	// GCache: once faults stopped, the informer's own cache (the store
	// its listers read; Cache) differs from the server's state: a ghost,
	// a missing or a stale object.
	GCache = "the informer's cache is the server's state"
	// GEveryChange: a handler missed a delete, an update or a
	// create made after the sync.
	GEveryChange = "every handler sees every change"
	// GCallFields: a handler call differed from client-go's in a
	// field (kind, old or new object, isInInitialList) on the initial
	// list (by LIST or watch-list), a late handler's join, a watch event
	// or a relist.
	GCallFields = "every handler call carries client-go's kind, old and new objects and isInInitialList"
	// GNothingAfterStop: Run returned while a handler call was in
	// progress, or a handler call or a request came after it returned.
	GNothingAfterStop = "nothing of the informer runs once Run returned"
	// GHandlerResync: a handler was resynced (OnUpdate(o, o) for
	// every stored object) at a resync check it was not due at, was not
	// at one it was due at, or was given other objects than the store's.
	GHandlerResync = "each handler is resynced at exactly the checks its own period makes it due at"
	// GRunWaitsReflector: Run returned while its reflector was
	// still inside a call to the server (a watch's Stop, which takes no
	// context), or a request of the reflector was still in flight after
	// Run returned: Run must return only once its reflector has.
	GRunWaitsReflector = "Run returns only once its reflector has stopped, with no request of it in flight"
)

// Guarantees returns every guarantee the package's checks (Checks and
// InformerChecks) can name in a violation (besides checkkit's
// GTermination and GNoPanic, which any check can).
func Guarantees() []string {
	return []string{GEarned, GPublish, GWithhold, GRequests, GRelist, GReplace,
		GMalformed, GConverge, GCancel, GStops, GBackoff, GBound,
		GTimers, GResync, GBadInput, GConstruction, GModelServer,
		GHandlerRegistration, GHandlerCalls, GAllSynced, GSyncedOnlyAfter,
		GSyncedAfter, GLateHandler, GEveryChange, GCallFields, GNothingAfterStop, GCache,
		GHandlerResync, GRunWaitsReflector}
}

// InformerGuarantees returns the guarantees the assembled informer's
// checks (InformerChecks) can name in a violation: those the informer
// component takes from this package. Its random histories are written
// through the reflector machine's model server, hence
// GModelServer.
func InformerGuarantees() []string {
	return []string{GConstruction, GModelServer, GHandlerRegistration, GHandlerCalls,
		GCancel, GStops, GConverge, GAllSynced, GSyncedOnlyAfter,
		GSyncedAfter, GLateHandler, GEveryChange, GCallFields, GNothingAfterStop, GCache,
		GHandlerResync, GRunWaitsReflector}
}
