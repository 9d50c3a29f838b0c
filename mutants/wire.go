package mutants

// Files the wire mutants change: our reflector, and the HTTP face of the
// model server (a server mutant must be killed too: a server that serves
// the model wrong makes a correct client look wrong, and the checks must
// notice either way).
const wireServerGo = "props/wire/server.go"

// wireMutants are bugs of our reflector that only the wire checks see
// through client-go's REST stack, and fidelity bugs of the served model.
var wireMutants = []Mutant{
	{ID: "wire-refl-resume-next", Component: "wire", File: reflWatchGo,
		Bug: "the reflector publishes the version after each event's (to skip the event on a re-watch): a watch resumes from a version the server never sent, and misses the write made at it",
		Old: "				r.setLastSync(evRV)\n				if u, ok",
		New: "				r.setLastSync(func() string { n, _ := strconv.ParseUint(evRV, 10, 64); return strconv.FormatUint(n+1, 10) }())\n				if u, ok"},
	{ID: "wire-refl-watchlist-retry-at-once", Component: "wire", File: "impl/reflector/watchlist.go",
		Bug: "a refused or throttled watch-list is retried at once instead of after the backoff's delay: an outage becomes a tight loop of requests",
		Old: "	case retriable(err):\n		if !r.sleep(ctx, r.delay.Next()) {",
		New: "	case retriable(err):\n		if !r.sleep(ctx, 0) {"},
	{ID: "wire-refl-watchlist-no-deadline", Component: "wire", File: "impl/reflector/watchlist.go",
		Bug: "a watch-list stream is waited on without its deadline: a server that never sends the end bookmark and never closes the stream leaves the informer unsynced forever",
		Old: "got, rv, err := r.handle(ctx, start, w, temp, false, true, t.C(), nil)",
		New: "got, rv, err := r.handle(ctx, start, w, temp, false, true, nil, nil)"},
	{ID: "wire-refl-accepts-bad-rv", Component: "wire", File: reflWatchGo,
		Bug: "an event whose resource version is not a number is applied and its version published (only an empty one is refused): every later request asks for it and is answered 400",
		Old: "	if _, err := strconv.ParseUint(rv, 10, 64); err != nil {",
		New: "	if _, err := strconv.ParseUint(rv, 10, 64); err != nil && rv == \"\" {"},
	{ID: "wire-server-list-current-rv", Component: "wire", File: wireServerGo,
		Bug: "the served list says the server's current version, not the snapshot's it was served from (a stale read claims to be fresh)",
		Old: "Metadata: list.ListMeta,",
		New: "Metadata: metav1.ListMeta{ResourceVersion: strconv.FormatInt(func() int64 { rv, _ := s.model.Current(); return rv }(), 10), Continue: list.Continue, RemainingItemCount: list.RemainingItemCount},"},
	{ID: "wire-server-drops-deleted", Component: "wire", File: wireServerGo,
		Bug: "the served watch never writes DELETED events (recorded as sent, not written): a client keeps ghosts",
		Old: "			if _, err := w.Write(line); err != nil {",
		New: "			if e.Type == watch.Deleted {\n				continue\n			}\n			if _, err := w.Write(line); err != nil {"},
	{ID: "wire-server-stream-capped", Component: "wire", File: wireServerGo,
		Bug: "the served watch writes at most 1,000 events on one stream (a buffer cap; the rest recorded as sent and dropped): a client that streams a large initial state misses its tail",
		Old: "			line, desc, bad := encodeEvent(e)\n",
		New: "			line, desc, bad := encodeEvent(e)\n			if written := func() (n int) { s.update(seq, func(q *Request) { n = len(q.Events) }); return n }(); written >= 1000 {\n				line = nil\n			}\n"},
}
