// Package controller is the reference model of what a controller owes its
// keys: a Ledger fed, in the order they happened, the notifications its
// event handler got, the starts and ends of its reconciles and what each
// read from the cache, and that says at each step whether the controller
// kept its promises, and at the end whether every key was reconciled.
//
// The promises (client-go's sample-controller and controller-runtime's
// internal controller agree on them; see docs/controller.md):
//
//   - one at a time: a key's reconciles never overlap;
//   - caught up: a reconcile that starts after a notification of a key
//     reads a cache at or after that notification (the informer writes
//     its cache before it notifies);
//   - monotonic reads: between two reconciles of a key, the cache never
//     goes back in time;
//   - no busy loop: a reconcile is owed only by a notification since the
//     key's last reconcile started, a failure (not before the rate
//     limiter's delay) or a requested requeue (not before its delay);
//   - eventual reconcile: once nothing changes, every key's last reconcile
//     succeeded and read the server's state of the key (absent for a
//     deleted key the controller was ever told about).
//
// There are no goroutines, no clock and no randomness here: time is an
// input, as is every choice.
package controller

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Seen is one state of a key: present at a resource version, or absent.
// For a deletion, RV is the version of the deleted object as notified (0
// when unknown, a tombstone without its object).
type Seen struct {
	Present bool
	RV      int64
}

func (s Seen) String() string {
	if s.Present {
		return fmt.Sprintf("@%d", s.RV)
	}
	if s.RV > 0 {
		return fmt.Sprintf("absent(deleted@%d)", s.RV)
	}
	return "absent"
}

// atOrAfter reports whether a read r of the cache is at or after state s:
// a present s is read at its version or a later one, or absent (deleted
// since); an absent s is read absent or recreated at a later version.
func (r Seen) atOrAfter(s Seen) bool {
	switch {
	case s.Present && r.Present:
		return r.RV >= s.RV
	case s.Present:
		return true // deleted since: the delete's notification may still be coming
	case r.Present:
		return r.RV > s.RV
	}
	return true
}

// Outcome is how a reconcile ended.
type Outcome struct {
	// Failed: it returned an error or panicked.
	Failed bool
	// RequeueAfter: it succeeded and asked to be reconciled again after
	// this long.
	RequeueAfter time.Duration
}

func (o Outcome) String() string {
	switch {
	case o.Failed:
		return "failed"
	case o.RequeueAfter > 0:
		return "asked for a requeue after " + o.RequeueAfter.String()
	}
	return "succeeded"
}

// Limiter is the rate limiter the controller was given: client-go's
// per-item exponential failure limiter (ItemExponentialFailureRateLimiter),
// Base doubled per consecutive failure, capped at Max.
type Limiter struct{ Base, Max time.Duration }

// Delay is the wait after the n-th consecutive failure (n >= 1).
func (l Limiter) Delay(n int) time.Duration {
	d := l.Base
	for i := 1; i < n && d < l.Max; i++ {
		d *= 2
	}
	return min(d, l.Max)
}

// Broken is a promise the ledger saw broken.
type Broken struct {
	// Promise is one of the Promise* names.
	Promise string
	Detail  string
}

func (b *Broken) Error() string { return b.Promise + ": " + b.Detail }

// The promises, as Broken names them.
const (
	PromiseOneAtATime = "one at a time"
	PromiseCaughtUp   = "caught up"
	PromiseMonotonic  = "monotonic reads"
	PromiseBusyLoop   = "no busy loop"
	PromiseRetryDelay = "retry at the limiter's delay"
	PromiseRequeue    = "requeue after its delay"
	PromiseEventual   = "eventual reconcile"
	PromiseStopped    = "nothing after stop"
)

// Promises lists every promise, as Broken names them.
func Promises() []string {
	return []string{PromiseOneAtATime, PromiseCaughtUp, PromiseMonotonic, PromiseBusyLoop,
		PromiseRetryDelay, PromiseRequeue, PromiseEventual, PromiseStopped}
}

// key is one key's account.
type key struct {
	running bool
	// notified is the latest state the handler was told of (a delete wins
	// a tie with the same version); told: it was told of the key at all.
	notified Seen
	told     bool
	// wakes are the adds to the queue a reconcile of the key may follow:
	// notifications (at their time) and the retries and requeues the
	// controller scheduled (at their due time), not yet followed by one.
	wakes []wake
	// tokens are wakes at instant that may each still owe a reconcile
	// (see owed).
	instant time.Time
	tokens  int
	// read is what the last reconcile read; maxRead the highest present
	// version any reconcile of the key read.
	read, maxRead Seen
	reads         int
	// last is the last reconcile's outcome; failures counts consecutive
	// failures (the limiter's count, reset by a success).
	last     Outcome
	failures int
}

// wake is one add of a key to the queue: a notification, or a retry or
// requeue the controller scheduled at from, due at at.
type wake struct {
	at, from time.Time
	why      string
	// maybe: it need not come: the queue may have folded it into an
	// entry due earlier, or a reconcile started since superseded it.
	maybe bool
}

// The reasons of a wake.
const (
	wakeNotified = "notification"
	wakeRetry    = "retry"
	wakeRequeue  = "requeue"
)

// Ledger is one controller run's account of its keys. The zero value is
// not usable: call New.
type Ledger struct {
	lim     Limiter
	keys    map[string]*key
	stopped bool
	// Reconciles counts every reconcile started; Notifications every
	// notification.
	Reconciles, Notifications int
}

// New returns an empty ledger for a controller with the limiter lim.
func New(lim Limiter) *Ledger { return &Ledger{lim: lim, keys: map[string]*key{}} }

func (l *Ledger) key(k string) *key {
	s, ok := l.keys[k]
	if !ok {
		s = &key{}
		l.keys[k] = s
	}
	return s
}

// Notify records that the controller's handler was told of state s of
// key k at time at, just before it enqueues k.
func (l *Ledger) Notify(k string, s Seen, at time.Time) error {
	l.Notifications++
	if l.stopped {
		return &Broken{PromiseStopped, fmt.Sprintf("a notification of %s%s after the controller stopped", k, s)}
	}
	st := l.key(k)
	switch {
	case !s.Present:
		// A deletion comes after every state told before it, whatever
		// version its object (or a tombstone without one) carries.
		st.notified = Seen{RV: max(s.RV, st.notified.RV)}
	case !st.told || s.RV > st.notified.RV:
		st.notified = s
	}
	st.told = true
	st.wakes = append(st.wakes, wake{at: at, from: at, why: wakeNotified})
	return nil
}

// Start records that a reconcile of k started at time at and read r from
// the cache (a reconciler records its start before it reads).
func (l *Ledger) Start(k string, at time.Time, r Seen) error {
	l.Reconciles++
	st := l.key(k)
	if l.stopped {
		return &Broken{PromiseStopped, fmt.Sprintf("a reconcile of %s started after the controller stopped", k)}
	}
	if st.running {
		return &Broken{PromiseOneAtATime, fmt.Sprintf("a reconcile of %s started while another of it was running", k)}
	}
	if st.told && !r.atOrAfter(st.notified) {
		return &Broken{PromiseCaughtUp, fmt.Sprintf("a reconcile of %s read %s from the cache after the handler was told of %s", k, r, st.notified)}
	}
	if r.Present && st.maxRead.Present && r.RV < st.maxRead.RV {
		return &Broken{PromiseMonotonic, fmt.Sprintf("a reconcile of %s read %s after an earlier one read %s", k, r, st.maxRead)}
	}
	if err := l.owed(k, st, at); err != nil {
		return err
	}
	st.running = true
	st.read = r
	st.reads++
	if r.Present && (!st.maxRead.Present || r.RV > st.maxRead.RV) {
		st.maxRead = r
	}
	return nil
}

// owed reports why a reconcile of k starting at time at is not owed, and
// otherwise consumes the wakes it follows: every one due by then (the
// queue folds adds of a key it holds).
func (l *Ledger) owed(k string, st *key, at time.Time) error {
	// Tokens: wakes at the instant of the reconciles being accounted. A
	// handler records its notification and then adds the key, and the
	// check cannot see a worker take it: at one instant each such add may
	// land while the previous reconcile runs (the queue hands the key out
	// again after it), so each owes at most one reconcile. Once time has
	// moved on every add has landed: they have folded into one dirty mark
	// at most.
	if !at.Equal(st.instant) {
		st.tokens = min(st.tokens, 1)
		st.instant = at
	}
	early := false
	var later []wake
	for _, w := range st.wakes {
		switch {
		case w.at.After(at):
			later = append(later, w)
		case w.at.Before(at):
			early = true // added before this instant: folded into this reconcile
		default:
			st.tokens++
		}
	}
	if early || st.tokens > 0 {
		if !early {
			st.tokens--
		}
		// A retry or requeue not yet due is superseded by this reconcile:
		// a delaying queue may still fire it (its waiting entry outlives
		// an Add), a deduplicating one (controller-runtime's priority
		// queue) drops it; the key's next outcome says what is owed.
		for i := range later {
			if later[i].why != wakeNotified {
				later[i].maybe = true
			}
		}
		st.wakes = later
		return nil
	}
	st.wakes = later
	if len(later) > 0 {
		w := slices.MinFunc(later, func(a, b wake) int { return a.at.Compare(b.at) })
		promise := PromiseRetryDelay
		if w.why == wakeRequeue {
			promise = PromiseRequeue
		}
		return &Broken{promise, fmt.Sprintf("%s reconciled %v after the %s it scheduled, due after %v, with no notification since", k, at.Sub(w.from), w.why, w.at.Sub(w.from))}
	}
	if st.reads == 0 {
		return &Broken{PromiseBusyLoop, fmt.Sprintf("%s reconciled without ever being notified", k)}
	}
	return &Broken{PromiseBusyLoop, fmt.Sprintf("%s reconciled again with no notification, retry or requeue owed since its last reconcile started (it last %s)", k, st.last)}
}

// End records that the running reconcile of k ended at time at with o.
func (l *Ledger) End(k string, at time.Time, o Outcome) error {
	st := l.key(k)
	if !st.running {
		return &Broken{PromiseOneAtATime, fmt.Sprintf("a reconcile of %s ended that had not started", k)}
	}
	st.running = false
	st.last = o
	switch {
	case o.Failed:
		st.failures++
		st.schedule(wake{at: at.Add(l.lim.Delay(st.failures)), from: at, why: wakeRetry})
	case o.RequeueAfter > 0:
		st.failures = 0
		st.schedule(wake{at: at.Add(o.RequeueAfter), from: at, why: wakeRequeue})
	default:
		st.failures = 0
	}
	return nil
}

// schedule adds a delayed add of the key, as a delaying queue does: it
// holds one waiting entry per key, so an entry still waiting (due after
// w.from) is kept if it is due no later than w, and replaced otherwise.
//
// An entry due at the very instant w is scheduled may have fired already
// or not: w is then kept as one that may never come (maybe).
func (st *key) schedule(w wake) {
	for i, old := range st.wakes {
		if old.why == wakeNotified || old.at.Before(w.from) {
			continue
		}
		if old.at.Equal(w.from) {
			w.maybe = true
			continue
		}
		if !old.at.After(w.at) {
			return
		}
		st.wakes = slices.Delete(st.wakes, i, i+1)
		break
	}
	st.wakes = append(st.wakes, w)
}

// Stop records that the controller was stopped: from now on nothing may
// start or be notified.
func (l *Ledger) Stop() { l.stopped = true }

// Told reports whether the handler was told of key k.
func (l *Ledger) Told(k string) bool {
	st, ok := l.keys[k]
	return ok && st.told
}

// Running lists the keys being reconciled now, sorted.
func (l *Ledger) Running() []string {
	var out []string
	for k, st := range l.keys {
		if st.running {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// Final checks eventual reconcile against the server's state now (key to
// version; a key not in it is absent): no reconcile is running, and every
// key present on the server, and every key the handler was ever told of,
// was last reconciled successfully, without a requeue owed, reading the
// server's state. It lists every key that was not, sorted.
func (l *Ledger) Final(server map[string]int64) error {
	var bad []string
	for k, rv := range server {
		st, ok := l.keys[k]
		switch {
		case !ok || st.reads == 0:
			bad = append(bad, fmt.Sprintf("%s@%d never reconciled", k, rv))
		case !st.read.Present || st.read.RV != rv:
			bad = append(bad, fmt.Sprintf("%s@%d last reconciled reading %s", k, rv, st.read))
		}
	}
	for k, st := range l.keys {
		if _, ok := server[k]; ok || !st.told {
			continue
		}
		switch {
		case st.reads == 0:
			bad = append(bad, fmt.Sprintf("%s (deleted) notified but never reconciled", k))
		case st.read.Present:
			bad = append(bad, fmt.Sprintf("%s (deleted) last reconciled reading %s", k, st.read))
		}
	}
	for k, st := range l.keys {
		if st.running {
			bad = append(bad, fmt.Sprintf("%s still being reconciled", k))
		}
		for _, w := range st.wakes {
			if w.maybe {
				continue
			}
			bad = append(bad, fmt.Sprintf("%s owed a reconcile by the %s at %v that never came", k, w.why, w.at.Format("15:04:05.000")))
		}
	}
	if len(bad) == 0 {
		return nil
	}
	slices.Sort(bad)
	bad = slices.Compact(bad)
	return &Broken{PromiseEventual, strings.Join(bad, "; ")}
}
