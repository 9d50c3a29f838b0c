package informer

import (
	"fmt"
	"slices"
	"strings"
	"testing/synctest"

	"github.com/kverify/kverify/props/checkkit"
	"pgregory.net/rapid"
)

// maxHandlers is how many handlers a delivery machine registers at most.
const maxHandlers = 3

// keys are the keys a delivery machine emits single events for: few, so
// that updates and deletes are frequent.
var keys = []string{"a", "b", "c", "d"}

// maxBurstEvents bounds the events of all bursts in one machine run, to keep
// a case's runtime in check; a burst past it is cut down to a small one.
const maxBurstEvents = 4096

// op is the kind of a machine step.
type op uint8

// Machine steps.
const (
	opEmit op = iota // add the key if absent, else update or delete it
	opAddHandler
	opBlock
	opUnblock
	opRemove
	opStart
	// opBurst emits N events over many distinct keys at once, after
	// blocking a handler if Block (Handler, or the next one registered):
	// the backlog and the store grow past the sizes where a listener's
	// buffer changes shape (1024 slots).
	opBurst
)

// step is one step of a delivery machine.
type step struct {
	Op      op
	Key     string
	Delete  bool // opEmit on a present key: delete rather than update
	Handler int
	N       int  // opBurst: events
	Block   bool // opBurst: block a handler first
}

func (s step) String() string {
	switch s.Op {
	case opEmit:
		if s.Delete {
			return "EmitDel(" + s.Key + ")"
		}
		return "Emit(" + s.Key + ")"
	case opAddHandler:
		return "AddHandler"
	case opBlock:
		return fmt.Sprintf("h%d:Block", s.Handler)
	case opUnblock:
		return fmt.Sprintf("h%d:Unblock", s.Handler)
	case opRemove:
		return fmt.Sprintf("h%d:Remove", s.Handler)
	case opStart:
		return "Start"
	case opBurst:
		if s.Block {
			return fmt.Sprintf("h%d:Block+Burst(%d)", s.Handler, s.N)
		}
		return fmt.Sprintf("Burst(%d)", s.N)
	}
	return fmt.Sprintf("Op(%d)", s.Op)
}

// burstSize draws a burst's size with checkkit.Size: small, exactly around
// 1024 and 2048 (client-go's listener ring starts at 1024 slots and
// doubles; our buffer links 1024-slot chunks; the slow-handler warning
// counts past 1024), middling, or far beyond (up to maxBurstEvents).
func burstSize() *rapid.Generator[int] {
	return checkkit.Size(maxBurstEvents, 1024, 2048)
}

func stepGen() *rapid.Generator[step] {
	sizes := burstSize()
	return rapid.Custom(func(t *rapid.T) step {
		switch r := rapid.IntRange(0, 99).Draw(t, "op"); {
		case r < 50:
			return step{Op: opEmit, Key: rapid.SampledFrom(keys).Draw(t, "key"), Delete: rapid.IntRange(0, 2).Draw(t, "del") == 2}
		case r < 62:
			return step{Op: opAddHandler}
		case r < 74:
			return step{Op: opBlock, Handler: rapid.IntRange(0, maxHandlers-1).Draw(t, "h")}
		case r < 86:
			return step{Op: opUnblock, Handler: rapid.IntRange(0, maxHandlers-1).Draw(t, "h")}
		case r < 92:
			return step{Op: opRemove, Handler: rapid.IntRange(0, maxHandlers-1).Draw(t, "h")}
		case r == 99 && rapid.Bool().Draw(t, "burst"):
			// Rare, and costly: about one case in two has one. rapid
			// favours the smallest and largest draws, hence the top value
			// and a coin.
			return step{Op: opBurst, N: sizes.Draw(t, "n"), Block: rapid.IntRange(0, 3).Draw(t, "block") < 3, Handler: rapid.IntRange(0, maxHandlers-1).Draw(t, "h")}
		default:
			return step{Op: opStart}
		}
	})
}

type mHandler struct {
	p       *probe
	reg     Registration
	exp     expectation
	cur     cursor // how far its calls conform to exp
	hasInit bool   // the initial list is assigned (at AddHandler after Start, else at Start)
	blocked bool
	removed bool
	// lossy: removed with notifications possibly undelivered (it was
	// blocked); what it received must still be a prefix of exp.
	lossy bool
}

// machine drives one fan-out and the model (a store and each handler's
// expectation) in lock step, inside a synctest bubble, with
// synctest.Wait as the step boundary. Every call into the subject runs in
// a goroutine so that a call that blocks is reported, not hung on.
type machine struct {
	f        FanOut
	rec      *checkkit.Recorder
	store    map[string]bool
	handlers []*mHandler
	started  bool
	bursts   int // events emitted by bursts so far
	driver
}

func newMachine(f FanOut, rec *checkkit.Recorder) *machine {
	return &machine{f: f, rec: rec, store: map[string]bool{}}
}

// driver calls into a subject from inside a bubble. Each call runs in a
// goroutine, so that one that blocks is reported, not hung on. Once a call
// is stuck, the driver makes no further call: the stuck one may hold a
// lock, and a goroutine waiting for a mutex is not durably blocked, so the
// bubble could never become quiescent again.
type driver struct {
	stuck   bool
	pending chan struct{} // closed when the stuck call returns
}

// call runs f and reports whether it returned by the time the bubble is
// quiescent; after a stuck call it runs nothing and reports false, until
// the stuck call returned (see unstick).
func (d *driver) call(f func()) bool {
	if d.stuck && !d.unstick() {
		return false
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	synctest.Wait()
	if !isClosed(done) {
		d.stuck, d.pending = true, done
		return false
	}
	return true
}

// unstick reports whether the stuck call has returned since (say, once the
// handler it waited for was released), and if so lets calls through again:
// the machine can then stop the fan-out, instead of leaving its goroutines
// blocked for good in an abandoned bubble, which the shrinker's many
// failing replays would pile up.
func (d *driver) unstick() bool {
	if d.stuck && isClosed(d.pending) {
		d.stuck, d.pending = false, nil
	}
	return !d.stuck
}

func (x *machine) storeKeys() []string {
	var ks []string
	for k, ok := range x.store {
		if ok {
			ks = append(ks, k)
		}
	}
	slices.Sort(ks)
	return ks
}

func (x *machine) Apply(s step) error {
	var h *mHandler
	if s.Op == opBlock || s.Op == opUnblock || s.Op == opRemove {
		if s.Handler >= len(x.handlers) {
			return nil
		}
		h = x.handlers[s.Handler]
		if h.removed && s.Op != opUnblock {
			return nil
		}
	}
	if s.Op == opBurst && x.bursts+s.N > maxBurstEvents {
		s.N = min(s.N, 64)
	}
	x.rec.Step(s.String(), "", "")
	switch s.Op {
	case opBurst:
		return x.burst(s)
	case opEmit:
		kind := Add
		if x.store[s.Key] {
			kind = Update
			if s.Delete {
				kind = Delete
			}
		}
		if !x.call(func() { x.f.Emit(kind, s.Key) }) {
			return checkkit.Broke(GNonBlocking, "Emit(%s) of %s did not return (handlers blocked: %v)", eventOf(kind, s.Key), s.Key, x.blockedNames())
		}
		x.store[s.Key] = kind != Delete
		if x.started {
			for _, h := range x.handlers {
				if !h.removed {
					h.exp.seq = append(h.exp.seq, eventOf(kind, s.Key))
				}
			}
		}
	case opAddHandler:
		if len(x.handlers) >= maxHandlers {
			return nil
		}
		nh := &mHandler{p: newProbe(fmt.Sprintf("h%d", len(x.handlers)))}
		var err error
		if !x.call(func() { nh.reg, err = x.f.AddHandler(nh.p) }) {
			return checkkit.Broke(GNonBlocking, "AddHandler did not return")
		}
		if err != nil {
			return checkkit.Broke(GAddHandler, "AddHandler on a running fan-out: %v", err)
		}
		if x.started {
			nh.exp.init, nh.hasInit = x.storeKeys(), true
		}
		x.handlers = append(x.handlers, nh)
	case opBlock:
		if !h.blocked {
			h.blocked = true
			h.p.block()
		}
	case opUnblock:
		if h.blocked {
			h.blocked = false
			h.p.unblock()
		}
	case opRemove:
		var err error
		if !x.call(func() { err = x.f.RemoveHandler(h.reg) }) {
			return checkkit.Broke(GNonBlocking, "RemoveHandler(%s) did not return", h.p.name)
		}
		if err != nil {
			return checkkit.Broke(GRemove, "RemoveHandler(%s): %v", h.p.name, err)
		}
		h.removed = true
		h.lossy = h.blocked
		if !x.started {
			h.hasInit = true // never gets an initial list
		}
	case opStart:
		if x.started {
			return nil
		}
		if !x.call(x.f.Start) {
			return checkkit.Broke(GNonBlocking, "Start did not return")
		}
		x.started = true
		for _, h := range x.handlers {
			if !h.removed {
				h.exp.init, h.hasInit = x.storeKeys(), true
			}
		}
	}
	return x.settle()
}

// burst emits s.N events in one call: keys b0.. over three quarters of N
// (so most are new and the store grows), the rest revisiting the first
// ones; a present key is updated or deleted, an absent one added.
func (x *machine) burst(s step) error {
	if s.Block {
		// The first handler still registered from s.Handler on (cyclic):
		// a burst then piles up behind a blocked handler as often as
		// possible.
		for i := range x.handlers {
			if h := x.handlers[(s.Handler+i)%len(x.handlers)]; !h.removed {
				if !h.blocked {
					h.blocked = true
					h.p.block()
				}
				break
			}
		}
	}
	span := max(1, s.N-s.N/4)
	kinds := make([]Kind, s.N)
	keys := make([]string, s.N)
	for i := range s.N {
		k := fmt.Sprintf("b%d", i%span)
		kind := Add
		if x.store[k] {
			kind = Update
			if i%2 == 1 {
				kind = Delete
			}
		}
		x.store[k] = kind != Delete
		kinds[i], keys[i] = kind, k
	}
	x.bursts += s.N

	if !x.call(func() {
		for i := range kinds {
			x.f.Emit(kinds[i], keys[i])
		}
	}) {
		return checkkit.Broke(GNonBlocking, "a burst of %d emits did not return (handlers blocked: %v)", s.N, x.blockedNames())
	}
	if x.started {
		for _, h := range x.handlers {
			if !h.removed {
				for i := range kinds {
					h.exp.seq = append(h.exp.seq, eventOf(kinds[i], keys[i]))
				}
			}
		}
	}
	return x.settle()
}

func (x *machine) blockedNames() []string {
	var ns []string
	for _, h := range x.handlers {
		if h.blocked && !h.removed {
			ns = append(ns, h.p.name)
		}
	}
	return ns
}

// settle checks every handler at a quiescent point.
func (x *machine) settle() error {
	synctest.Wait()
	for _, h := range x.handlers {
		if err := x.check(h, false); err != nil {
			return err
		}
	}
	return nil
}

// check compares one handler with its expectation. final: the machine has
// stopped the fan-out after unblocking every handler.
func (x *machine) check(h *mHandler, final bool) error {
	if h.p.overlap.Load() {
		return checkkit.Broke(GSerial, "%s: two handler calls overlapped", h.p.name)
	}
	more := h.p.receivedFrom(h.cur.n)
	if !h.hasInit && h.cur.n+len(more) > 0 {
		return checkkit.Broke(GDelivery, "%s received %s before the fan-out started", h.p.name, window(more, -1))
	}
	exact := !h.blocked && !h.lossy && (h.hasInit || !final)
	if msg := h.cur.advance(h.exp, more, exact); msg != "" {
		x.rec.Step(h.p.name+" received", abridge(append(prefixed(h.exp.init), h.exp.seq...)), abridge(h.p.received()))
		return checkkit.Broke(GDelivery, "%s: %s", h.p.name, msg)
	}
	if final {
		return nil
	}
	if h.removed {
		if !h.blocked && !isClosed(h.reg.Done()) {
			return checkkit.Broke(GRemove, "%s was removed and is not in a handler call, but its Done channel is open", h.p.name)
		}
		return nil
	}
	if isClosed(h.reg.Done()) {
		return checkkit.Broke(GRemove, "%s's Done channel closed although it was not removed and the fan-out runs", h.p.name)
	}
	// Sync: true exactly when the fan-out runs and every initial add for
	// this handler has returned.
	want := x.started && h.hasInit && h.p.returned() >= len(h.exp.init)
	if got := h.reg.HasSynced(); got != want {
		x.rec.Step(h.p.name+" HasSynced", fmt.Sprint(want), fmt.Sprint(got))
		return checkkit.Broke(GHandlerSync, "%s: HasSynced() = %v with %d of %d initial adds returned (started: %v)", h.p.name, got, min(h.p.returned(), len(h.exp.init)), len(h.exp.init), x.started)
	}
	return nil
}

// abridge joins a list of notifications for a trace step, eliding the
// middle of a long one.
func abridge(evs []string) string {
	const keep = 32
	if len(evs) <= 2*keep {
		return strings.Join(evs, " ")
	}
	return fmt.Sprintf("%s ... (%d more) ... %s", strings.Join(evs[:keep], " "), len(evs)-2*keep, strings.Join(evs[len(evs)-keep:], " "))
}

func prefixed(keys []string) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = initEv(k)
	}
	return out
}

// Close unblocks every handler, stops the fan-out and checks that every
// handler still registered received everything.
func (x *machine) Close() error {
	for _, h := range x.handlers {
		if h.blocked {
			h.blocked = false
			h.p.unblock()
		}
	}
	synctest.Wait()
	for _, h := range x.handlers {
		if err := x.check(h, false); err != nil {
			return err
		}
	}
	if !x.call(x.f.Stop) {
		return checkkit.Broke(GShutdown, "Stop did not return with no handler call in progress")
	}
	for _, h := range x.handlers {
		if err := x.check(h, true); err != nil {
			return err
		}
	}
	return nil
}
