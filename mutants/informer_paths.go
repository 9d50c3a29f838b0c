package mutants

const informerSharedGo = "impl/informer/shared.go"

// informerPathMutants break the assembled informer's handler calls on every path and what runs after Stop (issue 27, class 9).
var informerPathMutants = []Mutant{
	// Resync on the assembled informer: who is resynced, and when.
	{ID: "inf-shared-resync-check-default", Component: "informer", File: informerSharedGo,
		Bug: "the reflector checks for resyncs every default period, not every check period a handler added before Run lowered it to, so that handler is resynced late",
		Old: "ro.ResyncPeriod, ro.ShouldResync = i.check, i.proc.ShouldResync",
		New: "ro.ResyncPeriod, ro.ShouldResync = i.defaultResync, i.proc.ShouldResync"},
	{ID: "inf-shared-resync-no-should", Component: "informer", File: informerSharedGo,
		Bug: "the reflector resyncs at every check without asking the processor who is due, so every handler (even one with period 0) is resynced at every check",
		Old: "ro.ResyncPeriod, ro.ShouldResync = i.check, i.proc.ShouldResync",
		New: "ro.ResyncPeriod, ro.ShouldResync = i.check, nil"},
	{ID: "inf-shared-late-period-not-raised", Component: "informer", File: informerSharedGo,
		Bug: "a handler added after Run with a period under the check period keeps it (and lowers every listener's check period) instead of being raised to it, so it is resynced before its period has come",
		Old: "JoinResync(period, i.check, i.started)",
		New: "JoinResync(period, i.check, false)"},
	{ID: "inf-shared-resync-next-from-zero", Component: "informer", File: informerSharedGo,
		Bug: "a handler's first resync is scheduled from the zero time instead of from when it joined, so every handler is resynced at the first check, due or not",
		Old: "l.SetResync(req, eff, i.clock.Now())",
		New: "l.SetResync(req, eff, time.Time{})"},
	{ID: "inf-delta-syncall-dropped", Component: "informer", File: "impl/delta/process.go",
		Bug: "a SyncAll delta (the informer's resync) notifies nothing, so handlers never get their resync updates",
		Old: "			for _, o := range s.List() {\n				h.OnUpdate(o, o)\n			}",
		New: "			_ = s.List()"},
	// Stop: Run returns only once nothing of the informer runs.
	{ID: "inf-shared-run-no-wait-processor", Component: "informer", File: informerSharedGo,
		Bug: "Run does not wait for the processor, so it returns while a handler call is still in progress",
		Old: "wg.Go(func() { i.proc.Run(rctx) })",
		New: "go i.proc.Run(rctx)"},
	{ID: "inf-shared-run-no-wait-reflector", Component: "informer", File: informerSharedGo,
		Bug: "Run does not wait for the reflector, so it returns while the reflector is still stopping its watch (and could still write to the FIFO or make a request)",
		Old: "wg.Go(func() { refl.Run(rctx) })",
		New: "go refl.Run(rctx)"},
	{ID: "inf-reflector-list-no-ctx", Component: "informer", File: "impl/reflector/list.go",
		Bug: "the reflector's LIST does not carry Run's context, so a Run cancelled while a LIST is in flight waits for the server's answer",
		Old: "		obj, err := r.lw.ListWithContext(ctx, opts)",
		New: "		obj, err := r.lw.ListWithContext(context.Background(), opts)"},
}
