package mutants

// serverAnswerMutants break answers a real API server may give that the model server did not (issue 27, class 10).
// Each is exposed only by an answer the model server gives since: a
// BOOKMARK among a watch-list's initial events, a 410 with the reason
// Gone, a 504 ERROR in a watch, a too-large version on a plain watch.
var serverAnswerMutants = []Mutant{
	{ID: "refl-initial-bookmark-ends-sync", Component: "reflector", File: reflWatchGo,
		Bug: "any BOOKMARK ends a watch-list's initial events, not only the annotated end bookmark: a periodic bookmark mid-stream syncs the store with part of the objects",
		Old: "			if m.GetAnnotations()[metav1.InitialEventsAnnotationKey] == \"true\" {", New: "			if m != nil {"},
	{ID: "refl-initial-bookmark-published", Component: "reflector", File: reflWatchGo,
		Bug: "a periodic BOOKMARK among a watch-list's initial events publishes its version before the store holds the initial events",
		Old: "			if !untilBookmark {\n				r.setLastSync(evRV)", New: "			if !untilBookmark || (ev.Type == watch.Bookmark && !gotBookmark) {\n				r.setLastSync(evRV)"},
	{ID: "refl-gone-not-expired", Component: "reflector", File: reflWatchGo,
		Bug: "a 410 with the reason Gone (a 1.17 server's expired version) is not taken as expired: an expired list or watch-list is not retried from \"\"",
		Old: "	return apierrors.IsResourceExpired(err) || apierrors.IsGone(err)", New: "	return apierrors.IsResourceExpired(err)"},
	{ID: "refl-504-error-rewatches", Component: "reflector", File: reflWatchGo,
		Bug: "a watch stream that ends with a 504 Timeout ERROR is retried like 429 (back off, re-watch) instead of relisting",
		Old: "		case apierrors.IsTooManyRequests(err):\n			if !r.sleep", New: "		case apierrors.IsTooManyRequests(err) || apierrors.IsTimeout(err):\n			if !r.sleep"},
	{ID: "refl-too-large-watch-retried", Component: "reflector", File: reflWatchGo,
		Bug: "a plain watch rejected with a too-large resource version (which carries Retry-After 1s) backs off and re-watches from the same version instead of relisting",
		Old: "				if retriable(err) {", New: "				if retriable(err) || isTooLarge(err) {"},
}
