// Package workqueue is the reference model of a work queue: a FIFO, a dirty
// set and a processing set, as client-go's workqueue documents them (fair,
// stingy, re-enqueueable, with shutdown and drain).
//
// The model is pure: no goroutines, no clock, no randomness. Blocking
// operations are partial: Enabled reports whether an operation could return
// in a given state, and a checker only applies an operation when it is.
// Model values are immutable from the outside: every transition returns a
// new Model, so a Model can serve as a porcupine state, as rapid's expected
// value and as a fuzz oracle at the same time.
package workqueue

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Kind names an operation on a work queue.
type Kind uint8

// The operations of a work queue. Get and ShutDownWithDrain may block; the
// others never do.
const (
	Add Kind = iota
	Get
	Done
	Len
	ShutDown
	ShutDownWithDrain
	ShuttingDown
)

var kindNames = [...]string{"Add", "Get", "Done", "Len", "ShutDown", "ShutDownWithDrain", "ShuttingDown"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", k)
}

// ParseKind is the inverse of Kind.String.
func ParseKind(s string) (Kind, error) {
	for i, n := range kindNames {
		if n == s {
			return Kind(i), nil
		}
	}
	return 0, fmt.Errorf("workqueue: unknown operation %q", s)
}

// Op is one call on a queue. Key is the item for Add and Done; Priority is
// Add's priority under a profile with Priorities (AddWithOpts with a
// priority), zero otherwise.
type Op struct {
	Kind     Kind
	Key      string
	Priority int
}

func (o Op) String() string {
	switch o.Kind {
	case Add:
		if o.Priority != 0 {
			return fmt.Sprintf("Add(%s, priority %d)", o.Key, o.Priority)
		}
		return fmt.Sprintf("Add(%s)", o.Key)
	case Done:
		return fmt.Sprintf("%s(%s)", o.Kind, o.Key)
	default:
		return o.Kind.String() + "()"
	}
}

// Out is what an operation returned. Key and Shutdown are Get's results
// (Priority too, under a profile with Priorities: GetWithPriority), N is
// Len's, Flag is ShuttingDown's.
type Out struct {
	Key      string
	Priority int
	Shutdown bool
	N        int
	Flag     bool
}

// Model is the state of a work queue. The zero value is an empty, running
// queue. Treat it as immutable; use the transition methods.
type Model struct {
	profile      Profile
	queue        []string        // FIFO (by priority level, highest first, under profile.Priorities); every element is dirty (and, unless profile.ReAddQueues, not processing)
	dirty        map[string]bool // needs processing
	priority     map[string]int  // of each dirty key, under profile.Priorities
	processing   map[string]bool // handed out by Get, not yet Done
	shuttingDown bool
	// released is set by ShutDown and cleared by the start of a
	// ShutDownWithDrain: ShutDown makes a waiting drain return at once.
	released bool
	// counts is the history the queue's metrics count (Counts).
	counts Counts
}

// Counts is a queue's history as its metrics count it (client-go v0.37.2's
// defaultQueueMetrics, util/workqueue/metrics.go:92-126, which ours and
// controller-runtime's priority queue copy): Adds, the times an Add made a
// key dirty (the adds counter: an Add that collapses into a dirty key, or
// only raises its priority, is not counted; the depth gauge is Dirties);
// Gets, the items handed out (one queue-latency observation each); Dones,
// the Dones of a key being processed (one work-duration observation each).
// They are history, not state: Key leaves them out, so two models in the
// same state are equal whatever they counted.
type Counts struct {
	Adds, Gets, Dones int64
}

// Counts returns what the queue's metrics must have counted so far.
func (m Model) Counts() Counts { return m.counts }

// New returns an empty, running queue that behaves as profile says. The
// zero Model is New(ClientGo).
func New(profile Profile) Model { return Model{profile: profile} }

// Profile returns the model's profile.
func (m Model) Profile() Profile { return m.profile }

// available returns the index of the first queued key Get may hand out (not
// being processed), or -1.
func (m Model) available() int {
	for i, k := range m.queue {
		if !m.processing[k] {
			return i
		}
		if !m.profile.ReAddQueues {
			break // without ReAddQueues no queued key is processing
		}
	}
	return -1
}

// Queue returns the FIFO contents, oldest first.
func (m Model) Queue() []string { return slices.Clone(m.queue) }

// Dirty reports whether key waits to be processed.
func (m Model) Dirty(key string) bool { return m.dirty[key] }

// Processing reports whether key has been handed out and not yet Done.
func (m Model) Processing(key string) bool { return m.processing[key] }

// ProcessingKeys returns the keys being processed, sorted.
func (m Model) ProcessingKeys() []string { return sortedKeys(m.processing) }

// IsShuttingDown reports whether ShutDown or ShutDownWithDrain was called.
func (m Model) IsShuttingDown() bool { return m.shuttingDown }

// Enabled reports whether op can return in state m. Get waits for an item or
// shutdown; ShutDownWithDrain waits until every item accepted before it has
// been handed out and marked Done (the FIFO and the processing set are
// empty). This drain is the documented contract; client-go v0.37.2 waits
// for the processing set only (a declared divergence).
func (m Model) Enabled(op Op) bool {
	switch op.Kind {
	case Get:
		return m.available() >= 0 || m.shuttingDown
	case ShutDownWithDrain:
		return m.profile.DrainIsShutDown || m.released || (len(m.queue) == 0 && len(m.processing) == 0)
	}
	return true
}

// Step applies op to m and returns the new state and the expected output.
// It must only be called when m.Enabled(op). A ShutDownWithDrain step is the
// return of the call: its start is modelled by Begin. m is not changed.
func (m Model) Step(op Op) (Model, Out) {
	if !m.mutates(op) {
		c := m // shares the maps, which Apply leaves alone for this op
		return m, c.Apply(op)
	}
	n := m.clone()
	out := n.Apply(op)
	return n, out
}

// mutates reports whether op changes the state. Step shares the state of
// an unchanged model instead of copying it.
func (m Model) mutates(op Op) bool {
	switch op.Kind {
	case Add:
		return !m.shuttingDown && (!m.dirty[op.Key] || m.raises(op))
	case Get:
		return m.available() >= 0 && !(m.shuttingDown && m.profile.GetStopsAtShutDown)
	case Done:
		return m.processing[op.Key]
	case Len, ShuttingDown:
		return false
	}
	return true
}

// Apply is Step in place: it changes m and returns the expected output. Use
// it on a model nothing else shares (Step's results share nothing with
// their argument; plain copies of a Model do share). It is what checkers
// that drive large states use: Step copies the state on every change.
func (m *Model) Apply(op Op) Out {
	switch op.Kind {
	case Add:
		if m.shuttingDown {
			return Out{}
		}
		m.init()
		if m.dirty[op.Key] {
			// Only a higher priority changes a dirty key: it moves to the
			// back of its new level, if it is queued.
			if m.raises(op) {
				m.priority[op.Key] = op.Priority
				if i := slices.Index(m.queue, op.Key); i >= 0 {
					m.queue = slices.Delete(m.queue, i, i+1)
					m.enqueue(op.Key)
				}
			}
			return Out{}
		}
		m.dirty[op.Key] = true
		m.counts.Adds++
		if m.profile.Priorities {
			m.priority[op.Key] = op.Priority
		}
		if !m.processing[op.Key] || m.profile.ReAddQueues {
			m.enqueue(op.Key)
		}
		return Out{}
	case Get:
		i := m.available()
		if i < 0 || m.shuttingDown && m.profile.GetStopsAtShutDown {
			return Out{Shutdown: true}
		}
		m.init()
		key := m.queue[i]
		if i == 0 {
			m.queue[0] = ""
			m.queue = m.queue[1:]
		} else {
			m.queue = slices.Delete(m.queue, i, i+1)
		}
		p := m.priority[key]
		delete(m.dirty, key)
		delete(m.priority, key)
		m.processing[key] = true
		m.counts.Gets++
		return Out{Key: key, Priority: p}
	case Done:
		// Done of a key that is not being processed is a no-op: the caller
		// broke the contract, and the queue must not invent a second copy
		// of the key (client-go v0.37.2 does; a declared divergence).
		if !m.processing[op.Key] {
			return Out{}
		}
		delete(m.processing, op.Key)
		m.counts.Dones++
		if m.dirty[op.Key] && !m.profile.ReAddQueues {
			m.enqueue(op.Key)
		}
		return Out{}
	case Len:
		return Out{N: m.Len()}
	case ShutDown:
		m.shuttingDown, m.released = true, true
		return Out{}
	case ShutDownWithDrain:
		m.shuttingDown = true
		return Out{}
	case ShuttingDown:
		return Out{Flag: m.shuttingDown}
	}
	panic(fmt.Sprintf("workqueue model: unknown op %v", op))
}

// Begin is the effect of starting ShutDownWithDrain: the queue stops taking
// new items at once, before the call returns, and the drain waits even if
// ShutDown was called earlier.
func (m Model) Begin(op Op) Model {
	if op.Kind != ShutDownWithDrain {
		return m
	}
	n := m.clone()
	n.ApplyBegin(op)
	return n
}

// ApplyBegin is Begin in place (see Apply).
func (m *Model) ApplyBegin(op Op) {
	if op.Kind == ShutDownWithDrain {
		m.shuttingDown, m.released = true, false
	}
}

// raises reports whether op is an Add that raises a dirty key's priority.
func (m Model) raises(op Op) bool {
	return m.profile.Priorities && op.Kind == Add && m.dirty[op.Key] && op.Priority > m.priority[op.Key]
}

// enqueue queues key behind every queued key of its priority or higher
// (at the back, without Priorities).
func (m *Model) enqueue(key string) {
	i := len(m.queue)
	if m.profile.Priorities {
		for i > 0 && m.priority[m.queue[i-1]] < m.priority[key] {
			i--
		}
	}
	m.queue = slices.Insert(m.queue, i, key)
}

func (m *Model) init() {
	if m.dirty == nil {
		m.dirty = map[string]bool{}
	}
	if m.priority == nil {
		m.priority = map[string]int{}
	}
	if m.processing == nil {
		m.processing = map[string]bool{}
	}
}

// Len is what Len returns: the number of queued items that Get may hand
// out, plus, under LenCountsReAdded, the items added again while being
// processed. It does not copy the queue as Queue does.
func (m Model) Len() int {
	n := len(m.queue)
	for _, k := range m.queue {
		if m.processing[k] {
			n-- // only under ReAddQueues; counted below if the profile says so
		}
	}
	if m.profile.LenCountsReAdded {
		for k := range m.processing {
			if m.dirty[k] {
				n++
			}
		}
	}
	return n
}

// Head returns the first n keys a Get would hand out (all of them if
// fewer), oldest first: the queued keys not being processed.
func (m Model) Head(n int) []string {
	if !m.profile.ReAddQueues {
		return slices.Clone(m.queue[:min(n, len(m.queue))])
	}
	var out []string
	for _, k := range m.queue {
		if len(out) == n {
			break
		}
		if !m.processing[k] {
			out = append(out, k)
		}
	}
	return out
}

// Ready is the number of queued items Gets would hand out now: the queued
// keys not being processed, or none once shut down under
// GetStopsAtShutDown. Under client-go's profile it is Len.
func (m Model) Ready() int {
	if m.shuttingDown && m.profile.GetStopsAtShutDown {
		return 0
	}
	n := len(m.queue)
	if m.profile.ReAddQueues {
		for _, k := range m.queue {
			if m.processing[k] {
				n--
			}
		}
	}
	return n
}

// Queued reports whether key waits in the FIFO to be handed out (dirty and
// not being processed).
func (m Model) Queued(key string) bool { return m.dirty[key] && !m.processing[key] }

// Dirties is the number of dirty keys: queued, or added again while being
// processed.
func (m Model) Dirties() int { return len(m.dirty) }

// Clone returns a copy of m that shares nothing with it, for in-place use
// with Apply.
func (m Model) Clone() Model { return m.clone() }

func (m Model) clone() Model {
	n := Model{
		profile:      m.profile,
		queue:        slices.Clone(m.queue),
		dirty:        make(map[string]bool, len(m.dirty)+1),
		processing:   make(map[string]bool, len(m.processing)+1),
		shuttingDown: m.shuttingDown,
		released:     m.released,
		counts:       m.counts,
	}
	for k := range m.dirty {
		n.dirty[k] = true
	}
	for k := range m.processing {
		n.processing[k] = true
	}
	if len(m.priority) > 0 {
		n.priority = maps.Clone(m.priority)
	}
	return n
}

// Key is a canonical encoding of the state: equal states have equal keys.
// Porcupine uses it for Equal and Hash.
func (m Model) Key() string {
	var b strings.Builder
	b.WriteString("q=")
	b.WriteString(strings.Join(m.queue, ","))
	if len(m.priority) > 0 {
		fmt.Fprintf(&b, " prio=%v", m.priority) // fmt prints maps sorted by key
	}
	b.WriteString(" d=")
	b.WriteString(strings.Join(sortedKeys(m.dirty), ","))
	b.WriteString(" p=")
	b.WriteString(strings.Join(sortedKeys(m.processing), ","))
	if m.shuttingDown {
		b.WriteString(" shut")
	}
	if m.released {
		b.WriteString(" released")
	}
	return b.String()
}

func (m Model) String() string { return "{" + m.Key() + "}" }

// Invariant checks the model's own laws: the FIFO has no duplicates, every
// queued key is dirty and not processing. It exists so the model can be
// fuzzed on its own.
func (m Model) Invariant() error {
	seen := map[string]bool{}
	for _, k := range m.queue {
		if seen[k] {
			return fmt.Errorf("key %q queued twice", k)
		}
		seen[k] = true
		if !m.dirty[k] || m.processing[k] && !m.profile.ReAddQueues {
			return fmt.Errorf("queued key %q: dirty=%v processing=%v", k, m.dirty[k], m.processing[k])
		}
	}
	for i := 1; i < len(m.queue); i++ {
		if m.priority[m.queue[i-1]] < m.priority[m.queue[i]] {
			return fmt.Errorf("queued key %q (priority %d) behind %q (priority %d)", m.queue[i], m.priority[m.queue[i]], m.queue[i-1], m.priority[m.queue[i-1]])
		}
	}
	for k := range m.dirty {
		if !seen[k] && !m.processing[k] {
			return fmt.Errorf("dirty key %q neither queued nor processing", k)
		}
	}
	return nil
}

func sortedKeys(s map[string]bool) []string {
	ks := make([]string, 0, len(s))
	for k := range s {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
