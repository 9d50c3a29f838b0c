package mutants

// relistMutants break the relist-or-rewatch decision (issue 27, class 5): the reflector suite's model of when a relist is due must kill them.
// Each breaks it only past the first watch of a sync or on an answer the
// fixed scenarios of reflector/requests do not give, so that only the
// model checked on every request of every random schedule
// (GRelist) finds it.
var relistMutants = []Mutant{
	{ID: "refl-watch-after-failed-list", Component: "reflector", File: reflectorGo,
		Bug: "a relist that fails falls through to a watch from the last synced version instead of listing again (only the first sync's failure is returned)",
		Old: "			if ctx.Err() != nil {\n				return nil\n			}\n			return err\n", New: "			if ctx.Err() != nil {\n				return nil\n			}\n			if r.LastSyncResourceVersion() == \"\" {\n				return err\n			}\n"},
	{ID: "refl-very-short-from-first-watch", Component: "reflector", File: reflWatchGo,
		Bug: "a watch's age is measured from the first watch of the sync, so a re-watch that closes at once without an event is re-watched again instead of relisting",
		Old: "	var firstInternal time.Time\n	for {\n		if ctx.Err() != nil {\n			if w != nil {\n				w.Stop()\n			}\n			return nil\n		}\n		start := r.clock.Now()\n",
		New: "	var firstInternal time.Time\n	start := r.clock.Now()\n	for {\n		if ctx.Err() != nil {\n			if w != nil {\n				w.Stop()\n			}\n			return nil\n		}\n"},
	{ID: "refl-504-watch-retried", Component: "reflector", File: reflWatchGo,
		Bug: "a watch request rejected with 504 Timeout is taken as retriable, like 429: the reflector backs off and re-watches instead of relisting",
		Old: "				if retriable(err) {", New: "				if retriable(err) || apierrors.IsTimeout(err) {"},
	{ID: "refl-watchlist-restreams-after-close", Component: "reflector", File: reflWatchGo,
		Bug: "a watch-list reflector ends the sync when its watch closes cleanly and streams again (a watch-list from the last synced version) instead of re-watching",
		Old: "		if err == nil {\n			firstInternal = time.Time{}\n			continue\n		}", New: "		if err == nil && r.useWatchList {\n			return nil\n		}\n		if err == nil {\n			firstInternal = time.Time{}\n			continue\n		}"},
}
