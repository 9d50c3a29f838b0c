package informer

import (
	"fmt"
	"time"
)

// MinimumResyncPeriod is the smallest resync period a handler gets
// (client-go shared_informer.go:993).
const MinimumResyncPeriod = time.Second

// Resync is the model of a shared informer's resync schedule, as client-go
// v0.37.2 computes it: the handler period rules of AddEventHandlerWithOptions
// (shared_informer.go:999-1030, determineResyncPeriod :978-991), the
// reflector's resync timer armed at Run with the check period and re-armed
// after each round (reflector.go:443-536), and sharedProcessor.shouldResync
// (:1306-1324) with the listener's inclusive due test and its rescheduling
// from the round's time (:1535-1551).
//
// It is deterministic and has no clock: times are inputs. A round is due at
// Start + k × check period (k >= 1); the caller runs it with Round once the
// time has come, before anything that happens later.
type Resync struct {
	check time.Duration
	// started: Run was called (the check period is final); armed: the
	// resync timer runs, from start.
	started, armed bool
	start          time.Time
	rounds         int
	handlers       []ResyncHandler
}

// ResyncHandler is one handler's resync state in the model.
type ResyncHandler struct {
	// Requested is the period after the minimum and, once the informer has
	// started, the raise to the check period.
	Requested time.Duration
	// Effective is the period the schedule uses (0: never).
	Effective time.Duration
	// Next is the earliest round that resyncs the handler.
	Next    time.Time
	Removed bool
}

// NewResync is the model of an informer created with the given resync
// (check) period; 0 means the informer never resyncs.
func NewResync(check time.Duration) *Resync {
	if check < 0 {
		check = 0
	}
	return &Resync{check: check}
}

// CheckPeriod is the informer's check period so far.
func (m *Resync) CheckPeriod() time.Duration { return m.check }

// Len is the number of handlers added.
func (m *Resync) Len() int { return len(m.handlers) }

// Armed is when the resync timer was armed; false if it is not.
func (m *Resync) Armed() (time.Time, bool) { return m.start, m.armed }

// Handler returns handler i's state.
func (m *Resync) Handler(i int) ResyncHandler { return m.handlers[i] }

// AddHandler adds a handler asking for a resync every requested (>= 0) at
// now and returns its index.
func (m *Resync) AddHandler(requested time.Duration, now time.Time) int {
	if requested < 0 {
		requested = 0
	}
	if requested > 0 && requested < MinimumResyncPeriod {
		requested = MinimumResyncPeriod
	}
	if requested > 0 && requested < m.check {
		if m.started {
			requested = m.check
		} else {
			m.check = requested
			for i := range m.handlers {
				m.handlers[i].Effective = effective(m.handlers[i].Requested, m.check)
			}
		}
	}
	eff := effective(requested, m.check)
	m.handlers = append(m.handlers, ResyncHandler{Requested: requested, Effective: eff, Next: now.Add(eff)})
	return len(m.handlers) - 1
}

func effective(requested, check time.Duration) time.Duration {
	if requested == 0 || check == 0 {
		return 0
	}
	return max(requested, check)
}

// Remove removes handler i.
func (m *Resync) Remove(i int) { m.handlers[i].Removed = true }

// Start starts the informer at now with the resync timer armed at once:
// Run and Arm together, as when the first sync takes no time.
func (m *Resync) Start(now time.Time) {
	m.Run()
	m.Arm(now)
}

// Run marks the informer running: the check period is final, and a
// handler added from now on is raised to it.
func (m *Resync) Run() { m.started = true }

// Arm arms the resync timer at now. client-go arms it when the first sync
// has been stored, not at Run: ListAndWatchWithContext lists (or streams
// the initial events) and only then calls watchWithResync, which starts
// the timer (k8s.io/client-go@v0.37.2/tools/cache/reflector.go:470-551).
// Only the first Arm counts: the model has no relists.
func (m *Resync) Arm(now time.Time) {
	if !m.armed {
		m.started, m.armed, m.start = true, true, now
	}
}

// NextRound is the time of the next resync round; false if the timer is
// not armed or the informer never resyncs.
func (m *Resync) NextRound() (time.Time, bool) {
	if !m.armed || m.check == 0 {
		return time.Time{}, false
	}
	return m.start.Add(time.Duration(m.rounds+1) * m.check), true
}

// Round runs the next round and returns its time and the handlers due in it
// (which are rescheduled one effective period later). It panics if there is
// no next round: a bug in the caller.
func (m *Resync) Round() (time.Time, []int) {
	at, ok := m.NextRound()
	if !ok {
		panic(fmt.Sprintf("informer model: no resync round (started %v, check period %v)", m.started, m.check))
	}
	m.rounds++
	var due []int
	for i := range m.handlers {
		h := &m.handlers[i]
		if h.Removed || h.Effective == 0 || at.Before(h.Next) {
			continue
		}
		due = append(due, i)
		h.Next = at.Add(h.Effective)
	}
	return at, due
}
