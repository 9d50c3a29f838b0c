package fifo

import (
	"errors"
	"fmt"
	"runtime"
	"testing"
	"testing/synctest"
	"time"
	"weak"

	"github.com/kverify/kverify/props/checkkit"
	spec "github.com/kverify/kverify/spec/fifo"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// witnesses returns the fixed-scenario checks (fast, run first) and the
// concurrency probes (run after the machines).
func witnesses(s Subject) (fixed, probes []checkkit.Check) {
	fixed = []checkkit.Check{
		{Name: name(s, CheckClose), Family: checkkit.FamilyTiming,
			Guarantee: "Close wakes every blocked Pop with an error and without calling its process func; what was queued before still pops, in order; Add after Close is accepted; IsClosed; Close twice is safe",
			Run:       closeCheck(s)},
		{Name: name(s, CheckBadInput), Family: checkkit.FamilyWitness,
			Guarantee: "Add, Update, Delete and Replace given a nil object, a typed nil, an object without metadata or without a name return an error without panicking, and leave the FIFO exactly as it was (Replace is all or nothing)",
			Run:       badInput(s)},
		{Name: name(s, CheckSlow), Family: checkkit.FamilyTiming,
			Guarantee: "a pop that leaves more than 10 keys or deltas queued and whose process func takes more than 100 ms is reported once, with the popped key, the depth and the time; one at either edge (10 left, exactly 100 ms) is not",
			Run:       slowWarning(s)},
		{Name: name(s, CheckRetention), Family: checkkit.FamilyRetention,
			Guarantee: "once popped, an object and its key are not referenced by the FIFO, whatever is still queued",
			Run:       retention(s)},
	}
	if s.Real {
		fixed = append(fixed,
			checkkit.Check{Name: name(s, CheckUnlock), Family: checkkit.FamilyTiming,
				Guarantee: "with UnlockWhileProcessing and fewer than 2×1000 deltas queued, Add, Update, Delete and HasSynced complete while a process func runs; with 2×1000 or more, the queue's bound, an Update waits for it (Pop and PopBatch); what they queue pops after",
				Run:       unlock(s)},
			checkkit.Check{Name: name(s, CheckOptions), Family: checkkit.FamilyWitness,
				Guarantee: "New with an invalid combination of options (atomic with known objects; not atomic without known objects, with UnlockWhileProcessing or with bookmarks) returns an error, never panics",
				Run:       badOptions(s)})
	}
	probes = []checkkit.Check{
		{Name: name(s, CheckRace), Family: checkkit.FamilyLinear,
			Guarantee: "two calls at the same instant (Pop against Add, Update, Delete, Replace, Resync and Close, and each against itself) take effect atomically: the outcome, and everything popped after, is that of one of the two orders",
			Run:       raceCheck(s)},
		{Name: name(s, CheckLinear), Family: checkkit.FamilyLinear,
			Guarantee: "concurrent Add, Update, Delete, Replace, Resync, Pop, Close and HasSynced from 3 goroutines on a FIFO without known objects are linearizable against the model: each call (a Pop with its processing) takes effect atomically at one instant inside the call",
			Run:       linearCheck(s)},
	}
	return fixed, probes
}

// basicModes are the option sets the witnesses run under.
func basicModes(s Subject) []Mode {
	if s.Real {
		return []Mode{{Atomic: true}, {Atomic: true, Unlock: true}, {Known: true}}
	}
	return []Mode{{}, {Known: true}}
}

// newFIFO makes a FIFO in mode, with its store.
func newFIFO(s Subject, m Mode) (FIFO, *MapStore, error) {
	st := NewStore()
	opts := Options{EmitReplaced: m.EmitReplaced, Atomic: m.Atomic, Unlock: m.Unlock, Bookmarks: m.Bookmarks}
	if m.Known {
		opts.Known = st
	}
	if m.Transform {
		opts.Transform = transform
	}
	f, err := s.New(opts)
	if err != nil {
		return nil, nil, checkkit.Broke(GErrors, "New(%s) failed: %v", m, err)
	}
	return f, st, nil
}

// drain pops everything queued (the FIFO must not be empty-and-open at
// the end: it closes it first) and returns what was popped.
func drain(f FIFO) ([]spec.Delta, error) {
	f.Close()
	var out []spec.Delta
	err := checkkit.Bounded(checkkit.DrainLimit, func() string {
		return fmt.Sprintf("popping after Close: the FIFO handed out %d deltas and never reported closed", len(out))
	}, func() (bool, error) {
		var got []Delta
		_, err := f.Pop(func(ds []Delta, _ bool) error { got = ds; return nil })
		if err != nil {
			return true, nil
		}
		ds, cerr := deltasOf(got)
		if cerr != nil {
			return true, checkkit.Broke(GDeltas, "popped deltas: %v", cerr)
		}
		out = append(out, ds...)
		return false, nil
	})
	return out, err
}

func closeCheck(s Subject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, cfg checkkit.Config) error {
		for _, m := range basicModes(s) {
			var err error
			checkkit.Bubble(t, func() { err = closeIn(s, m, cfg) })
			if err != nil {
				return err
			}
		}
		return nil
	}
}

func closeIn(s Subject, m Mode, cfg checkkit.Config) error {
	f, _, err := newFIFO(s, m)
	if err != nil {
		return err
	}
	const waiters = 3
	type result struct {
		err    error
		called bool
	}
	results := make(chan result, waiters)
	for range waiters {
		go func() {
			called := false
			_, err := f.Pop(func([]Delta, bool) error { called = true; return nil })
			results <- result{err, called}
		}()
	}
	synctest.Wait()
	if len(results) > 0 {
		r := <-results
		return checkkit.Broke(GWake, "%s: Pop on an empty, open FIFO returned (error %v) instead of blocking", m, r.err)
	}
	f.Close()
	f.Close()
	synctest.Wait()
	if n := len(results); n < waiters {
		err := checkkit.Broke(GWake, "%s: Close woke %d of %d blocked Pops", m, n, waiters)
		// Release them with objects; if even that fails they are stuck.
		for i := range waiters - n {
			_ = f.Add(object(spec.Obj{Key: fmt.Sprintf("release%d", i), Version: 1}))
		}
		synctest.Wait()
		if len(results) < waiters {
			cfg.Progress.Abandon(err)
		}
		return err
	}
	for range waiters {
		if r := <-results; r.err == nil || r.called {
			return checkkit.Broke(GWake, "%s: a Pop woken by Close returned %v and called process=%t, want an error and no call", m, r.err, r.called)
		}
	}
	if !f.IsClosed() {
		return checkkit.Broke(GClosed, "%s: IsClosed is false after Close", m)
	}
	// Queued before and after Close: both still pop, in order.
	g, _, err := newFIFO(s, m)
	if err != nil {
		return err
	}
	a, b := spec.Obj{Key: "a", Version: 1}, spec.Obj{Key: "b", Version: 2}
	if err := g.Add(object(a)); err != nil {
		return checkkit.Broke(GErrors, "%s: Add failed: %v", m, err)
	}
	g.Close()
	if err := g.Add(object(b)); err != nil {
		return checkkit.Broke(GClosed, "%s: Add after Close failed: %v (Close does not reject adds)", m, err)
	}
	got, err := drain(g)
	if err != nil {
		return err
	}
	want := []spec.Delta{spec.Of(spec.Added, a), spec.Of(spec.Added, b)}
	if !same(got, want) {
		return checkkit.Broke(GClosed, "%s: after Close the FIFO popped %s, want %s", m, spec.Deltas(got), spec.Deltas(want))
	}
	return nil
}

// badObjects are objects no key can be computed for.
func badObjects() []struct {
	name string
	obj  any
} {
	return []struct {
		name string
		obj  any
	}{
		{"nil", nil},
		{"typed nil", (*metav1.PartialObjectMetadata)(nil)},
		{"int", 42},
		{"no name", &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "7"}}},
	}
}

func badInput(s Subject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, cfg checkkit.Config) error {
		for _, m := range basicModes(s) {
			for _, bad := range badObjects() {
				for _, op := range []string{"Add", "Update", "Delete", "Replace"} {
					cfg.Progress.Op(fmt.Sprintf("%s %s(%s)", m, op, bad.name))
					// A declared violation does not end the check: the
					// other objects, calls and modes are still tried.
					if err := badCase(s, m, op, bad.name, bad.obj); err != nil && !cfg.Excused(err) {
						return err
					}
				}
			}
		}
		return nil
	}
}

func badCase(s Subject, m Mode, op, name string, obj any) (err error) {
	f, st, err := newFIFO(s, m)
	if err != nil {
		return err
	}
	defer f.Close()
	a, b := spec.Obj{Key: "a", Version: 1}, spec.Obj{Key: "b", Version: 2}
	if m.Known {
		_ = st.Add(object(b)) // b is known: Delete(b) and Replace see it
	}
	if err := f.Add(object(a)); err != nil {
		return checkkit.Broke(GErrors, "%s: Add failed: %v", m, err)
	}
	what := fmt.Sprintf("%s: %s of %s", m, op, name)
	defer func() {
		if p := recover(); p != nil {
			err = checkkit.Broke(GBadInput, "%s panicked: %v", what, p)
		}
	}()
	var opErr error
	switch op {
	case "Add":
		opErr = f.Add(obj)
	case "Update":
		opErr = f.Update(obj)
	case "Delete":
		opErr = f.Delete(obj)
	case "Replace":
		opErr = f.Replace([]any{object(spec.Obj{Key: "c", Version: 3}), obj, object(spec.Obj{Key: "d", Version: 4})}, "4")
	}
	if opErr == nil {
		return checkkit.Broke(GBadInput, "%s returned no error", what)
	}
	got, derr := drain(f)
	if derr != nil {
		return derr
	}
	want := []spec.Delta{spec.Of(spec.Added, a)}
	if !same(got, want) {
		return checkkit.Broke(GBadInput, "%s returned %q but changed the FIFO: it then popped %s, want %s", what, opErr, spec.Deltas(got), spec.Deltas(want))
	}
	return nil
}

// held runs the collector until the weak pointers settle and reports
// which are still reachable.
func held[T any](ps ...weak.Pointer[T]) []int {
	var out []int
	for range 3 {
		runtime.GC()
	}
	for i, p := range ps {
		if p.Value() != nil {
			out = append(out, i)
		}
	}
	return out
}

func retention(s Subject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, cfg checkkit.Config) error {
		for _, m := range basicModes(s) {
			for _, pre := range []int{0, 1, 5, 40} {
				cfg.Progress.Op(fmt.Sprintf("%s retention after %d pops", m, pre))
				if err := retentionCase(s, m, pre); err != nil && !cfg.Excused(err) {
					return err
				}
			}
		}
		return nil
	}
}

// retentionCase queues pre fillers, the probe and more fillers, pops the
// fillers before it and the probe, and asks whether the probe object or
// its key is still reachable while the FIFO (holding later fillers) is.
func retentionCase(s Subject, m Mode, pre int) error {
	f, _, err := newFIFO(s, m)
	if err != nil {
		return err
	}
	defer f.Close()
	for i := range pre {
		_ = f.Add(object(spec.Obj{Key: fmt.Sprintf("before%d", i), Version: 1}))
	}
	name, keyProbe := checkkit.Probe("probe-object")
	obj := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: "1"}}
	objProbe := weak.Make(obj)
	if err := f.Add(obj); err != nil {
		return checkkit.Broke(GErrors, "%s: Add failed: %v", m, err)
	}
	if err := f.Update(obj); err != nil {
		return checkkit.Broke(GErrors, "%s: Update failed: %v", m, err)
	}
	obj, name = nil, ""
	for i := range 3 {
		_ = f.Add(object(spec.Obj{Key: fmt.Sprintf("after%d", i), Version: 1}))
	}
	pops := pre + 1
	if s.Real {
		pops = pre + 2 // the probe's Added and Updated are two deltas
	}
	for range pops {
		if _, err := f.Pop(func([]Delta, bool) error { return nil }); err != nil {
			return checkkit.Broke(GErrors, "%s: Pop failed: %v", m, err)
		}
	}
	if h := held(objProbe); len(h) > 0 {
		return checkkit.Broke(GRetention, "%s: a popped object is still referenced by the FIFO (%d popped before it, 3 still queued)", m, pre)
	}
	if len(checkkit.Held(keyProbe)) > 0 {
		return checkkit.Broke(GRetention, "%s: a popped object's key is still referenced by the FIFO (%d popped before it, 3 still queued)", m, pre)
	}
	runtime.KeepAlive(f)
	return nil
}

func unlock(s Subject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, cfg checkkit.Config) error {
		var err error
		checkkit.Bubble(t, func() { err = unlockIn(s, cfg) })
		if err != nil {
			return err
		}
		return pastUnlockBound(s)
	}
}

// lockedBound is how long, counted only while every goroutine of the check
// is blocked, an Update made past the unlock bound must stay blocked
// while the process func runs: an Update that does not wait returns in
// microseconds, and one that waits on the FIFO's lock never counts as
// running, so the verdict does not depend on the machine's load.
const lockedBound = 100 * time.Millisecond

// pastUnlockBound is the other side of UnlockWhileProcessing's bound
// (the_real_fifo.go:454-466: "Only do this if the queue contains less than
// 2 full batches of items, to prevent the queue from growing
// unboundedly"): with 2×1000 deltas or more left queued, a process func
// runs under the FIFO's lock, so a producer waits for it, and what it
// queues then pops after everything queued before. Outside a synctest
// bubble: a goroutine waiting on a mutex is not durably blocked, so a
// bubble would never see it settle; checkkit.ReturnsWithin counts only
// the time no goroutine of the check can run. Just under the bound (1999
// left) the producer must not wait; at it (2000) and past it (2001) it
// must, for Pop, and for PopBatch where the subject has it (3001 queued,
// a batch of 1000 taken).
func pastUnlockBound(s Subject) error {
	bound := 2 * spec.DefaultBatchSize
	for i, c := range []unlockCase{{bound - 1, false}, {bound, false}, {bound + 1, false}, {bound - 1, true}, {bound + 1, true}} {
		if err := c.run(s, i); err != nil {
			return err
		}
	}
	return nil
}

// unlockCase is one pop of pastUnlockBound: left deltas left queued
// behind what a Pop (or, with batch, a PopBatch of 1000) takes.
type unlockCase struct {
	left  int
	batch bool
}

func (c unlockCase) run(s Subject, i int) error {
	f, _, err := newFIFO(s, Mode{Atomic: true, Unlock: true})
	if err != nil {
		return err
	}
	defer f.Close()
	b, isBatcher := f.(Batcher)
	if c.batch && !isBatcher {
		return nil
	}
	took, pop := 1, "Pop"
	if c.batch {
		took, pop = spec.DefaultBatchSize, "PopBatch"
	}
	queued := addQueued(f, c.left+took)
	updated := make(chan struct{})
	var returned bool
	calls := 0
	process := func([]Delta, bool) error {
		if calls++; calls == 1 {
			returned = checkkit.ReturnsWithin(lockedBound, func() {
				defer close(updated)
				_ = f.Update(object(lateObj))
			})
		}
		return nil
	}
	var perr error
	if c.batch {
		perr = b.PopBatch(process, process)
	} else {
		_, perr = f.Pop(process)
	}
	if calls != 1 {
		return checkkit.Broke(GOrder, "%s of %d queued deltas called its process func %d times, want once", pop, c.left+took, calls)
	}
	<-updated // the Update waited for the lock, if it did; it has it now
	switch wantWait := c.left >= 2*spec.DefaultBatchSize; {
	case perr != nil:
		return checkkit.Broke(GErrors, "%s failed: %v", pop, perr)
	case wantWait && returned:
		return checkkit.Broke(GUnlock, "with %d deltas left queued behind %s's (the bound is 2×%d), an Update completed while the process func ran: past the bound a process func must hold the FIFO's lock, or the queue grows without bound behind a slow handler (case %d)", c.left, pop, spec.DefaultBatchSize, i)
	case !wantWait && !returned:
		return checkkit.Broke(GUnlock, "with %d deltas left queued behind %s's (under the bound of 2×%d), an Update did not complete while the process func ran (case %d)", c.left, pop, spec.DefaultBatchSize, i)
	}
	got, want, err := popsAfterLate(f, queued, took)
	if err != nil {
		return err
	}
	if !same(got, want) {
		return checkkit.Broke(GUnlock, "after an Update made while %s's process func ran with %d deltas left queued, the FIFO popped %d deltas ending %s, want %d ending %s", pop, c.left, len(got), spec.Deltas(tail(got)), len(want), spec.Deltas(tail(want)))
	}
	return nil
}

// lateObj is what the unlock checks update while a process func runs.
var lateObj = spec.Obj{Key: "late", Version: 1}

// addQueued adds n fresh objects q0, q1, ... to f and returns their
// Added deltas.
func addQueued(f FIFO, n int) []spec.Delta {
	queued := make([]spec.Delta, 0, n)
	for j := range n {
		o := spec.Obj{Key: fmt.Sprintf("q%d", j), Version: j + 1}
		_ = f.Add(object(o))
		queued = append(queued, spec.Of(spec.Added, o))
	}
	return queued
}

// popsAfterLate drains f (closing it) and returns what it popped and what
// it should have: queued less the took deltas a pop took, then lateObj's
// Update, made while that pop's process func ran.
func popsAfterLate(f FIFO, queued []spec.Delta, took int) (got, want []spec.Delta, err error) {
	got, err = drain(f)
	return got, append(queued[took:], spec.Of(spec.Updated, lateObj)), err
}

// tail is the last three deltas of ds, for a message about thousands.
func tail(ds []spec.Delta) []spec.Delta { return ds[max(0, len(ds)-3):] }

func unlockIn(s Subject, cfg checkkit.Config) error {
	m := Mode{Atomic: true, Unlock: true}
	f, _, err := newFIFO(s, m)
	if err != nil {
		return err
	}
	defer f.Close()
	for i, q := range []int{0, 5, 2*spec.DefaultBatchSize - 2} {
		f2, _, err := newFIFO(s, m)
		if err != nil {
			return err
		}
		queued := addQueued(f2, q+1)
		done := make(chan string, 1)
		var stuck error
		_, perr := f2.Pop(func([]Delta, bool) error {
			go func() {
				_ = f2.Update(object(lateObj))
				_ = f2.HasSynced()
				done <- "done"
			}()
			synctest.Wait()
			if len(done) == 0 {
				stuck = checkkit.Broke(GUnlock, "with %d deltas queued behind the one being processed, Update and HasSynced did not complete while the process func ran (case %d)", q, i)
			}
			return nil
		})
		<-done
		if stuck != nil {
			return stuck
		}
		if perr != nil {
			return checkkit.Broke(GErrors, "Pop failed: %v", perr)
		}
		got, want, err := popsAfterLate(f2, queued, 1)
		if err != nil {
			return err
		}
		if !same(got, want) {
			return checkkit.Broke(GUnlock, "after an Update made while processing, the FIFO popped %s, want %s", spec.Deltas(got), spec.Deltas(want))
		}
	}
	return nil
}

func badOptions(s Subject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, cfg checkkit.Config) error {
		st := NewStore()
		for _, c := range []struct {
			name string
			opts Options
		}{
			{"atomic with known objects", Options{Atomic: true, Known: st}},
			{"not atomic without known objects", Options{}},
			{"not atomic with UnlockWhileProcessing", Options{Known: st, Unlock: true}},
			{"not atomic with bookmarks", Options{Known: st, Bookmarks: true}},
		} {
			var (
				f   FIFO
				err error
				p   any
			)
			func() {
				defer func() { p = recover() }()
				f, err = s.New(c.opts)
			}()
			if p != nil {
				if v := checkkit.Broke(GOptions, "New (%s) panicked: %v", c.name, p); !cfg.Excused(v) {
					return v
				}
				continue
			}
			if err == nil {
				f.Close()
				if v := checkkit.Broke(GOptions, "New (%s) returned no error", c.name); !cfg.Excused(v) {
					return v
				}
				continue
			}
			if errors.Is(err, errProcess) {
				return err
			}
		}
		return nil
	}
}
