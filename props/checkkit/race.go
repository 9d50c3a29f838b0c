package checkkit

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"testing/synctest"
)

// Race probes look for bugs inside one call: a call that releases its lock
// between two steps, or updates two structures non-atomically, is wrong
// only when another call on the same item lands in that window, which a
// random concurrent workload hits by luck. A probe runs many short rounds;
// each puts two calls on the same item at the same instant, one on the
// probe's goroutine and one on a Racer's, and checks the outcome against
// the serial orders the model allows.
//
// The Racer's goroutine lives for the whole probe and spins between
// rounds (parking only when none comes for long: raceIdlePark), so both
// calls start hot, on two CPUs, within a few hundred
// nanoseconds of each other; RaceOffset then delays one of them, narrowly
// around the same instant, across a microsecond or across a few
// microseconds, round by round. Under -race, whose instrumentation widens
// every window, a window of a few nanoseconds (an Unlock followed at once
// by a Lock) is hit in a good share of rounds.

// RaceRounds is the number of rounds a race probe runs for each pair of
// calls in the default gate; Config.Budget adds more.
const RaceRounds = 600

// Sweeps of RaceOffset, in spin iterations (about a nanosecond each, with
// or without -race: the loop touches no memory the race detector watches).
const (
	raceNarrow = 100
	raceMedium = 1024
	raceWide   = 4096
)

// RaceOffset is round's offset in spin iterations, from three sweeps:
// [-raceNarrow, raceNarrow] (the same instant) on even rounds, and
// [-raceMedium, raceMedium] and [-raceWide, raceWide] in turn on odd ones.
// The narrow sweep keeps half the rounds because a window of zero width
// (an Unlock followed at once by a Lock) is hit only by a call that is
// already spinning on the lock; the medium sweep is there because under
// -race most other windows open a few hundred iterations into a call
// (after a Lock, a check and an Unlock, each a call into the detector),
// where the wide sweep puts few rounds. Consecutive rounds of each sweep
// are far apart, and every offset comes up once per sweep period (the
// stride is coprime with each sweep's width).
func RaceOffset(round int) int {
	if round%2 == 0 {
		return (round/2*raceStride)%(2*raceNarrow+1) - raceNarrow
	}
	span := [...]int{raceMedium, raceWide}[round/2%2]
	return (round/4*raceStride)%(2*span+1) - span
}

const raceStride = 97

var spinSink atomic.Int64

// spin burns about n loop iterations on registers only.
func spin(n int) {
	x := 0
	for i := range n {
		x += i ^ x>>3
	}
	spinSink.Store(int64(x))
}

// raceHot is how many spin-wait iterations (pause: a few dozen
// nanoseconds each) the racer may take to pick a round up for the round to
// count as hot: both goroutines were running when it started.
const raceHot = 32

// raceJoin is how many spin-wait iterations (pause) the caller waits for
// the Racer's call before it settles the bubble to find out whether the
// call blocks.
const raceJoin = 1 << 12

// raceIdlePark is how many idle iterations (tens of milliseconds of CPU)
// the racer spins without a round before it parks on its own, as if the
// caller had asked (Park); the next Race wakes it. Rounds come
// microseconds apart, so only a caller that no longer runs rounds meets
// it: one whose own call deadlocked in the subject. Spinning on, the racer
// made that deadlock read as a spin to the watchdog ("the subject spins
// or polls instead of blocking"), and kept a CPU busy until the hang
// verdict.
const raceIdlePark = 1 << 20

// Racer is a race probe's second goroutine. Make one inside the probe's
// synctest bubble with newRacer, run rounds with Race from the bubble's
// root goroutine (the only one that may call Race, Settle and Close), and
// Close it before the bubble ends.
type Racer struct {
	released atomic.Int64 // rounds released
	picked   atomic.Int64 // rounds the racer has seen released
	finished atomic.Int64 // rounds whose call returned
	hot      atomic.Int64 // rounds started with both goroutines on a CPU
	beat     atomic.Int64 // the racer's idle loop counts here: it is on a CPU while it moves
	parkReq  atomic.Bool  // park instead of spinning: the caller settles
	parked   atomic.Bool
	quit     atomic.Bool
	wake     chan struct{}
	exited   chan struct{}

	yieldEvery int  // idle iterations between yields
	lastCold   bool // the last round started cold (the caller's: Race)

	// Set by the caller before a round is released, read by the racer.
	call   func()
	offset int
	// Set by the racer before its round is finished.
	panicked any
}

// newRacer starts a Racer's goroutine. It spins while it waits for a
// round (until raceIdlePark), so only the caller's goroutine should run
// meanwhile.
func newRacer() *Racer {
	r := &Racer{wake: make(chan struct{}, 1), exited: make(chan struct{}), yieldEvery: 64}
	if runtime.GOMAXPROCS(0) > 1 {
		r.yieldEvery = 4096
	}
	go r.loop()
	return r
}

func (r *Racer) loop() {
	defer close(r.exited)
	var last int64
	for {
		for i := 1; r.released.Load() == last; i++ {
			if r.quit.Load() {
				return
			}
			if r.parkReq.Load() || i >= raceIdlePark {
				if r.released.Load() != last {
					break // released before the caller parked it: run it
				}
				// Durably blocked, so that the caller's synctest.Wait
				// can return and fake time can pass.
				r.parked.Store(true)
				if r.released.Load() == last && !r.quit.Load() {
					<-r.wake
				}
				r.parked.Store(false)
				i = 0 // spin again before parking on its own
				continue
			}
			r.idle(i)
		}
		last = r.released.Load()
		r.picked.Store(last)
		spin(max(0, r.offset))
		r.panicked = nil
		func() {
			defer func() { r.panicked = recover() }()
			r.call()
		}()
		r.finished.Store(last)
	}
}

// Race runs a on the caller's goroutine and b on the racer's, released at
// the same instant and then delayed by offset spin iterations (b for
// offset > 0, a for offset < 0). It returns once a has returned and b has
// returned or, after a short spin, seems to block; then Pending tells
// which, after Settle if need be. a must not block. The previous round's b
// must have returned.
func (r *Racer) Race(offset int, a, b func()) {
	if r.Pending() {
		panic("props: Racer.Race while the previous call is still in flight")
	}
	r.call, r.offset = b, offset
	if r.parkReq.Swap(false) {
		// Wake a parked racer and let it get back to spinning first:
		// released at once, it would start microseconds late, cold.
		for i := 1; r.parked.Load(); i++ {
			select { // it may have parked just after the request ended
			case r.wake <- struct{}{}:
			default:
			}
			pause(i)
		}
	}
	// Release the round while the racer is seen running (its idle beat
	// moves), not while the operating system has it off its CPU: beside
	// CPU-bound processes most rounds released blind started cold, and a
	// window of a few nanoseconds (two ShutDowns closing one channel) was
	// hit in one loaded run of three. Only after a cold round: on a quiet
	// machine the racer is always running, and the wait, with the beat's
	// cache line between two CPUs, moved the release off the instants that
	// hit windows (queue/race took 4x as long to kill). Bounded: a racer
	// that is not seen gets the round anyway.
	for i := 1; r.lastCold && i < raceJoin; i++ {
		b := r.beat.Load()
		spin(64)
		if r.beat.Load() != b {
			break
		}
		pause(i)
	}
	round := r.released.Add(1)
	// A racer that saw the park request before the Swap above, and the
	// round not yet released, may park after the wake loop found it
	// unparked: without a token it would sleep through the round, and
	// Settle would report its call blocked (delaying/lifecycle failed once
	// in a CI run so, on client-go, at round 241). A stale token only
	// makes a later park spin once more.
	select {
	case r.wake <- struct{}{}:
	default:
	}
	// Wait (briefly) for the racer to pick the round up, so that both
	// goroutines are on a CPU when the offsets start to count.
	i := 1
	for ; i < raceJoin && r.picked.Load() != round; i++ {
		pause(i)
	}
	r.lastCold = i > raceHot
	if !r.lastCold {
		r.hot.Add(1)
	}
	spin(max(0, -offset))
	a()
	for i := 1; i < raceJoin && r.finished.Load() != round; i++ {
		pause(i)
	}
}

// hotRounds is the number of rounds so far in which both goroutines were on a
// CPU when the round started (the racer picked it up at once). On a loaded
// machine the racer is often off its CPU when a round is released, and
// such a round rarely hits a window; probes count hot rounds, not rounds
// released, so that a busy machine gets more rounds, not a weaker probe.
func (r *Racer) hotRounds() int64 { return r.hot.Load() }

// pause is the body of a spin-wait's i-th iteration: a few dozen
// nanoseconds of register work between two atomic loads (under -race each
// load is a call into the detector), and now and then a yield, since the
// goroutine waited for may be queued on this CPU.
func pause(i int) {
	spin(32)
	if i%64 == 0 {
		runtime.Gosched()
	}
}

// idle is the racer's wait between rounds: like pause, but yielding only
// now and then when there are CPUs enough for it to keep its own. Yielding
// often hands its CPU to the subject's goroutines, and a racer that comes
// back late misses the start of the round.
func (r *Racer) idle(i int) {
	r.beat.Add(1)
	spin(32)
	if i%r.yieldEvery == 0 {
		runtime.Gosched()
	}
}

// Pending reports whether the last round's b has not returned (yet).
func (r *Racer) Pending() bool { return r.finished.Load() != r.released.Load() }

// lastPanic is the last round's b's panic value, once it returned.
func (r *Racer) lastPanic() any {
	if r.Pending() {
		return nil
	}
	return r.panicked
}

// Park makes the racer block (durably) instead of spinning once its call
// has returned, until the next Race: call it before anything that needs
// the bubble to become idle, such as time.Sleep or synctest.Wait.
func (r *Racer) Park() { r.parkReq.Store(true) }

// Settle parks the racer, waits until every goroutine of the bubble is
// durably blocked (synctest.Wait), and reports whether the racer's call is
// still in flight: blocked.
func (r *Racer) Settle() (blocked bool) {
	r.Park()
	synctest.Wait()
	return r.Pending()
}

// Close stops the racer's goroutine once its call has returned; a call
// still blocked must be released first (shut the subject down), or Close
// waits for it.
func (r *Racer) Close() {
	r.quit.Store(true)
	select {
	case r.wake <- struct{}{}:
	default:
	}
	<-r.exited
}

// RaceChecked is Race with what every probe checks after it: a panic of
// either call becomes a "No panic" violation naming the round, also handed
// to p.Abandon (a subject that panicked holding its lock can block the
// probe's cleanup for ever); and blocked reports a b still in flight once
// a has returned and the bubble has settled.
func (r *Racer) RaceChecked(p *Progress, at RaceAt, a, b func()) (blocked bool, err error) {
	var aPanic any
	r.Race(at.Offset, func() {
		defer func() { aPanic = recover() }()
		a()
	}, b)
	v := aPanic
	if v == nil {
		if r.Pending() && r.Settle() {
			return true, nil
		}
		v = r.lastPanic()
	}
	if v != nil {
		err := at.Broke(GNoPanic, "a call panicked: %v", v)
		p.Abandon(err)
		return false, err
	}
	return false, nil
}

// releasedRounds is the number of rounds released so far.
func (r *Racer) releasedRounds() int64 { return r.released.Load() }

// String reports the racer's rounds, for a probe's log.
func (r *Racer) String() string {
	return fmt.Sprintf("%d rounds, %d hot (both goroutines on a CPU at the start)", r.releasedRounds(), r.hotRounds())
}
