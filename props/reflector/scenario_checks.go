package reflector

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kverify/kverify/props/checkkit"
	"github.com/kverify/kverify/props/modelserver"
	"github.com/kverify/kverify/spec/apiserver"
	"k8s.io/apimachinery/pkg/watch"
	"pgregory.net/rapid"
)

// withholding: a list without a version makes the reflector watch from
// "", on a slow stream so every event can be observed on its own.
func withholding(s Subject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, cfg checkkit.Config) error {
		return checkkit.Rapid(t, cfg, func(rt *rapid.T, rec *checkkit.Recorder) {
			checkkit.Bubble(t, func() {
				rec.Timed()
				noWL := rapid.Bool().Draw(rt, "server-without-watch-list")
				n := rapid.IntRange(0, 8).Draw(rt, "objects")
				zero := rapid.Bool().Draw(rt, "list-at-0")
				faults := []modelserver.Fault{{BlankRV: !zero, ZeroRV: zero}, {Slow: time.Second, Reverse: rapid.Bool().Draw(rt, "reverse")}}
				rec.Step(fmt.Sprintf("server watch-list=%v, %d objects, faults %v", !noWL, n, faults), "", "")
				srv := modelserver.NewServer(apiserver.Config{NoWatchList: noWL}, faults)
				keys := keyPool(8)
				seed(srv, n)
				w := start(rt, rec, s, srv, Setup{})
				defer w.stop()
				// The list and the watch from "" come before the first
				// write: a write between them is lost to any reflector (the
				// list named no version to watch from), and the check
				// would fail one run in many, by scheduling alone.
				synctest.Wait()
				steps := rapid.IntRange(1, 30).Draw(rt, "steps")
				for i := 0; i < steps; i++ {
					var op string
					if rapid.IntRange(0, 2).Draw(rt, "tick") > 0 {
						time.Sleep(time.Second)
						op = "advance 1s"
					} else {
						// No compaction or long waits: the first watch must
						// stay the only one.
						op = w.step(keys, opCreate, opUpdate, opDelete, opProgress, opBookmark)
					}
					rec.Step(op, "", w.r.LastSyncResourceVersion())
					w.quiet()
					w.withheld()
				}
				w.stop()
			})
		})
	}
}

// withheld checks the published version and UpdateResourceVersion against
// what the first watch (from "") delivered.
func (w *world) withheld() {
	from, evs := w.srv.Delivered()
	if len(from) == 0 {
		return
	}
	if len(from) > 1 || (from[0] != "" && from[0] != "0") {
		w.fail(GWithhold, "the scenario expects one watch from the list's version, \"\" or \"0\"; the reflector opened %d (from %q)", len(from), from)
	}
	want, earned := from[0], false // the list's version until earned
	var published []string
	for _, e := range evs[0] {
		if e.Type != watch.Added {
			earned = true
		}
		if earned {
			want = e.RV
			published = append(published, e.RV)
		}
	}
	if got := w.r.LastSyncResourceVersion(); got != want {
		w.fail(GWithhold, "after the events %v the published version is %q, want %q", evs[0], got, want)
	}
	if got := w.store.State().Notified; !slices.Equal(got, published) {
		w.fail(GWithhold, "after the events %v UpdateResourceVersion got %v, want %v", evs[0], got, published)
	}
}

// cancel: cancelling in the middle of waits.
func cancel(s Subject) func(*testing.T, checkkit.Config) error {
	refusals := func(n int) []modelserver.Fault {
		fs := make([]modelserver.Fault, n)
		for i := range fs {
			fs[i] = modelserver.Fault{Refuse: true}
		}
		return fs
	}
	after := func(d time.Duration) func(w *world) {
		return func(w *world) {
			time.Sleep(d)
			_ = w.srv.Create("default/late")
			w.quiet()
		}
	}
	return func(t *testing.T, cfg checkkit.Config) error {
		return runFixed(t, cfg, s, []fixed{
			{name: "backing off after refused watches", objects: 2, faults: append([]modelserver.Fault{{}}, refusals(10)...), drive: after(5 * time.Second)},
			{name: "backing off after refused watch-lists", setup: Setup{WatchList: true}, objects: 2, faults: refusals(10), drive: after(5 * time.Second)},
			{name: "backing off after a failed list", objects: 2, faults: []modelserver.Fault{{Reject: 500}, {Reject: 500}, {Reject: 500}}, drive: after(2 * time.Second)},
			{name: "waiting for a slow stream", objects: 2, faults: []modelserver.Fault{{}, {Slow: time.Minute}}, drive: after(10 * time.Second)},
			{name: "waiting on a quiet watch", objects: 2, drive: after(time.Second)},
			{name: "waiting for an end bookmark", setup: Setup{WatchList: true}, objects: 2, faults: []modelserver.Fault{{DropEndBookmark: true}}, drive: after(time.Second)},
			{name: "backing off after 429 in a watch", objects: 2, faults: []modelserver.Fault{{}, {Ends: true, EndStatus: 429}, {Ends: true, EndStatus: 429}}, drive: after(2 * time.Second)},
		})
	}
}

// backoffCheck: gaps between failing attempts.
func backoffCheck(s Subject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, cfg checkkit.Config) error {
		err := checkkit.Scenario(t, cfg, "every request refused", func(rec *checkkit.Recorder) error {
			fs := make([]modelserver.Fault, 20)
			for i := range fs {
				fs[i] = modelserver.Fault{Refuse: true}
			}
			srv := modelserver.NewServer(apiserver.Config{}, fs)
			w := start(nil, rec, s, srv, Setup{})
			defer w.stop()
			time.Sleep(30 * time.Minute)
			w.quiet()
			_, times := srv.Calls()
			if len(times) < 21 {
				w.fail(GBackoff, "%d requests in 30 minutes, want the 20 refused ones and a successful list", len(times))
			}
			for i := 1; i <= 20; i++ {
				base := min(800*time.Millisecond<<(i-1), 30*time.Second)
				if gap := times[i].Sub(times[i-1]); gap < base || gap > 2*base {
					w.fail(GBackoff, "the gap before retry %d is %v, want within [%v, %v] (gaps: %v)", i, gap, base, 2*base, gaps(times[:21]))
				}
			}
			w.converged("after the refusals")
			w.stop()
			return nil
		})
		if err != nil {
			return err
		}
		return checkkit.Scenario(t, cfg, "a long watch resets the backoff", func(rec *checkkit.Recorder) error {
			fs := []modelserver.Fault{{Refuse: true}, {Refuse: true}, {Refuse: true}, {Refuse: true}, {}, {}, {Reject: 500}, {Refuse: true}}
			srv := modelserver.NewServer(apiserver.Config{}, fs)
			w := start(nil, rec, s, srv, Setup{})
			defer w.stop()
			time.Sleep(20 * time.Minute)
			w.quiet()
			calls, times := srv.Calls()
			i := slices.IndexFunc(calls, func(c apiserver.Call) bool {
				return c.Kind == apiserver.WatchCall && c.Err != nil
			})
			if i < 0 || i+2 >= len(calls) {
				w.fail(GBackoff, "no failed watch after the long one: %v", notation(srv))
			}
			// The failed watch, then the refused list after the backoff.
			if gap := times[i+1].Sub(times[i]); gap < 800*time.Millisecond || gap > 1600*time.Millisecond {
				w.fail(GBackoff, "after a watch of %v the next gap is %v, want the sequence started over: [0.8s, 1.6s]", times[i].Sub(times[i-2]), gap)
			}
			w.stop()
			return nil
		})
	}
}

func gaps(ts []time.Time) []time.Duration {
	var out []time.Duration
	for i := 1; i < len(ts); i++ {
		out = append(out, ts[i].Sub(ts[i-1]).Round(time.Millisecond))
	}
	return out
}

// bound: a watch-list stream without its end bookmark that never closes.
func bound(s Subject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, cfg checkkit.Config) error {
		return checkkit.Scenario(t, cfg, "no end bookmark, no close", func(rec *checkkit.Recorder) error {
			srv := modelserver.NewServer(apiserver.Config{}, []modelserver.Fault{{DropEndBookmark: true, NoTimeout: true}})
			seed(srv, 3)
			w := start(nil, rec, s, srv, Setup{WatchList: true})
			defer w.stop()
			time.Sleep(10*time.Minute + time.Second)
			w.quiet()
			if got := notation(srv); !slices.Contains(got, expected(s.Capabilities, listFrom0)) {
				w.fail(GBound, "after 10 minutes the reflector still waits on the stream: requests %v", got)
			}
			w.converged("after the fallback")
			w.stop()
			return nil
		})
	}
}

// resync: the store's Resync while watching.
func resync(s Subject) func(*testing.T, checkkit.Config) error {
	type sc struct {
		name        string
		should      func() bool
		fail        int
		wantResyncs int
		wantLists   int
	}
	scs := []sc{
		{"every period", nil, 0, 3, 1},
		{"ShouldResync says no", func() bool { return false }, 0, 0, 1},
		{"failing resyncs end the watch", nil, 2, 4, 3},
	}
	fs := make([]fixed, len(scs))
	for i, c := range scs {
		fs[i] = fixed{name: "resync: " + c.name, objects: 2, failResync: c.fail,
			setup: Setup{ResyncPeriod: 10 * time.Second, ShouldResync: c.should},
			drive: func(w *world) {
				w.quiet()
				// With failures: fail at 10s, relist after the backoff
				// (<= 1.6s), fail 10s later, relist after <= 3.2s, then
				// resync for good.
				time.Sleep(35*time.Second + time.Duration(c.fail)*5*time.Second)
				w.quiet()
				lists := 0
				for _, n := range notation(w.srv) {
					if strings.HasPrefix(n, "List") {
						lists++
					}
				}
				if got := w.store.State().Resyncs; got != c.wantResyncs || lists != c.wantLists {
					w.fail(GResync, "%d Resync calls and %d lists, want %d and %d; requests %v", got, lists, c.wantResyncs, c.wantLists, notation(w.srv))
				}
				w.converged("after the resyncs")
			}}
	}
	return func(t *testing.T, cfg checkkit.Config) error { return runFixed(t, cfg, s, fs) }
}

// badInput: constructors reject what they cannot run.
func badInput(s Subject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, cfg checkkit.Config) error {
		what := []string{"a nil ListerWatcher", "a nil store", "a negative resync period", "a negative page size"}
		for i, w := range what {
			if (i == 2 && s.Capabilities.NoResync) || (i == 3 && s.Capabilities.NoPaging) {
				continue // the subject has no resync period or page size to reject
			}
			var err error
			ok := func() (ok bool) {
				defer func() {
					if r := recover(); r != nil {
						err = fmt.Errorf("panic: %v", r)
					}
				}()
				err = s.BadInput(i)
				return err != nil
			}()
			if !ok || err == nil {
				return checkkit.Broke(GBadInput, "New with %s: got %v, want an error", w, err)
			}
		}
		return nil
	}
}

// stopsCheck: Stop exactly once per watch, on every way a watch ends.
func stopsCheck(s Subject) func(*testing.T, checkkit.Config) error {
	drive := func(w *world) {
		_ = w.srv.Create("default/late")
		time.Sleep(10 * time.Second)
		w.quiet()
	}
	scs := []fixed{
		{name: "a watch-list stream whose Replace fails", setup: Setup{WatchList: true}, failReplace: 1},
		{name: "a watch-list stream handed over", setup: Setup{WatchList: true}},
		{name: "a handed-over stream that ends with 410", setup: Setup{WatchList: true}, faults: []modelserver.Fault{{Ends: true, EndAfter: 3, EndStatus: 410}}},
		{name: "a watch that ends with 500", faults: []modelserver.Fault{{}, {Ends: true, EndAfter: 1, EndStatus: 500}}},
		{name: "a watch that closes", faults: []modelserver.Fault{{}, {Ends: true, EndAfter: 1}}},
		{name: "a watch-list without its end bookmark", setup: Setup{WatchList: true}, faults: []modelserver.Fault{{Ends: true, EndAfter: 2, DropEndBookmark: true}}},
		{name: "a malformed event", faults: []modelserver.Fault{{}, {Malform: []apiserver.Malformed{{Index: 0, How: apiserver.NilObject}}}}},
		{name: "a list sync"},
	}
	for i := range scs {
		scs[i].objects, scs[i].exactStops, scs[i].drive = 2, true, drive
	}
	return func(t *testing.T, cfg checkkit.Config) error { return runFixed(t, cfg, s, scs) }
}

// malformed: every malformation in a watch and in a watch-list stream,
// then the machine with malformations in its fault schedules.
func malformed(s Subject) func(*testing.T, checkkit.Config) error {
	explore := machine(s, true)
	return func(t *testing.T, cfg checkkit.Config) error {
		if err := malformedFixed(t, cfg, s); err != nil {
			return err
		}
		return explore(t, cfg)
	}
}

// malformedFixed runs each malformation in a watch and in a watch-list
// stream.
func malformedFixed(t *testing.T, cfg checkkit.Config, s Subject) error {
	var scs []fixed
	for how, name := range []string{"nil object", "wrong type", "no resource version", "non-numeric resource version"} {
		for _, watchList := range []bool{false, true} {
			faults := []modelserver.Fault{{}, {Malform: []apiserver.Malformed{{Index: 0, How: apiserver.Malformation(how)}}}}
			if watchList {
				faults = faults[1:]
			}
			scs = append(scs, fixed{name: fmt.Sprintf("%s (watch-list %v)", name, watchList), setup: Setup{WatchList: watchList}, objects: 2, faults: faults,
				drive: func(w *world) {
					w.quiet()
					_ = w.srv.Update("default/o000")
					w.quiet()
					time.Sleep(10 * time.Second)
					w.quiet()
					w.converged("after the malformed event")
				}})
		}
	}
	return runFixed(t, cfg, s, scs)
}
