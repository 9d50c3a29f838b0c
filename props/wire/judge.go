package wire

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kverify/kverify/props/checkkit"
)

// Judge returns the first guarantee the run broke, from the server's
// records and the client's lines and states, or nil. A violation in a run
// whose server sent malformed events (Fault.Malform) ends with ", after
// malformed events [...]" naming them: what a client does with events it
// cannot apply decides much of what follows, and a declaration may say so.
func Judge(r *Run) error {
	for _, j := range []func() error{r.started, r.rate, r.resumed, r.continued, r.expired, r.handlers,
		r.initialAdds, r.earned, r.synced, r.convergence} {
		err := j()
		if err == nil {
			continue
		}
		var v *checkkit.Violation
		if !errors.As(err, &v) {
			return err
		}
		var bad []string
		for _, q := range r.Requests {
			bad = append(bad, q.Malformed...)
		}
		if len(bad) > 0 {
			v.Detail += fmt.Sprintf(", after malformed events %q", bad)
		}
		return v
	}
	return nil
}

func (r *Run) started() error {
	if r.StartErr != nil {
		return checkkit.Broke(GStart, "start: %v", r.StartErr)
	}
	if len(r.Lines) == 0 || r.Lines[0].Type != LineHello || r.Lines[0].Protocol != Protocol {
		return checkkit.Broke(GStart, "the first line is not a %s hello: %v", Protocol, first(r.Lines))
	}
	for _, s := range r.Samples {
		if s.Err != nil {
			return checkkit.Broke(GStart, "state after step %d: %v", s.Step, s.Err)
		}
		if s.State.Type != LineState {
			return checkkit.Broke(GStart, "state after step %d: a %q line", s.Step, s.State.Type)
		}
	}
	if r.StopErr != nil {
		return checkkit.Broke(GStart, "stop: %v", r.StopErr)
	}
	return nil
}

func first(lines []Line) any {
	if len(lines) == 0 {
		return "no line"
	}
	return lines[0]
}

// requests are the run's LIST and WATCH requests, held ones included.
func (r *Run) requests() []Request {
	var out []Request
	for _, q := range r.Requests {
		if q.Verb == "list" || q.Verb == "watch" || q.Verb == "held" {
			out = append(out, q)
		}
	}
	return out
}

func (r *Run) rate() error {
	qs := r.requests()
	if len(qs) > maxPerSchedule {
		return checkkit.Broke(GRate, "%d requests in the schedule (at most %d): %s", len(qs), maxPerSchedule, describe(qs[len(qs)-5:]))
	}
	for i := range qs {
		j := i
		for j < len(qs) && qs[j].At.Sub(qs[i].At) < time.Second {
			j++
		}
		if j-i > maxPerSecond {
			return checkkit.Broke(GRate, "%d requests within a second (at most %d), from %s", j-i, maxPerSecond, describe(qs[i:min(j, i+5)]))
		}
	}
	return nil
}

// describe is a short account of requests.
func describe(qs []Request) string {
	parts := make([]string, len(qs))
	for i, q := range qs {
		parts[i] = q.String()
	}
	return strings.Join(parts, "; ")
}

// String is the request in one line: "#3 watch rv=7 bookmarks -> 200 [ADDED 8, ERROR 410]".
func (q Request) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "#%d %s", q.Seq, q.Verb)
	o := q.Options
	if q.Verb == "list" || q.Verb == "watch" || q.Verb == "held" {
		fmt.Fprintf(&b, " rv=%q", o.ResourceVersion)
		if o.ResourceVersionMatch != "" {
			fmt.Fprintf(&b, " match=%s", o.ResourceVersionMatch)
		}
		if o.Limit != 0 {
			fmt.Fprintf(&b, " limit=%d", o.Limit)
		}
		if o.Continue != "" {
			b.WriteString(" continue")
		}
		if o.SendInitialEvents != nil {
			fmt.Fprintf(&b, " sendInitialEvents=%v", *o.SendInitialEvents)
		}
	}
	fmt.Fprintf(&b, " -> %d", q.Code)
	if q.RV != "" {
		fmt.Fprintf(&b, " rv=%s", q.RV)
	}
	if len(q.Events) > 0 {
		ev := q.Events
		if len(ev) > 6 {
			ev = append(slices.Clone(ev[:3]), "...", ev[len(ev)-2], ev[len(ev)-1])
		}
		fmt.Fprintf(&b, " [%s]", strings.Join(ev, ", "))
	}
	if q.Cut {
		b.WriteString(" cut")
	}
	return b.String()
}

func exactVersion(rv string) (int64, bool) {
	n, err := strconv.ParseInt(rv, 10, 64)
	return n, err == nil && n > 0
}

func (r *Run) resumed() error {
	for _, q := range r.requests() {
		n, ok := exactVersion(q.Options.ResourceVersion)
		if q.Verb != "watch" || !ok {
			continue
		}
		sent := false
		for _, s := range r.Sent {
			if s.Order < q.Order && s.RV == q.Options.ResourceVersion {
				sent = true
				break
			}
		}
		if !sent {
			return checkkit.Broke(GResume, "%s: version %d was never sent before it", q, n)
		}
	}
	return nil
}

func (r *Run) continued() error {
	issued := map[string]bool{}
	for _, q := range r.requests() {
		if t := q.Options.Continue; t != "" && !issued[t] {
			return checkkit.Broke(GContinue, "%s: a continue token the server never issued (%q)", q, t)
		}
		if q.Continue != "" {
			issued[q.Continue] = true
		}
	}
	return nil
}

// gone reports whether the request was answered 410, or its stream
// carried an ERROR 410.
func gone(q Request) bool {
	return q.Code == 410 || slices.Contains(q.Events, "ERROR 410")
}

func (r *Run) expired() error {
	var expired []int64 // versions of earlier requests answered 410
	tokens := map[string]bool{}
	for _, q := range r.requests() {
		if t := q.Options.Continue; t != "" && tokens[t] && gone(q) {
			return checkkit.Broke(GExpired, "%s: a continue token already answered 410 was used again", q)
		}
		if !gone(q) {
			continue
		}
		if t := q.Options.Continue; t != "" {
			tokens[t] = true
			continue
		}
		n, ok := exactVersion(q.Options.ResourceVersion)
		if !ok {
			continue
		}
		older := 0
		for _, e := range expired {
			if e >= n {
				older++
			}
		}
		if older >= 2 {
			return checkkit.Broke(GExpired, "%s: a third request answered 410 for version %d or older", q, n)
		}
		expired = append(expired, n)
	}
	return nil
}

// view folds handler calls into the handler's view of each key, or
// returns the first call inconsistent with it or with the server's
// history.
func (r *Run) view(lines []Line) (map[string]string, error) {
	v := map[string]string{}
	for i, l := range lines {
		if l.Type != LineAdd && l.Type != LineUpdate && l.Type != LineDelete {
			continue
		}
		bad := func(format string, args ...any) error {
			return checkkit.Broke(GHandlers, "call %d, %s %s@%s: %s", i, l.Type, l.Key, l.RV, fmt.Sprintf(format, args...))
		}
		n, ok := exactVersion(l.RV)
		if !ok {
			return nil, bad("not a version the server issues")
		}
		held, present := v[l.Key]
		h, _ := exactVersion(held)
		switch l.Type {
		case LineAdd:
			if present {
				return nil, bad("the handler holds %s@%s", l.Key, held)
			}
		case LineUpdate, LineDelete:
			if !present {
				return nil, bad("the handler does not hold %s", l.Key)
			}
			if n < h {
				return nil, bad("back in time from %s", held)
			}
			if l.OldRV != "" && l.OldRV != held {
				return nil, bad("old object %s@%s, the handler holds %s", l.Key, l.OldRV, held)
			}
		}
		if l.Type == LineDelete {
			delete(v, l.Key)
			if n > rvNow(r.model) {
				return nil, bad("ahead of the server")
			}
			continue
		}
		if snap, ok := r.snapshot(n); !ok || snap[l.Key] != l.RV {
			return nil, bad("the server never had this state")
		}
		v[l.Key] = l.RV
	}
	return v, nil
}

func (r *Run) handlers() error {
	_, err := r.view(r.Lines)
	return err
}

// served is a complete sync the server served: a LIST's last page, or a
// watch-list's end bookmark, with a version.
type served struct {
	rv    int64
	order int
}

// firstSyncs are the syncs a client may have taken first, in the order
// served: every sync up to and including the first one served whole. A
// watch-list's end bookmark that came after a malformed event of its own
// stream is served but not necessarily taken: a client may leave the
// stream at the malformed event (ours does, MalformedEventError; so does
// client-go's StreamWatcher on an event it cannot decode), and then its
// first sync is a later one. ok is false if the server served none.
func (r *Run) firstSyncs() (syncs []served, ok bool) {
	for _, q := range r.requests() {
		if n, ok := exactVersion(q.RV); ok && q.Verb == "list" && q.Code == 200 && q.Continue == "" {
			return append(syncs, served{n, q.Order}), true
		}
		bad := map[string]int{}
		for _, e := range q.Malformed {
			bad[e]++
		}
		left := false // whether a malformed event came before this one
		for _, e := range q.Events {
			if bad[e] > 0 {
				bad[e]--
				left = true
				continue
			}
			if v, end := strings.CutSuffix(e, " end"); end {
				if n, ok := exactVersion(strings.TrimPrefix(v, "BOOKMARK ")); ok {
					syncs = append(syncs, served{n, q.Order})
					if !left {
						return syncs, true
					}
				}
			}
		}
	}
	return syncs, len(syncs) > 0
}

// initialAdds: every object of the first sync the client took got an
// add. Where the client may have left a stream at a malformed event
// (firstSyncs), the adds must cover one of the syncs it may have taken.
func (r *Run) initialAdds() error {
	syncs, ok := r.firstSyncs()
	if !ok {
		return nil
	}
	added := map[string]bool{}
	for _, l := range r.Lines {
		if l.Type == LineAdd {
			added[l.Key] = true
		}
	}
	// missing is the first object of the sync at rv without an add.
	missing := func(rv int64) (string, string, bool) {
		snap, _ := r.snapshot(rv)
		for _, k := range slices.Sorted(maps.Keys(snap)) {
			if !added[k] {
				return k, snap[k], true
			}
		}
		return "", "", false
	}
	for _, s := range syncs {
		if _, _, missed := missing(s.rv); !missed {
			return nil
		}
	}
	k, rv, _ := missing(syncs[0].rv)
	v := &checkkit.Violation{Guarantee: GInitialAdds,
		Detail: fmt.Sprintf("%s@%s was in the first sync (version %d) and never got an add", k, rv, syncs[0].rv)}
	if len(syncs) > 1 {
		var later []string
		for _, s := range syncs[1:] {
			later = append(later, strconv.FormatInt(s.rv, 10))
		}
		v.Detail += fmt.Sprintf(", nor did the adds cover a later sync the client may have taken instead, having left a stream at a malformed event (version %s)", strings.Join(later, ", "))
	}
	return v
}

func cacheOf(st Line) map[string]string {
	out := make(map[string]string, len(st.Cache))
	for _, o := range st.Cache {
		out[o.Key] = o.RV
	}
	return out
}

// earned: at every sample, the cache is not behind the version the
// client reports. An object it holds at a version at or below the
// reported one must be the server's state there; an object the server
// had there must be held unless a later write deleted it. Being ahead (an
// object newer than the reported version, a later delete applied) is not
// a violation: a client may report its version lazily, and convergence
// holds it to equality once the server is quiet.
func (r *Run) earned() error {
	for _, s := range r.Samples {
		if s.State.RV == "" {
			continue
		}
		n, ok := exactVersion(s.State.RV)
		if !ok || n > s.RV {
			return checkkit.Broke(GEarned, "after step %d the client reports version %q, the server is at %d", s.Step, s.State.RV, s.RV)
		}
		snap, _ := r.snapshot(n)
		cache, behind := cacheOf(s.State), map[string]string{}
		for k, v := range cache {
			if c, _ := exactVersion(v); c <= n && snap[k] != v {
				behind[k] = v // stale, or a ghost
			}
		}
		for k := range snap {
			if _, held := cache[k]; !held && !r.deletedAfter(k, n, s.RV) {
				behind[k] = "" // missing
			}
		}
		if len(behind) > 0 {
			return checkkit.Broke(GEarned, "after step %d the client reports version %d, whose state its cache does not hold: %s", s.Step, n, diff(snapOf(behind, cache), snapOf(behind, snap)))
		}
	}
	return nil
}

// snapOf is snap restricted to keys.
func snapOf(keys, snap map[string]string) map[string]string {
	out := map[string]string{}
	for k := range keys {
		if v, ok := snap[k]; ok {
			out[k] = v
		}
	}
	return out
}

// deletedAfter reports whether key was absent from some state in (from, to].
func (r *Run) deletedAfter(key string, from, to int64) bool {
	for v := from + 1; v <= to; v++ {
		if snap, ok := r.snapshot(v); ok {
			if _, present := snap[key]; !present {
				return true
			}
		}
	}
	return false
}

func (r *Run) synced() error {
	syncs, ok := r.firstSyncs()
	order := 0
	if ok {
		order = syncs[0].order // the earliest a client may have synced
	}
	for _, s := range r.Samples {
		if !hasSynced(r.Lines[:min(s.Lines, len(r.Lines))]) {
			continue
		}
		if !ok || order > s.Order {
			return checkkit.Broke(GSynced, "synced reported by step %d, before the server served a complete sync", s.Step)
		}
		return nil
	}
	return nil // never reported: convergence names it
}

// converged: the sample's cache and the handlers' view are the server's
// state, the reported version (if any) is earned, and synced was reported.
func (r *Run) converged(s Sample, lines []Line) bool {
	if s.Err != nil {
		return false
	}
	shot := r.SingleShot && s.Shot.Ended
	if !shot && !hasSynced(lines) {
		return false
	}
	v, err := r.view(lines)
	if err != nil {
		return false
	}
	owed := r.owed(s)
	if shot {
		// The shot's state is owed, not a version (none is at stake once
		// it ended), nor synced.
		return len(owed) == 0 || slices.ContainsFunc(owed, func(m map[string]string) bool {
			return maps.Equal(v, m) && maps.Equal(cacheOf(s.State), m)
		})
	}
	now := owed[0]
	if !maps.Equal(v, now) || !maps.Equal(cacheOf(s.State), now) {
		return false
	}
	if s.State.RV == "" {
		return true
	}
	n, ok := exactVersion(s.State.RV)
	snap, _ := r.snapshot(n)
	return ok && maps.Equal(snap, now)
}

func (r *Run) convergence() error {
	if r.Converged {
		return nil
	}
	last := r.Samples[len(r.Samples)-1]
	now := map[string]string{}
	if owed := r.owed(last); len(owed) > 0 {
		now = owed[0]
	}
	v, _ := r.view(r.Lines)
	against := func(m map[string]string) string {
		if maps.Equal(m, now) {
			return "equal"
		}
		return diff(m, now)
	}
	reported := fmt.Sprintf("%q", last.State.RV)
	if n, ok := exactVersion(last.State.RV); ok {
		if snap, _ := r.snapshot(n); !maps.Equal(snap, now) {
			reported += " (not the server's state: " + diff(snap, now) + ")"
		}
	}
	synced := "reported"
	if !hasSynced(r.Lines) {
		synced = "never reported"
	}
	qs := r.requests()
	owes := fmt.Sprintf("server at %d %s", last.RV, show(now))
	if r.SingleShot && last.Shot.Ended {
		owes = fmt.Sprintf("the single shot ended, owing the state at version %d %s (the server at %d)", last.Shot.RVs[0], show(now), last.RV)
		if len(last.Shot.RVs) > 1 {
			owes += fmt.Sprintf(", or at %d past its malformed events (%d: the server's now)", last.Shot.RVs[1], ShotNow)
		}
	}
	return checkkit.Broke(GConverge, "not converged after the bound: %s; cache %s; handlers %s; reported version %s; synced %s; last requests: %s",
		owes, against(cacheOf(last.State)), against(v), reported, synced, describe(qs[max(0, len(qs)-4):]))
}

// show is a state in key order: {default/o000@3 default/o001@5}.
func show(m map[string]string) string {
	parts := make([]string, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, k+"@"+m[k])
	}
	return "{" + strings.Join(parts, " ") + "}"
}

// diff says how got differs from want: "missing [k@rv]; stale [k@rv, not
// @rv]; ghost [k@rv]", the parts that apply.
func diff(got, want map[string]string) string {
	var missing, stale, ghost []string
	for _, k := range slices.Sorted(maps.Keys(want)) {
		switch g, ok := got[k]; {
		case !ok:
			missing = append(missing, k+"@"+want[k])
		case g != want[k]:
			stale = append(stale, k+"@"+g+", not @"+want[k])
		}
	}
	for _, k := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[k]; !ok {
			ghost = append(ghost, k+"@"+got[k])
		}
	}
	var parts []string
	for _, p := range []struct {
		name string
		l    []string
	}{{"missing", missing}, {"stale", stale}, {"ghost", ghost}} {
		if len(p.l) > 0 {
			parts = append(parts, p.name+" ["+strings.Join(p.l, " ")+"]")
		}
	}
	return strings.Join(parts, "; ")
}

// MalformedShape ends the Shape of a declared divergence that only a run
// whose server sent malformed events meets: the judge appends their list
// to the violation's detail, before the schedule.
const MalformedShape = `, after malformed events \["[^\]]*"\] \[schedule `
