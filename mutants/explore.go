package mutants

// exploreMutants are bugs in transitions the random machines reach
// rarely or never, which the exhaustive checks (issue 41) take in every
// run: a call made in a state that only a particular interleaving of
// earlier calls produces.
var exploreMutants = []Mutant{
	{ID: "wq-drain-wakes-gets-after", Component: "workqueue", File: queueGo,
		Bug: "ShutDownWithDrain wakes the Gets blocked on an empty queue only once the drain is over, so while an item is still being processed they stay blocked on a queue that is shutting down",
		Old: "	q.draining = true\n	q.itemReady.Broadcast()\n	for q.draining && (q.nProcessing > 0 || q.order.Len() > 0) {\n		q.drained.Wait()\n	}\n",
		New: "	q.draining = true\n	for q.draining && (q.nProcessing > 0 || q.order.Len() > 0) {\n		q.drained.Wait()\n	}\n	q.itemReady.Broadcast()\n"},
	{ID: "wq-done-after-shutdown-drops-readd", Component: "workqueue", File: queueGo,
		Bug: "Done of an item re-added while it was processing forgets the re-add once the queue is shutting down (\"nothing is queued after shutdown\"), though the re-add came before the shutdown",
		Old: "	if s&dirty != 0 {\n		q.state.set(place, item, tag, dirty)", New: "	if s&dirty != 0 && !q.shuttingDown {\n		q.state.set(place, item, tag, dirty)"},
	{ID: "wq-add-during-drain", Component: "workqueue", File: queueGo,
		Bug: "Add still queues items while ShutDownWithDrain waits (a drain \"finishes the work\"), though the queue is shutting down",
		Old: "	if q.shuttingDown {\n		return false\n	}\n	place, s := q.state.find(item, tag)", New: "	if q.shuttingDown && !q.draining {\n		return false\n	}\n	place, s := q.state.find(item, tag)"},
	{ID: "wq-done-during-drain-drops-readd", Component: "workqueue", File: queueGo,
		Bug: "Done of an item re-added while it was processing forgets the re-add while a drain is in flight (the drain \"finishes the work in hand\")",
		Old: "	if s&dirty != 0 {\n		q.state.set(place, item, tag, dirty)", New: "	if s&dirty != 0 && !q.draining {\n		q.state.set(place, item, tag, dirty)"},
	// The assembled informer's handlers joining at each point of the first
	// sync: a join between Run and the sync is one no random run or fixed
	// scenario made with the list still in flight.
	{ID: "inf-shared-join-started-is-synced", Component: "informer", File: sharedGo,
		Bug: "AddEventHandler on a running informer tells the new handler the informer has synced once its initial list is queued, taking \"started\" for \"synced\": a handler added while the first list is in flight reports HasSynced before the informer has synced",
		Old: "	if i.synced {\n		l.UpstreamSynced()\n	} else {", New: "	if i.synced || i.started {\n		l.UpstreamSynced()\n	} else {"},
	// Handlers with different resync periods joining in every order, and
	// when the resync timer starts relative to the first sync: the fixed
	// timeline of assembled/resync joins its handlers in one order, with
	// the first request answered at once.
	{ID: "inf-resync-lowered-from-default", Component: "informer", File: sharedGo,
		Bug: "a handler added before Run is compared with the informer's default period, not with the check period as earlier handlers left it, so a handler asking for more than an earlier one (but less than the default, or the default itself) raises the check period back: the order of AddEventHandlerWithResyncPeriod calls before Run changes every handler's resyncs",
		Old: "	req, eff, check, err := JoinResync(period, i.check, i.started)",
		New: "	base := i.check\n\tif !i.started {\n\t\tbase = i.defaultResync // the last lowering wins\n\t}\n\treq, eff, check, err := JoinResync(period, base, i.started)"},
	{ID: "inf-resync-armed-at-run", Component: "informer", File: sharedGo,
		Bug: "the informer runs its own resync timer from Run (Processor.RunResync) instead of the reflector's, which client-go arms only once the first sync is stored: when the first list takes time, every resync comes that much early",
		Old: "\tro.ResyncPeriod, ro.ShouldResync = i.check, i.proc.ShouldResync\n\trefl, err := reflector.New(i.lw, i.fifo, ro)\n\tif err != nil {\n\t\t// NewInformer took these options but for a period >= 0.\n\t\tpanic(fmt.Sprintf(\"informer: the reflector's options, accepted by NewInformer, are refused at Run: %v\", err))\n\t}\n\ti.refl = refl\n\ti.mu.Unlock()\n\n\trctx, cancel := context.WithCancel(ctx)\n\tdefer cancel()\n\tvar wg sync.WaitGroup\n\twg.Go(func() { i.proc.Run(rctx) })\n\twg.Go(func() { refl.Run(rctx) })\n",
		New: "\tcheck := i.check // the informer's own resync timer, armed at Run\n\trefl, err := reflector.New(i.lw, i.fifo, ro)\n\tif err != nil {\n\t\t// NewInformer took these options but for a period >= 0.\n\t\tpanic(fmt.Sprintf(\"informer: the reflector's options, accepted by NewInformer, are refused at Run: %v\", err))\n\t}\n\ti.refl = refl\n\ti.mu.Unlock()\n\n\trctx, cancel := context.WithCancel(ctx)\n\tdefer cancel()\n\tvar wg sync.WaitGroup\n\twg.Go(func() { i.proc.Run(rctx) })\n\twg.Go(func() { refl.Run(rctx) })\n\twg.Go(func() { i.proc.RunResync(rctx, check, nil, func() { _ = i.fifo.Resync() }) })\n"},
	// A reflector told to stream that lists at every sync after one
	// fallback: no rule said that a reflector streams again at its next
	// sync until the request shapes did (mayFallBack). The random
	// schedules of reflector/malformed reach it (a malformed event fails
	// a stream).
	{ID: "refl-fallback-sticks", Component: "reflector", File: "impl/reflector/reflector.go",
		Bug: "once a watch-list stream failed and the reflector fell back to a list, it never streams again: every later sync lists, though client-go decides afresh at each ListAndWatch",
		Old: "			fallback = true\n", New: "			fallback, r.useWatchList = true, false\n"},
	// Behaviour behind a feature gate: client-go's adapter deciding from
	// the release number, not from the gate, whether the reflector
	// streams. With the gates at their defaults nothing differs.
	{ID: "up-watchlist-from-release", Component: "reflector", File: "subjects/upstream/entries.go", Subject: "upstream",
		Bug: "the adapter takes client-go's watch-list from the release number (on from v0.35) instead of the WatchListClient gate, so with the gate off it offers streaming syncs the reflector does not make",
		Old: "	return !streams()\n", New: "	from, _ := InRange(\">=v0.35.0\", Release) // on by default from v0.35\n\treturn !from\n"},
	// A lower-level API in a state the assembled informer never makes: a
	// listener started twice (the processor starts each listener once,
	// but a listener added while it starts them can be reached by both).
	{ID: "inf-listener-start-twice-runs-twice", Component: "informer", File: "impl/informer/listener.go",
		Bug: "Listener.Start starts a handler goroutine each time it is called, so a listener started twice has two goroutines popping its notifications and calls its handler concurrently and out of order",
		Old: "	l.startOnce.Do(func() { wg.Go(l.run) })", New: "	wg.Go(l.run)"},
	// The informer's own cache, the store its listers read: compared with
	// the server by nothing before assembled/cache.
	{ID: "store-replace-merges", Component: "informer", File: "impl/store/store.go",
		Bug: "the informer's store merges a relist into what it holds instead of replacing it, so an object deleted while the watch was down stays in the cache listers read (the handlers are told of the delete: it is computed before the Replace)",
		Old: "	s.items = items\n	s.rv = resourceVersion", New: "	for k, obj := range items {\n		s.items[k] = obj\n	}\n	s.rv = resourceVersion"},
	// Generator reach: a RealFIFO backlog past its unlock bound (2×1000
	// deltas left queued). No machine queues that many with
	// UnlockWhileProcessing on; realfifo/unlock now pops at 1999, 2000
	// and 2001 left, by Pop and by PopBatch.
	{ID: "rfifo-unlock-unbounded", Component: "realfifo", File: realFIFOGo,
		Bug: "UnlockWhileProcessing unlocks whatever the backlog, so past 2×BatchSize deltas a producer no longer waits for a slow handler and the queue grows without bound (the_real_fifo.go:456-458)",
		Old: "	if f.unlock && f.items.len() < 2*f.batchSize {", New: "	if f.unlock {"},
	{ID: "rfifo-unlock-bound-inclusive", Component: "realfifo", File: realFIFOGo,
		Bug: "the unlock bound is inclusive: with exactly 2×BatchSize deltas left the process func still runs unlocked",
		Old: "	if f.unlock && f.items.len() < 2*f.batchSize {", New: "	if f.unlock && f.items.len() <= 2*f.batchSize {"},
	// Generator reach: the first Replace landing while a delta popped
	// before it is processed unlocked. No machine made a call from
	// inside a process func; PopReplace does, in realfifo/synced (a fixed
	// scenario and the random mix) and realfifo/exhaustive.
	{ID: "rfifo-count-decided-at-return", Component: "realfifo", File: realFIFOGo,
		Bug: "Pop decides whether its delta counts toward the initial population when the process func returns, as client-go does, so a first Replace made while an earlier delta is processed unlocked counts that delta among its own and the FIFO syncs one delta early",
		Old: "	counted := min(1, f.initial.Pending())\n	defer f.initial.Processed(counted)\n\n	depth := f.items.len()",
		New: "	defer func() { f.initial.Processed(min(1, f.initial.Pending())) }() // once processed\n\n	depth := f.items.len()"},
	// Generator reach: a paged list from a version other than "0" (a
	// relist from the last synced version with a page size). The random
	// schedules make one in about 75 (40 of 3000, props/reflector's
	// reach test); reflector/requests makes it in every run.
	{ID: "refl-exact-relist-ignores-page-size", Component: "reflector", File: reflListGo,
		Bug: "a relist from an exact version is never paged, even with WatchListPageSize set (the watch-cache rule is tested before the configured size), so a reflector told to list in pages of 2 asks for the whole list at once on every relist",
		Old: "	case r.opts.WatchListPageSize > 0:\n		return r.opts.WatchListPageSize\n	case r.paginated:\n		return DefaultPageSize\n	case rv != \"\" && rv != \"0\":\n		return 0\n",
		New: "	case rv != \"\" && rv != \"0\":\n		return 0 // an exact version: the watch cache serves it whole\n	case r.opts.WatchListPageSize > 0:\n		return r.opts.WatchListPageSize\n	case r.paginated:\n		return DefaultPageSize\n"},
}
