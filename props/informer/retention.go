package informer

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"weak"

	"github.com/kverify/kverify/props/checkkit"
)

// CheckRetention is the listener's retention check.
const CheckRetention = "listener/retention"

// retentionKeys is how many keys the retention check adds and deletes
// behind a blocked handler: past client-go's 1024-slot initial buffer.
const retentionKeys = 1100

// retention checks that a started fan-out lets go of what it delivered:
// with the handler blocked, every key is added and deleted (so the store
// no longer holds it), 2200 notifications pile up in the listener's
// buffer, the handler is released and takes them all; then, with the
// fan-out still running and idle, no key is referenced any more: not by
// the buffer's slots, not by a notification left in hand. The same for a
// handler removed with its backlog, and for keys that reach a handler
// added later as its initial list (retainedInitial).
func retention(s Subject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, cfg checkkit.Config) error {
		if s.SourceRetains != "" {
			checkkit.SkipNotOffered(t, "%s", s.SourceRetains)
		}
		return checkkit.InBubble(t, func() error {
			f := s.New()
			defer f.Stop()
			p := newProbe("h")
			reg, err := f.AddHandler(p)
			if err != nil {
				return fmt.Errorf("AddHandler: %w", err)
			}
			f.Start()
			synctest.Wait()
			p.block()
			probes := make([]weak.Pointer[byte], retentionKeys)
			cfg.Progress.Op(fmt.Sprintf("Add and Delete of %d keys behind a blocked handler", retentionKeys))
			addDelete(f, probes, "listener-")
			synctest.Wait()
			p.unblock()
			synctest.Wait()
			if got := len(p.received()); got != 2*retentionKeys {
				return checkkit.Broke(GDelivery, "the handler received %d of the %d notifications once released", got, 2*retentionKeys)
			}
			if held := checkkit.Held(probes...); len(held) > 0 {
				return checkkit.Broke(GNoRetention, "%d of %d keys added, deleted and delivered are still referenced by the running fan-out (key %d first)", len(held), len(probes), held[0])
			}

			// A handler removed with a backlog: what it will never get is
			// let go, although its registration is still held.
			p.block()
			cfg.Progress.Op(fmt.Sprintf("Add and Delete of %d keys behind a blocked handler, then RemoveHandler", retentionKeys))
			addDelete(f, probes, "removed-")
			synctest.Wait()
			if err := f.RemoveHandler(reg); err != nil {
				return fmt.Errorf("RemoveHandler: %w", err)
			}
			p.unblock()
			synctest.Wait()
			if held := checkkit.Held(probes...); len(held) > 0 {
				return checkkit.Broke(GNoRetention, "%d of %d keys added and deleted behind a handler that was then removed are still referenced while its registration is held (key %d first): a removed listener keeps what it will never deliver", len(held), len(probes), held[0])
			}
			runtime.KeepAlive(reg)
			return retainedInitial(f, probes, cfg)
		})
	}
}

// retainedInitial is the retention check's part for initial lists: keys
// handed to a handler added to the running fan-out as its initial list (in
// ours, through that listener's own buffer, not the path every handler
// shares), behind the handler blocked in its first one, then deleted
// from the store; once delivered, or once the handler is removed, none is
// referenced.
func retainedInitial(f FanOut, probes []weak.Pointer[byte], cfg checkkit.Config) error {
	for i, what := range []string{"delivered", "removed"} {
		keys := make([]string, len(probes))
		for j := range probes {
			keys[j], probes[j] = checkkit.Probe(fmt.Sprint("initial-", what, "-", j))
			f.Emit(Add, keys[j])
		}
		p := newProbe(fmt.Sprint("late", i))
		p.block()
		cfg.Progress.Op(fmt.Sprintf("a handler added with %d keys in the store, blocked in its first initial add; the keys deleted; the handler %s", len(keys), what))
		reg, err := f.AddHandler(p)
		if err != nil {
			return fmt.Errorf("AddHandler: %w", err)
		}
		synctest.Wait()
		for _, k := range keys {
			f.Emit(Delete, k)
		}
		clear(keys)
		synctest.Wait()
		if what == "removed" {
			if err := f.RemoveHandler(reg); err != nil {
				return fmt.Errorf("RemoveHandler: %w", err)
			}
		}
		p.unblock()
		synctest.Wait()
		if what == "delivered" {
			if got := len(p.received()); got < 2*len(probes) {
				return checkkit.Broke(GDelivery, "a handler added with %d keys in the store received %d calls once released, want at least %d (each key's initial add and its delete)", len(probes), got, 2*len(probes))
			}
		}
		if held := checkkit.Held(probes...); len(held) > 0 {
			return checkkit.Broke(GNoRetention, "%d of %d keys given to a handler added later as its initial list, then deleted, are still referenced once it was %s (key %d first)", len(held), len(probes), what, held[0])
		}
		runtime.KeepAlive(reg)
	}
	return nil
}

// CheckBurstMemory is the listener's memory-after-a-burst check.
const CheckBurstMemory = "listener/burst-memory"

// Parameters of the burst-memory check: a burst of burstUpdates behind a
// blocked handler needs several MiB of buffer (client-go's ring and our
// chunks both take 16 B or more per pending notification); once it has
// drained, the running fan-out may keep at most burstRetainedMax of it.
const (
	burstUpdates     = 250_000
	burstRetainedMax = 6 << 20
	// burstStep: the handler drains the burst in steps of this many
	// updates, blocking again at the start of each, so that the check
	// reports progress between steps instead of sitting in one long
	// synctest.Wait (the watchdog's spin detector).
	burstStep = 50_000
)

// burstMemory checks that a drained burst gives its memory back: with the
// handler blocked, burstUpdates updates of one key pile up; the handler is
// released and takes them all; then, with the fan-out still running and
// idle, the live heap is at most burstRetainedMax above what it was before
// the burst (measured after garbage collection both times).
func burstMemory(s Subject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, cfg checkkit.Config) error {
		if s.SourceRetains != "" {
			checkkit.SkipNotOffered(t, "%s", s.SourceRetains)
		}
		return checkkit.InBubble(t, func() error {
			f := s.New()
			defer f.Stop()
			h := &gatedCounter{gate: make(chan struct{})}
			defer h.open()
			if _, err := f.AddHandler(h); err != nil {
				return fmt.Errorf("AddHandler: %w", err)
			}
			f.Start()
			f.Emit(Add, "k")
			f.Emit(Update, "k") // taken by the handler, which blocks in it
			synctest.Wait()
			before := checkkit.LiveHeap()
			cfg.Progress.Op(fmt.Sprintf("%d updates behind a blocked handler", burstUpdates))
			for i := range burstUpdates {
				f.Emit(Update, "k")
				if i%10_000 == 0 {
					cfg.Progress.Beat()
				}
			}
			synctest.Wait()
			for range burstUpdates / burstStep {
				h.gate <- struct{}{} // drain one step
				synctest.Wait()
				cfg.Progress.Beat()
			}
			h.open()
			synctest.Wait()
			if got, want := h.calls.Load(), int64(burstUpdates+2); got != want {
				return checkkit.Broke(GDelivery, "the handler received %d of the %d notifications once released", got, want)
			}
			if kept := int64(checkkit.LiveHeap()) - int64(before); kept > burstRetainedMax {
				return checkkit.Broke(GBurstMemory, "after a burst of %d notifications drained, the running fan-out keeps %.1f MiB more live heap than before it (at most %d MiB allowed)", burstUpdates, float64(kept)/(1<<20), burstRetainedMax>>20)
			}
			return burstInitial(f, cfg)
		})
	}
}

// The initial-list burst: burstInitialHandlers handlers added to the
// running fan-out with burstInitialKeys keys in the store, each blocked in
// its first initial add until all were added: 200,000 notifications
// pending, in ours in the listeners' own buffers (not the path every
// handler shares).
const (
	burstInitialKeys     = 40_000
	burstInitialHandlers = 5
)

// burstInitial checks that initial lists piled up behind blocked handlers
// give their memory back once delivered: the live heap with the handlers
// registered, idle and caught up is at most burstRetainedMax above what it
// was before they were added (the store's keys are in both).
func burstInitial(f FanOut, cfg checkkit.Config) error {
	cfg.Progress.Op(fmt.Sprintf("%d keys in the store, then %d handlers added, each blocked in its first initial add", burstInitialKeys, burstInitialHandlers))
	for i := range burstInitialKeys {
		f.Emit(Add, fmt.Sprint("initial-", i))
		if i%10_000 == 0 {
			cfg.Progress.Beat()
		}
	}
	synctest.Wait()
	before := checkkit.LiveHeap()
	hs := make([]*gatedCounter, burstInitialHandlers)
	for i := range hs {
		hs[i] = &gatedCounter{gate: make(chan struct{}), addsGated: true}
		defer hs[i].open()
		if _, err := f.AddHandler(hs[i]); err != nil {
			return fmt.Errorf("AddHandler: %w", err)
		}
		cfg.Progress.Beat()
	}
	synctest.Wait()
	for _, h := range hs {
		h.open()
		synctest.Wait()
		cfg.Progress.Beat()
		// The store holds the first burst's key too.
		if got := h.calls.Load(); got != burstInitialKeys+1 {
			return checkkit.Broke(GDelivery, "a handler added with %d keys in the store received %d initial adds once released", burstInitialKeys+1, got)
		}
	}
	if kept := int64(checkkit.LiveHeap()) - int64(before); kept > burstRetainedMax {
		return checkkit.Broke(GBurstMemory, "after %d handlers added later each took an initial list of %d that had piled up behind them, the running fan-out keeps %.1f MiB more live heap than before they were added (at most %d MiB allowed)", burstInitialHandlers, burstInitialKeys, float64(kept)/(1<<20), burstRetainedMax>>20)
	}
	return nil
}

// gatedCounter counts its calls and blocks in its first update, and again
// every burstStep updates, until it receives from gate (or gate is
// closed). It keeps nothing per call, so the heap measures the fan-out.
type gatedCounter struct {
	calls   atomic.Int64
	updates atomic.Int64
	gate    chan struct{}
	once    sync.Once
	// addsGated makes its first add block until gate is closed, instead
	// of its updates.
	addsGated bool
}

// open lets every call through from now on.
func (g *gatedCounter) open() { g.once.Do(func() { close(g.gate) }) }

func (g *gatedCounter) OnAdd(string, bool) {
	if g.calls.Add(1) == 1 && g.addsGated {
		<-g.gate
	}
}
func (g *gatedCounter) OnDelete(string) { g.calls.Add(1) }
func (g *gatedCounter) OnUpdate(string, string) {
	g.calls.Add(1)
	if (g.updates.Add(1)-1)%burstStep == 0 {
		<-g.gate
	}
}

// addDelete emits an Add and a Delete of one fresh probe key per element
// of probes, named prefix and its index, and keeps the probes' weak
// pointers there.
func addDelete(f FanOut, probes []weak.Pointer[byte], prefix string) {
	for i := range probes {
		var k string
		k, probes[i] = checkkit.Probe(fmt.Sprint(prefix, i))
		f.Emit(Add, k)
		f.Emit(Delete, k)
	}
}
