// Package delaying is the reference model of a delaying work queue: the
// work queue of spec/workqueue plus a set of items waiting for a ready time.
//
// The model is pure: no goroutines, no clock, no randomness. Time is an
// input: AddAfter takes the current time, and Advance(now) is the
// implementation's waiting loop catching up with the clock. Model values are
// immutable from the outside: every transition returns a new Model.
//
// Rules:
//   - AddAfter(key, d, now) with d <= 0 is the queue's Add, at once. It does
//     not touch a waiting entry for key.
//   - AddAfter with d > 0 makes key wait until now+d. If key already waits,
//     the earlier ready time wins; a later or equal one is discarded.
//   - Waiting entries are ordered by ready time, then by the order in which
//     their ready times were set (an entry whose ready time is lowered goes
//     behind entries already waiting for the same time).
//   - Advance(now) moves every entry with ready time <= now into the queue,
//     in that order, each as the queue's Add. AdvanceOne moves only the
//     first, for checkers whose implementation moves entries one at a time.
//   - Under a profile (spec/workqueue.Profile, given to New): with
//     AddAfterAbsorbed, AddAfter with d > 0 of a dirty key does nothing;
//     with AddClearsWaiting, an Add (AddAfter with d <= 0 included) of a
//     waiting key drops its entry; with TiesByFirstAdd, a lowered ready
//     time keeps the entry's rank among equal ready times.
//   - Once shutting down, AddAfter is ignored. ShutDown and the start of
//     ShutDownWithDrain (Begin) drop every waiting entry: a drain waits only
//     for queued and processing items, never for waiting ones.
//   - The plain queue operations (Add, Get, Done, Len, ShuttingDown) are the
//     queue model's; Len does not count waiting entries.
//   - Metrics: an entry that moves is an Add, counted in the queue's Counts
//     as one (an add if it makes the key dirty, nothing if it collapses);
//     a waiting entry is not dirty, so depth (Dirties) leaves it out.
//     Retries counts the AddAfter calls made before shutdown (all of them,
//     or those with a positive delay under RetriesCountDelayed).
//
// Ready times are now.Add(d) with the monotonic reading stripped; Go's
// time.Time.Add saturates instead of wrapping, so huge delays stay in the
// future.
package delaying

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kverify/kverify/spec/workqueue"
)

// Entry is a key waiting for its ready time.
type Entry struct {
	Key     string
	ReadyAt time.Time
}

func (e Entry) String() string {
	return e.Key + "@" + e.ReadyAt.UTC().Format(time.RFC3339Nano)
}

// wait is a waiting entry's ready time, its rank among equal ready times,
// and, under a profile with Priorities, the priority it will be added with.
type wait struct {
	readyAt  time.Time
	seq      uint64
	priority int
}

// before orders waiting entries as they move: by ready time, then (under
// Priorities) the higher priority, then rank.
func (m Model) before(a, b wait) bool {
	if !a.readyAt.Equal(b.readyAt) {
		return a.readyAt.Before(b.readyAt)
	}
	if m.q.Profile().Priorities && a.priority != b.priority {
		return a.priority > b.priority
	}
	return a.seq < b.seq
}

// Model is the state of a delaying work queue. The zero value is an empty,
// running queue with nothing waiting. Treat it as immutable; use the
// transition methods.
type Model struct {
	q       workqueue.Model
	waiting map[string]wait
	seq     uint64 // last rank handed out; only relative order is observable
	// retries is the history the retries metric counts (Retries); like
	// the queue's Counts, not part of the state (Key).
	retries int64
}

// Retries is the number of AddAfter calls (AddRateLimited, a composed add)
// the queue's retries metric must have counted: every one made before
// shutdown, whatever its delay (client-go v0.37.2,
// util/workqueue/delaying_queue.go:249-255), or, under
// Profile.RetriesCountDelayed, those whose delay is positive. The queue's
// other metrics are its Counts and Dirties (Queue).
func (m Model) Retries() int64 { return m.retries }

// New returns an empty, running delaying queue that behaves as profile
// says. The zero Model is New(workqueue.ClientGo).
func New(profile workqueue.Profile) Model { return Model{q: workqueue.New(profile)} }

// Queue returns the state of the underlying work queue.
func (m Model) Queue() workqueue.Model { return m.q }

// IsShuttingDown reports whether ShutDown or ShutDownWithDrain was called.
func (m Model) IsShuttingDown() bool { return m.q.IsShuttingDown() }

// AddAfter is AddAfter(key, d) called at time now. m is not changed.
func (m Model) AddAfter(key string, d time.Duration, now time.Time) Model {
	n := m.clone()
	n.ApplyAddAfter(key, d, now)
	return n
}

// ApplyAddAfter is AddAfter in place. Like workqueue.Model.Apply, the
// in-place methods are for checkers that own their model and drive large
// states; plain copies of a Model share its maps.
func (m *Model) ApplyAddAfter(key string, d time.Duration, now time.Time) {
	m.ApplyAddAfterPriority(key, d, 0, now)
}

// ApplyAddAfterPriority is AddAfter with a priority (controller-runtime's
// AddWithOpts with After and Priority), in place. Under a profile without
// Priorities the priority is ignored. With Priorities, a waiting entry
// keeps the higher of two priorities, and a raise ranks it anew among
// equal ready times; with AddAfterAbsorbed, a delay of a dirty key only
// raises its priority.
func (m *Model) ApplyAddAfterPriority(key string, d time.Duration, priority int, now time.Time) {
	if m.q.IsShuttingDown() {
		return
	}
	p := m.q.Profile()
	if d > 0 || !p.RetriesCountDelayed {
		m.retries++
	}
	if !p.Priorities {
		priority = 0
	}
	if d <= 0 {
		m.Apply(workqueue.Op{Kind: workqueue.Add, Key: key, Priority: priority})
		return
	}
	if p.AddAfterAbsorbed && m.q.Dirty(key) {
		if p.Priorities {
			m.q.Apply(workqueue.Op{Kind: workqueue.Add, Key: key, Priority: priority}) // a raise, or nothing
		}
		return
	}
	readyAt := now.Add(d).Round(0)
	w, ok := m.waiting[key]
	raise := ok && priority > w.priority
	if ok && !readyAt.Before(w.readyAt) && !raise {
		return // the earlier ready time wins
	}
	if ok && w.readyAt.Before(readyAt) {
		readyAt = w.readyAt
	}
	if m.waiting == nil {
		m.waiting = map[string]wait{}
	}
	if !ok || !p.TiesByFirstAdd || raise {
		m.seq++
		w.seq = m.seq
	}
	if !ok || raise {
		w.priority = priority
	}
	w.readyAt = readyAt
	m.waiting[key] = w
}

// ComposedDelay is the delay of an add that is both delayed by after and
// rate-limited with the limiter's answer when (controller-runtime's
// AddWithOpts with After and RateLimited): the smaller of the two, or when
// if after is zero.
func ComposedDelay(after, when time.Duration) time.Duration {
	if after == 0 || when < after {
		return when
	}
	return after
}

// Advance moves every entry whose ready time is <= now into the queue, in
// (ready time, order set) order. m is not changed.
func (m Model) Advance(now time.Time) Model {
	n := m.clone()
	n.ApplyAdvance(now)
	return n
}

// ApplyAdvance is Advance in place; it returns the entries moved, in the
// order they moved.
func (m *Model) ApplyAdvance(now time.Time) []Entry {
	due := m.Due(now)
	for _, e := range due {
		p := m.waiting[e.Key].priority
		delete(m.waiting, e.Key)
		m.q.Apply(workqueue.Op{Kind: workqueue.Add, Key: e.Key, Priority: p})
	}
	return due
}

// Due returns the entries whose ready time is <= now, in the order Advance
// moves them.
func (m Model) Due(now time.Time) []Entry {
	return m.entries(func(w wait) bool { return !w.readyAt.After(now) })
}

// AdvanceOne moves the first waiting entry into the queue if its ready time
// is <= now, and reports whether it did. m is not changed.
func (m Model) AdvanceOne(now time.Time) (Model, bool) {
	e, ok := m.first()
	if !ok || e.ReadyAt.After(now) {
		return m, false
	}
	n := m.clone()
	p := n.waiting[e.Key].priority
	delete(n.waiting, e.Key)
	n.q.Apply(workqueue.Op{Kind: workqueue.Add, Key: e.Key, Priority: p})
	return n, true
}

// NextReadyAt returns the earliest ready time of a waiting entry, or false
// if nothing waits.
func (m Model) NextReadyAt() (time.Time, bool) {
	e, ok := m.first()
	return e.ReadyAt, ok
}

// Waiting returns the waiting entries in the order they will be moved into
// the queue: by ready time, then by the order their ready times were set.
func (m Model) Waiting() []Entry { return m.entries(func(wait) bool { return true }) }

// entries returns the waiting entries that keep holds, in move order.
func (m Model) entries(keep func(wait) bool) []Entry {
	type ranked struct {
		Entry
		w wait
	}
	var rs []ranked
	for k, w := range m.waiting {
		if keep(w) {
			rs = append(rs, ranked{Entry{k, w.readyAt}, w})
		}
	}
	slices.SortFunc(rs, func(a, b ranked) int {
		switch {
		case m.before(a.w, b.w):
			return -1
		case m.before(b.w, a.w):
			return 1
		}
		return 0
	})
	es := make([]Entry, len(rs))
	for i, r := range rs {
		es[i] = r.Entry
	}
	return es
}

// first returns the entry Advance would move first.
func (m Model) first() (Entry, bool) {
	var (
		best Entry
		bw   wait
		ok   bool
	)
	for k, w := range m.waiting {
		if !ok || m.before(w, bw) {
			best, bw, ok = Entry{k, w.readyAt}, w, true
		}
	}
	return best, ok
}

// Enabled reports whether the plain queue operation op can return in state
// m; see workqueue.Model.Enabled. AddAfter and Advance are always enabled.
func (m Model) Enabled(op workqueue.Op) bool { return m.q.Enabled(op) }

// Step applies the plain queue operation op and returns the new state and
// the expected output; see workqueue.Model.Step. ShutDown and
// ShutDownWithDrain also drop every waiting entry. m is not changed.
func (m Model) Step(op workqueue.Op) (Model, workqueue.Out) {
	if _, waits := m.waiting[op.Key]; op.Kind == workqueue.Add && waits && m.q.Profile().AddClearsWaiting {
		n := m.clone()
		return n, n.Apply(op)
	}
	n := m
	var out workqueue.Out
	n.q, out = m.q.Step(op)
	if op.Kind == workqueue.ShutDown || op.Kind == workqueue.ShutDownWithDrain {
		n.waiting = nil
	}
	return n, out
}

// Apply is Step in place.
func (m *Model) Apply(op workqueue.Op) workqueue.Out {
	if w, ok := m.waiting[op.Key]; ok && op.Kind == workqueue.Add && m.q.Profile().AddClearsWaiting && !m.q.IsShuttingDown() {
		op.Priority = max(op.Priority, w.priority) // the higher of the two
		delete(m.waiting, op.Key)
	}
	out := m.q.Apply(op)
	if op.Kind == workqueue.ShutDown || op.Kind == workqueue.ShutDownWithDrain {
		m.waiting = nil
	}
	return out
}

// Begin is the effect of starting ShutDownWithDrain: the queue stops taking
// new items and every waiting entry is dropped, before the call returns.
// m is not changed.
func (m Model) Begin(op workqueue.Op) Model {
	if op.Kind != workqueue.ShutDownWithDrain {
		return m
	}
	n := m
	n.q = m.q.Begin(op)
	n.waiting = nil
	return n
}

// ApplyBegin is Begin in place.
func (m *Model) ApplyBegin(op workqueue.Op) {
	if op.Kind == workqueue.ShutDownWithDrain {
		m.q.ApplyBegin(op)
		m.waiting = nil
	}
}

// WaitsAt reports whether a key other than key waits for ready time at.
func (m Model) WaitsAt(at time.Time, key string) bool {
	for k, w := range m.waiting {
		if k != key && w.readyAt.Equal(at) {
			return true
		}
	}
	return false
}

// WaitingLen is the number of waiting entries.
func (m Model) WaitingLen() int { return len(m.waiting) }

// ReadyAt returns key's ready time if it waits.
func (m Model) ReadyAt(key string) (time.Time, bool) {
	w, ok := m.waiting[key]
	return w.readyAt, ok
}

// Clone returns a copy of m that shares nothing with it, for in-place use.
func (m Model) Clone() Model { return m.clone() }

// clone copies the model so that the copy shares nothing with m.
func (m Model) clone() Model {
	n := m
	n.q = m.q.Clone()
	n.waiting = make(map[string]wait, len(m.waiting)+1)
	for k, w := range m.waiting {
		n.waiting[k] = w
	}
	return n
}

// Key is a canonical encoding of the state: equal states have equal keys.
// Waiting entries appear in the order they will fire; the ranks themselves
// are not part of the state, only the order they give.
func (m Model) Key() string {
	var b strings.Builder
	b.WriteString(m.q.Key())
	b.WriteString(" w=")
	for i, e := range m.Waiting() {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(e.String())
	}
	return b.String()
}

func (m Model) String() string { return "{" + m.Key() + "}" }

// Invariant checks the model's own laws: the queue model's, and nothing
// waits once the queue is shutting down.
func (m Model) Invariant() error {
	if err := m.q.Invariant(); err != nil {
		return err
	}
	if m.q.IsShuttingDown() && len(m.waiting) > 0 {
		return fmt.Errorf("%d entries wait in a queue that is shutting down", len(m.waiting))
	}
	return nil
}
