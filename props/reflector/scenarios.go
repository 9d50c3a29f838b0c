package reflector

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kverify/kverify/props/checkkit"
	"github.com/kverify/kverify/props/modelserver"
	"github.com/kverify/kverify/spec/apiserver"
)

// fixed is one fixed scenario of a check: a server with objects and a
// fault schedule, a reflector built with setup over a store whose first
// Replace or Resync calls fail, and what the check does with them.
type fixed struct {
	name        string
	noWL        bool // the server has no watch-list
	setup       Setup
	objects     int
	faults      []modelserver.Fault
	failReplace int
	failResync  int
	exactStops  bool // stop requires exactly one Stop per watch
	// paging: the scenario needs paging though its setup sets no page
	// size (it lists past the default page).
	paging bool
	drive  func(w *world)
}

// needs names the first feature the scenario needs that c declares absent
// ("" if none).
func (f fixed) needs(c Capabilities) string {
	if c.NoPaging && f.paging {
		return "paging"
	}
	return c.lacking(f.setup)
}

// runFixed runs each scenario in its own bubble, stopping at the first
// violation the subject has not declared (a declared one does not hide the
// scenarios after it); after drive, the reflector is stopped (cancellation at once,
// every watch stopped, no timer armed). A scenario that needs a feature
// the subject declares absent is not run (Capabilities).
func runFixed(t *testing.T, cfg checkkit.Config, s Subject, scs []fixed) error {
	for _, c := range scs {
		if f := c.needs(s.Capabilities); f != "" {
			t.Logf("scenario %q not run: it needs %s, which the subject declares absent", c.name, f)
			continue
		}
		err := checkkit.Scenario(t, cfg, c.name, func(rec *checkkit.Recorder) error {
			srv := modelserver.NewServer(apiserver.Config{NoWatchList: c.noWL}, c.faults)
			seed(srv, c.objects)
			// The store's failures are set before Run starts: set
			// after, a reflector that got to its first Replace first
			// took the scenario's failure path away (a mutant that
			// leaks the stream on a failed Replace survived one
			// whole-catalogue run that way).
			w := start(nil, rec, s, srv, c.setup, func(w *world) {
				w.exactStops = c.exactStops
				w.store.mu.Lock()
				w.store.FailReplace, w.store.FailResync = c.failReplace, c.failResync
				w.store.mu.Unlock()
			})
			defer w.stop()
			c.drive(w)
			w.stop()
			return nil
		})
		if err != nil && !cfg.Excused(err) {
			return err
		}
	}
	return nil
}

// notation is the server's call log without the random timeouts.
func notation(srv *modelserver.Server) []string {
	calls, _ := srv.Calls()
	out := make([]string, 0, len(calls))
	stopped := map[int]bool{}
	for _, c := range calls {
		if c.Kind == apiserver.StopCall {
			if stopped[c.Watch] {
				continue // repeated Stops are reflector/stops' business
			}
			stopped[c.Watch] = true
		}
		o := c.Options
		o.TimeoutSeconds = nil
		s := c.Kind.String()
		switch c.Kind {
		case apiserver.StopCall:
			s += fmt.Sprintf(" %d", c.Watch)
		default:
			s += " " + modelserver.Describe(o)
		}
		if c.Err != nil {
			s += " -> error"
		}
		out = append(out, s)
	}
	return out
}

// wantCalls fails unless the server's call log starts with want.
func (w *world) wantCalls(want ...string) {
	got := notation(w.srv)
	for i, c := range want {
		if i >= len(got) || got[i] != c {
			w.fail(GRequests, "request %d: got %q, want %q\n  requests: %s\n  want:     %s", i, at(got, i), c, strings.Join(got, " | "), strings.Join(want, " | "))
		}
	}
}

func at(xs []string, i int) string {
	if i < len(xs) {
		return xs[i]
	}
	return "(none)"
}

// converged fails unless the store holds the server's current state at
// the current version.
func (w *world) converged(what string) {
	rv, objs := w.srv.Current()
	if d := diff(w.store.State().Items, objs); d != "" || w.r.LastSyncResourceVersion() != fmt.Sprint(rv) {
		w.fail(GConverge, "%s: published %q (server at %d); store vs server: %s", what, w.r.LastSyncResourceVersion(), rv, d)
	}
}

func seed(srv *modelserver.Server, n int) {
	for _, k := range keyPool(n) {
		_ = srv.Create(k)
	}
}

const (
	wlFromEmpty = `Watch rv="" match=NotOlderThan sendInitialEvents=true bookmarks`
	listFrom0   = `List rv="0" limit=500`
)

// expected is a request in notation as a reflector with the capabilities
// c makes it: without paging, client-go's default page of 500 is no limit
// (the scenarios that set or learn other page sizes need paging).
func expected(c Capabilities, req string) string {
	if c.NoPaging {
		return strings.ReplaceAll(req, " limit=500", "")
	}
	return req
}

func requests(s Subject) func(*testing.T, checkkit.Config) error {
	type sc struct {
		name        string
		noWL        bool
		setup       Setup
		objects     int
		faults      []modelserver.Fault
		drive       func(w *world)
		want        []string
		failReplace int
		paging      bool // needs paging, as fixed.paging
	}
	relist := func(w *world) {
		// The first watch ends with 410 Expired: relist at the last
		// synced version, with no limit (an exact version), after the
		// backoff.
		time.Sleep(2 * time.Second)
		w.quiet()
	}
	scs := []sc{
		{name: "watch-list sync", setup: Setup{WatchList: true}, objects: 3,
			want: []string{wlFromEmpty}},
		{name: "list sync", objects: 3,
			want: []string{listFrom0, `Watch rv="4" bookmarks`}},
		{name: "server without watch-list", noWL: true, setup: Setup{WatchList: true}, objects: 2,
			want: []string{wlFromEmpty + " -> error", listFrom0, `Watch rv="3" bookmarks`}},
		{name: "relist after an expired watch", objects: 2, faults: []modelserver.Fault{{}, {Ends: true, EndStatus: 410}}, drive: relist,
			want: []string{listFrom0, `Watch rv="3" bookmarks`, "Stop 1", `List rv="3"`, `Watch rv="3" bookmarks`}},
		{name: "expired list retried from empty", objects: 2, faults: []modelserver.Fault{{Reject: 410}, {}, {Ends: true, EndStatus: 410}}, drive: relist,
			want: []string{listFrom0 + " -> error", `List rv="" limit=500`, `Watch rv="3" bookmarks`, "Stop 1", `List rv="3"`}},
		{name: "too large watch-list retried from empty", setup: Setup{WatchList: true}, objects: 2, faults: []modelserver.Fault{{Ends: true, EndAfter: 3, EndStatus: 410}, {TooLarge: true}}, drive: relist,
			want: []string{wlFromEmpty, "Stop 1", `Watch rv="3" match=NotOlderThan sendInitialEvents=true bookmarks -> error`, wlFromEmpty}},
		{name: "too large list retried from empty", objects: 2, faults: []modelserver.Fault{{}, {Ends: true, EndStatus: 410}, {TooLarge: true}},
			drive: relist,
			want:  []string{listFrom0, `Watch rv="3" bookmarks`, "Stop 1", `List rv="3" -> error`, `List rv=""`, `Watch rv="3" bookmarks`}},
		{name: "pages from 0 are learned", paging: true, objects: 501, faults: []modelserver.Fault{{}, {}, {Ends: true, EndStatus: 410}}, drive: relist,
			want: []string{listFrom0, `List rv="" limit=500 continue`, `Watch rv="502" bookmarks`, "Stop 1", `List rv="502" limit=500`, `List rv="" limit=500 continue`, `Watch rv="502" bookmarks`}},
		{name: "page size", setup: Setup{PageSize: 2}, objects: 3,
			want: []string{`List rv="0" limit=2`, `List rv="" limit=2 continue`, `Watch rv="4" bookmarks`}},
		// A relist from an exact version is not paged by default (the watch
		// cache serves it whole), but a configured page size wins there too.
		{name: "page size on a relist from the last synced version", setup: Setup{PageSize: 2}, objects: 3,
			faults: []modelserver.Fault{{}, {}, {Ends: true, EndStatus: 410}}, drive: relist,
			want: []string{`List rv="0" limit=2`, `List rv="" limit=2 continue`, `Watch rv="4" bookmarks`, "Stop 1",
				`List rv="4" limit=2`, `List rv="" limit=2 continue`, `Watch rv="4" bookmarks`}},
		{name: "watch-list after an expired watch", setup: Setup{WatchList: true}, objects: 2, faults: []modelserver.Fault{{Ends: true, EndAfter: 3, EndStatus: 410}}, drive: relist,
			want: []string{wlFromEmpty, "Stop 1", `Watch rv="3" match=NotOlderThan sendInitialEvents=true bookmarks`}},
		{name: "a very short watch relists", objects: 1, faults: []modelserver.Fault{{}, {Ends: true}}, drive: relist,
			want: []string{listFrom0, `Watch rv="2" bookmarks`, "Stop 1", `List rv="2"`, `Watch rv="2" bookmarks`}},
		{name: "429 in a watch re-watches without a relist", objects: 1, faults: []modelserver.Fault{{}, {Ends: true, EndAfter: 0, EndStatus: 429}}, drive: relist,
			want: []string{listFrom0, `Watch rv="2" bookmarks`, "Stop 1", `Watch rv="2" bookmarks`}},
		{name: "a refused watch is retried without a relist", objects: 1, faults: []modelserver.Fault{{}, {Refuse: true}}, drive: relist,
			want: []string{listFrom0, `Watch rv="2" bookmarks -> error`, `Watch rv="2" bookmarks`}},
		{name: "a failed Replace publishes nothing and syncs again", objects: 2, failReplace: 1, drive: relist,
			want: []string{listFrom0, listFrom0, `Watch rv="3" bookmarks`}},
		{name: "a 500 in a watch relists", objects: 1, faults: []modelserver.Fault{{}, {Ends: true, EndAfter: 0, EndStatus: 500}}, drive: relist,
			want: []string{listFrom0, `Watch rv="2" bookmarks`, "Stop 1", `List rv="2"`}},
		{name: "a 500 in a watch is re-watched within MaxInternalErrorRetryDuration", setup: Setup{MaxInternalErrorRetryDuration: time.Minute}, objects: 1,
			faults: []modelserver.Fault{{}, {Ends: true, EndAfter: 0, EndStatus: 500}}, drive: relist,
			want: []string{listFrom0, `Watch rv="2" bookmarks`, "Stop 1", `Watch rv="2" bookmarks`}},
		{name: "bookmarks reach the store", objects: 1,
			drive: func(w *world) {
				w.srv.Progress() // a bookmark goes to watches that started below its version
				w.srv.Bookmark()
				w.quiet()
				if n := w.store.State().Bookmarks; n != 1 {
					w.fail(GPublish, "a BOOKMARK during a watch reached the store's Bookmark %d times, want once", n)
				}
			},
			want: []string{listFrom0, `Watch rv="2" bookmarks`}},
		{name: "clean close re-watches at once", objects: 1, faults: []modelserver.Fault{{}, {Ends: true, EndAfter: 1}},
			drive: func(w *world) { _ = w.srv.Create("default/x"); w.quiet() },
			want:  []string{listFrom0, `Watch rv="2" bookmarks`, "Stop 1", `Watch rv="3" bookmarks`}},
	}
	fs := make([]fixed, len(scs))
	for i, c := range scs {
		want := make([]string, len(c.want))
		for j, req := range c.want {
			want[j] = expected(s.Capabilities, req)
		}
		fs[i] = fixed{name: c.name, noWL: c.noWL, setup: c.setup, objects: c.objects, faults: c.faults, failReplace: c.failReplace, paging: c.paging,
			drive: func(w *world) {
				w.quiet()
				if c.drive != nil {
					c.drive(w)
				}
				w.wantCalls(want...)
				w.converged("after the scenario")
			}}
	}
	return func(t *testing.T, cfg checkkit.Config) error { return runFixed(t, cfg, s, fs) }
}
