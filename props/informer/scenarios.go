package informer

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kverify/kverify/props/checkkit"
	sinf "github.com/kverify/kverify/spec/informer"
	"pgregory.net/rapid"
)

// isolationN is the number of events emitted past a blocked handler.
const isolationN = 200

// script is a valid event sequence of n events over a few keys named
// prefix0..prefix6: add a key
// when it is absent, else update or delete it.
type script struct {
	kinds []Kind
	keys  []string
}

func newScript(prefix string, n int) script {
	var s script
	present := map[string]bool{}
	for i := range n {
		k := fmt.Sprintf("%s%d", prefix, i%7)
		kind := Add
		if present[k] {
			kind = Update
			if i%3 == 0 {
				kind = Delete
			}
		}
		present[k] = kind != Delete
		s.kinds = append(s.kinds, kind)
		s.keys = append(s.keys, k)
	}
	return s
}

func (s script) events() []string {
	out := make([]string, len(s.kinds))
	for i := range s.kinds {
		out[i] = eventOf(s.kinds[i], s.keys[i])
	}
	return out
}

func (s script) emit(f FanOut, done *atomic.Int32) {
	for i := range s.kinds {
		f.Emit(s.kinds[i], s.keys[i])
		if done != nil {
			done.Add(1)
		}
	}
}

func addHandler(d *driver, f FanOut, p *probe) (Registration, error) {
	var reg Registration
	var err error
	if !d.call(func() { reg, err = f.AddHandler(p) }) {
		return nil, checkkit.Broke(GNonBlocking, "AddHandler(%s) did not return", p.name)
	}
	if err != nil {
		return nil, fmt.Errorf("AddHandler(%s): %w", p.name, err)
	}
	return reg, nil
}

func isolation(s Subject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, _ checkkit.Config) error {
		return checkkit.InBubble(t, func() error {
			f := s.New()
			d := &driver{}
			stuck := newProbe("blocked")
			stuck.blockAt(0)
			others := []*probe{newProbe("h1"), newProbe("h2")}
			defer func() {
				stuck.unblock()
				d.call(f.Stop)
			}()
			for _, p := range append([]*probe{stuck}, others...) {
				if _, err := addHandler(d, f, p); err != nil {
					return err
				}
			}
			if !d.call(f.Start) {
				return checkkit.Broke(GNonBlocking, "Start did not return")
			}
			sc := newScript("k", isolationN)
			want := expectation{seq: sc.events()}
			var emitted atomic.Int32
			if !d.call(func() { sc.emit(f, &emitted) }) {
				return checkkit.Broke(GNonBlocking, "with one handler blocked in a call, Emit blocked after %d of %d emits", emitted.Load(), isolationN)
			}
			for _, p := range others {
				if msg := want.conforms(p.received(), true); msg != "" {
					return checkkit.Broke(GIsolation, "with another handler blocked, %s: %s", p.name, msg)
				}
				if p.overlap.Load() {
					return checkkit.Broke(GSerial, "%s: two handler calls overlapped", p.name)
				}
			}
			if msg := want.conforms(stuck.received(), false); msg != "" {
				return checkkit.Broke(GDelivery, "blocked handler: %s", msg)
			}
			stuck.unblock()
			synctest.Wait()
			if msg := want.conforms(stuck.received(), true); msg != "" {
				return checkkit.Broke(GIsolation, "released handler: %s", msg)
			}
			if stuck.overlap.Load() {
				return checkkit.Broke(GSerial, "the released handler's calls overlapped")
			}
			if !d.call(f.Stop) {
				return checkkit.Broke(GShutdown, "Stop did not return")
			}
			return nil
		})
	}
}

// syncKeys is the size of the initial list in the sync check.
const syncKeys = 3

func syncCheck(s Subject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, _ checkkit.Config) error {
		return checkkit.InBubble(t, func() error {
			f := s.New()
			d := &driver{}
			var cleanup []*probe
			defer func() {
				for _, p := range cleanup {
					p.unblock()
				}
				d.call(f.Stop)
			}()
			keys := make([]string, syncKeys)
			for i := range keys {
				keys[i] = fmt.Sprintf("s%d", i)
				if !d.call(func() { f.Emit(Add, keys[i]) }) {
					return checkkit.Broke(GNonBlocking, "Emit before Start did not return")
				}
			}
			synctest.Wait()

			// watch makes p's handler record a too-early HasSynced at the
			// start of any of its initial adds.
			watch := func(p *probe) (*atomic.Pointer[Registration], *atomic.Value) {
				var reg atomic.Pointer[Registration]
				var early atomic.Value
				p.onCall = func(i int, ev string) {
					if r := reg.Load(); r != nil && i < syncKeys && (*r).HasSynced() {
						early.CompareAndSwap(nil, ev)
					}
				}
				return &reg, &early
			}
			phase := func(name string, p *probe, reg Registration, early *atomic.Value) error {
				synctest.Wait()
				got := p.received()
				want := expectation{init: keys}
				if msg := want.conforms(got, true); msg != "" {
					return checkkit.Broke(GDelivery, "%s handler: %s", name, msg)
				}
				if p.waiting.Load() != 1 {
					return checkkit.Broke(GHandlerSync, "%s handler: its last initial add is not in progress (received %v)", name, got)
				}
				if reg.HasSynced() {
					return checkkit.Broke(GHandlerSync, "%s handler: HasSynced() is true while its last initial add (%s) is still in OnAdd", name, got[len(got)-1])
				}
				if ev := early.Load(); ev != nil {
					return checkkit.Broke(GHandlerSync, "%s handler: HasSynced() was true at the start of initial add %v", name, ev)
				}
				p.unblock()
				synctest.Wait()
				if !reg.HasSynced() {
					return checkkit.Broke(GHandlerSync, "%s handler: HasSynced() is false after every initial add returned", name)
				}
				return nil
			}

			// Added before Start: synced only after Start and its initial list.
			pre := newProbe("before-start")
			cleanup = append(cleanup, pre)
			pre.blockAt(syncKeys - 1)
			preReg, preEarly := watch(pre)
			r, err := addHandler(d, f, pre)
			if err != nil {
				return err
			}
			preReg.Store(&r)
			synctest.Wait()
			if r.HasSynced() {
				return checkkit.Broke(GHandlerSync, "a handler added before Start has HasSynced() true before Start")
			}
			if !d.call(f.Start) {
				return checkkit.Broke(GNonBlocking, "Start did not return")
			}
			if err := phase("added before Start", pre, r, preEarly); err != nil {
				return err
			}

			// Added after Start: counts its own initial list.
			late := newProbe("after-start")
			cleanup = append(cleanup, late)
			late.blockAt(syncKeys - 1)
			lateReg, lateEarly := watch(late)
			r2, err := addHandler(d, f, late)
			if err != nil {
				return err
			}
			lateReg.Store(&r2)
			if err := phase("added after Start", late, r2, lateEarly); err != nil {
				return err
			}

			// Added after Start to an empty store: nothing to wait for.
			for _, k := range keys {
				if !d.call(func() { f.Emit(Delete, k) }) {
					return checkkit.Broke(GNonBlocking, "Emit(%s) did not return", deleteEv(k))
				}
			}
			empty := newProbe("empty-store")
			r3, err := addHandler(d, f, empty)
			if err != nil {
				return err
			}
			synctest.Wait()
			if !r3.HasSynced() {
				return checkkit.Broke(GHandlerSync, "a handler added after Start to an empty store has HasSynced() false at quiescence")
			}
			if !d.call(f.Stop) {
				return checkkit.Broke(GShutdown, "Stop did not return")
			}
			return nil
		})
	}
}

// startRounds is how often the start check races an emit against Start.
const startRounds = 20

// startEmitBound is how long, in real time, an Emit right after Start may
// take in the start check. It returns in microseconds unless distribution
// deadlocks with the listeners' start; a bound well under checkkit.Watchdog
// reports that deadlock (a hang for good) about a second after it began.
const startEmitBound = time.Second

func startRace(s Subject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, _ checkkit.Config) error {
		for round := range startRounds {
			f := s.New()
			p := newProbe("h")
			if _, err := addHandlerWithin(f, p); err != nil {
				return err
			}
			if err := within("Start", f.Start); err != nil {
				return err
			}
			if !checkkit.ReturnsWithin(startEmitBound, func() { f.Emit(Add, "a") }) {
				return checkkit.Broke(GStart, "round %d: Emit right after Start did not return within %v", round, startEmitBound)
			}
			if !checkkit.Eventually(checkkit.Watchdog, func() bool { return len(p.received()) > 0 }) {
				return checkkit.Broke(GStart, "round %d: an event emitted right after Start was not delivered within %v", round, checkkit.Watchdog)
			}
			if !checkkit.ReturnsWithin(checkkit.Watchdog, f.Stop) {
				return checkkit.Broke(GShutdown, "round %d: Stop did not return within %v", round, checkkit.Watchdog)
			}
			// Either the initial list or the watch carries the add.
			if got := p.received(); len(got) != 1 || (got[0] != initEv("a") && got[0] != addEv("a")) {
				return checkkit.Broke(GDelivery, "round %d: received %v, want [init:a] or [add:a]", round, got)
			}
		}
		return nil
	}
}

// lookaheadN is the number of notifications a blocked handler falls behind
// in the lookahead check.
const lookaheadN = 64

// lookaheadBurst is the larger backlog of the lookahead check.
const lookaheadBurst = 1500

// lookaheadInitial is the lookahead check's last part: a handler added to
// the running fan-out, blocked in its first initial add, has the rest of
// the store's keys pending (an initial list goes to its one handler, not
// through the path every handler shares, in ours), then none once
// released, with a high-water mark of the whole list or all but the one
// its goroutine took before the others were added.
func lookaheadInitial(d *driver, f FanOut) error {
	adds := make([]string, lookaheadBurst)
	for i := range adds {
		adds[i] = fmt.Sprint("init", i)
	}
	if !d.call(func() {
		for _, k := range adds {
			f.Emit(Add, k)
		}
	}) {
		return checkkit.Broke(GNonBlocking, "Emit did not return")
	}
	late := newProbe("late")
	late.block()
	defer late.unblock()
	b, err := addBacklogHandler(d, f, late)
	if err != nil {
		return err
	}
	synctest.Wait()
	store := len(late.received()) // the call it is blocked in...
	if store != 1 || late.waiting.Load() != 1 {
		return checkkit.Broke(GDelivery, "a handler added to the running fan-out is not in its first initial add (%d calls)", store)
	}
	// ...and every other key in the store waits behind it: the adds just
	// emitted, and what the earlier bursts left there.
	n := b.Pending()
	if n < int64(len(adds)-1) {
		return checkkit.Broke(GLookahead, "a handler added with %d or more keys in the store, blocked in its first initial add, has Pending() = %d, want the rest of its initial list", len(adds), n)
	}
	late.unblock()
	synctest.Wait()
	got := len(late.received())
	if got != int(n)+1 {
		return checkkit.Broke(GLookahead, "blocked in its first initial add, the handler had Pending() = %d, then received %d calls in all, want %d", n, got, n+1)
	}
	if n := b.Pending(); n != 0 {
		return checkkit.Broke(GLookahead, "after the late handler caught up with its initial list, Pending() = %d, want 0", n)
	}
	if hw := b.HighWater(); hw != int64(got) && hw != int64(got-1) {
		return checkkit.Broke(GLookahead, "after an initial list of %d piled up behind a blocked handler, HighWater() = %d, want %d or %d", got, hw, got-1, got)
	}
	return nil
}

var errNoBacklog = errors.New("the subject's registrations do not implement Backlog")

// addBacklogHandler adds p and returns its registration's Backlog, or
// errNoBacklog.
func addBacklogHandler(d *driver, f FanOut, p *probe) (Backlog, error) {
	r, err := addHandler(d, f, p)
	if err != nil {
		return nil, err
	}
	b, ok := r.(Backlog)
	if !ok {
		return nil, errNoBacklog
	}
	return b, nil
}

func lookahead(s Subject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, _ checkkit.Config) error {
		err := checkkit.InBubble(t, func() error {
			f := s.New()
			d := &driver{}
			p := newProbe("h")
			defer func() {
				p.unblock()
				d.call(f.Stop)
			}()
			b, err := addBacklogHandler(d, f, p)
			if err != nil {
				return err
			}
			if !d.call(f.Start) {
				return checkkit.Broke(GNonBlocking, "Start did not return")
			}
			// Strictly alternating: each emit is handled before the next.
			sc := newScript("k", lookaheadN)
			for i := range sc.kinds {
				if !d.call(func() { f.Emit(sc.kinds[i], sc.keys[i]) }) {
					return checkkit.Broke(GNonBlocking, "Emit did not return")
				}
				if n := b.Pending(); n != 0 {
					return checkkit.Broke(GLookahead, "after emit %d was handled, Pending() = %d, want 0", i, n)
				}
			}
			if hw := b.HighWater(); hw > 1 {
				return checkkit.Broke(GLookahead, "a handler that keeps up reached a high-water mark of %d pending, want at most 1 (the one in hand)", hw)
			}
			if msg := (expectation{seq: sc.events()}).conforms(p.received(), true); msg != "" {
				return checkkit.Broke(GDelivery, "%s", msg)
			}
			// Blocked in a call: everything emitted meanwhile is pending.
			// Two bursts: the buffer is reused after it drained, and the
			// second crosses the default chunk size of our ring (1024).
			seq := sc.events()
			for i, burst := range []int{lookaheadN, lookaheadBurst} {
				p.block()
				plug := fmt.Sprintf("plug%d", i)
				if !d.call(func() { f.Emit(Add, plug) }) {
					return checkkit.Broke(GNonBlocking, "Emit did not return")
				}
				seq = append(seq, addEv(plug))
				if p.waiting.Load() != 1 {
					return checkkit.Broke(GDelivery, "the handler did not receive %s", plug)
				}
				if n := b.Pending(); n != 0 {
					return checkkit.Broke(GLookahead, "with the handler in a call and nothing else added, Pending() = %d, want 0", n)
				}
				sc2 := newScript(fmt.Sprintf("b%d-", i), burst)
				if !d.call(func() { sc2.emit(f, nil) }) {
					return checkkit.Broke(GNonBlocking, "Emit blocked behind a blocked handler")
				}
				seq = append(seq, sc2.events()...)
				if n := b.Pending(); n != int64(burst) {
					return checkkit.Broke(GLookahead, "with the handler blocked in a call, %d emits left Pending() = %d", burst, n)
				}
				p.unblock()
				synctest.Wait()
				if n := b.Pending(); n != 0 {
					return checkkit.Broke(GLookahead, "after the handler caught up, Pending() = %d, want 0", n)
				}
				if hw := b.HighWater(); hw != int64(burst) {
					return checkkit.Broke(GLookahead, "after %d notifications piled up (the most so far), HighWater() = %d, want %d", burst, hw, burst)
				}
				if msg := (expectation{seq: seq}).conforms(p.received(), true); msg != "" {
					return checkkit.Broke(GDelivery, "after burst %d: %s", i, msg)
				}
			}
			if err := lookaheadInitial(d, f); err != nil {
				return err
			}
			if !d.call(f.Stop) {
				return checkkit.Broke(GShutdown, "Stop did not return")
			}
			return nil
		})
		if errors.Is(err, errNoBacklog) {
			checkkit.SkipNotOffered(t, "%v", err)
		}
		return err
	}
}

func pumpStep(pump Pump) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, cfg checkkit.Config) error {
		err := checkkit.Rapid(t, cfg, func(rt *rapid.T, rec *checkkit.Recorder) {
			var m sinf.Pump
			var (
				inHand   bool
				buffered int
				closed   bool
				n        int
			)
			rt.Repeat(map[string]func(*rapid.T){
				"step": func(rt *rapid.T) {
					var ev sinf.Event
					switch r := rapid.IntRange(0, 19).Draw(rt, "event"); {
					case r < 10:
						ev = sinf.Added
					case r < 19:
						ev = sinf.Delivered
					default:
						ev = sinf.Closed
					}
					want, next := "Invalid", m
					if m.Enabled(ev) {
						switch ev {
						case sinf.Added:
							want = "Hold"
							if _, has := m.InHand(); has {
								want = "Stash"
							}
							n++
							next = m.Add(fmt.Sprint(n))
						case sinf.Delivered:
							want = "Idle"
							if len(m.Buffered()) > 0 {
								want = "Refill"
							}
							next, _ = m.Deliver()
						case sinf.Closed:
							want = "Stop"
							next = m.Close()
						}
					}
					gIn, gBuf, gClosed, act := pump.Step(inHand, buffered, closed, ev)
					_, wIn := next.InHand()
					wBuf, wClosed := len(next.Buffered()), next.IsClosed()
					rec.Step(fmt.Sprintf("%v from (inHand=%v buffered=%d closed=%v)", ev, inHand, buffered, closed),
						fmt.Sprintf("%s -> (%v %d %v)", want, wIn, wBuf, wClosed),
						fmt.Sprintf("%s -> (%v %d %v)", act, gIn, gBuf, gClosed))
					if act == "Stash" && !inHand {
						rec.Fail(rt, GLookahead, "the pump stashed a notification while nothing was in hand")
					}
					if act != want {
						rec.Fail(rt, GPumpDecision, "%v in state (inHand=%v buffered=%d closed=%v): action %s, model %s", ev, inHand, buffered, closed, act, want)
					}
					if gIn != wIn || gBuf != wBuf || gClosed != wClosed {
						rec.Fail(rt, GPumpState, "after %v: (inHand=%v buffered=%d closed=%v), model (%v %d %v)", ev, gIn, gBuf, gClosed, wIn, wBuf, wClosed)
					}
					m, inHand, buffered, closed = next, gIn, gBuf, gClosed
				},
			})
		})
		return checkkit.Save(t, cfg, Component, CheckPumpStep, err)
	}
}
