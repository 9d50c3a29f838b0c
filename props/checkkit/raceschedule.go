package checkkit

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kverify/kverify/traces"
)

// A race probe's schedule is what the probe chooses, as a function of a
// seed: which pairs race, in which rounds, at which offset. The operating
// system chooses the rest (where each goroutine is when the other reaches
// the window), and that cannot be recorded or chosen from a Go program.
// So a failing round saves what was chosen (traces.Race: seed, pair,
// round, offset) in its trace; the same seed draws the same offsets again
// (KVERIFY_RACE_SEED), and replaying the trace races only that pair, set
// up as that round was, at that offset every other round and along the
// pair's sweep in between, until the violation occurs again or
// raceReplayRounds hot rounds have passed. (The recorded offset alone, in
// every round, reproduced a lost Add of wq-done-split-lock in none of
// 5000 rounds; alternating it with the sweep, in 8 replays of 9, and
// every replay of four other mutants' race traces within 2 s.)
//
// How many rounds a probe runs is counted, never timed: it stops once its
// racer has run the rounds it wants hot (both goroutines on a CPU when the
// round started, see Racer.hotRounds) or, on a machine too busy to give the
// racer a CPU, once raceCap times that many rounds were released. Only an
// explicit exploration budget (Config.Budget, kverify --budget) adds
// rounds for a length of wall time.

// raceReplayRounds is how many hot rounds a replayed race round is tried
// for before the replay reports that it did not occur again.
const raceReplayRounds = 5000

// raceCap bounds the rounds a probe releases, as a multiple of the hot
// rounds it wants: under load most rounds start cold and few of them hit
// a window, so more are run, up to this.
const raceCap = 2

// RaceAt is one round of a race probe: the pair of calls that race, the
// round's number, the offset the schedule chose for it (see Racer.Race)
// and the seed it was drawn from.
type RaceAt struct {
	Pair   string
	Round  int
	Offset int
	Seed   uint64
}

// String names the round for progress reports and violations.
func (a RaceAt) String() string {
	return fmt.Sprintf("race %s, round %d (offset %d)", a.Pair, a.Round, a.Offset)
}

// Broke is a violation of guarantee found in round a: its detail starts
// with the round's name, and it carries the round, so that its probe trace
// replays that pair at that offset.
func (a RaceAt) Broke(guarantee, format string, args ...any) error {
	return &Violation{Guarantee: guarantee, Detail: a.String() + ": " + fmt.Sprintf(format, args...),
		Race: &traces.Race{Seed: a.Seed, Pair: a.Pair, Round: a.Round, Offset: a.Offset}}
}

// Mark returns err with round a recorded in it when err is a violation
// that names no round yet (one a probe's shared helper made), so that its
// probe trace replays a; any other err is returned as is.
func (a RaceAt) Mark(err error) error {
	var v *Violation
	if errors.As(err, &v) && v.Race == nil {
		v.Race = &traces.Race{Seed: a.Seed, Pair: a.Pair, Round: a.Round, Offset: a.Offset}
	}
	return err
}

// raceSeed is the seed of the race probes' offsets: KVERIFY_RACE_SEED when
// set, else random. (A malformed KVERIFY_RACE_SEED fails Run before any
// check starts.)
func (c Config) raceSeed() uint64 {
	if env := c.environ(); env.HasRaceSeed {
		return env.RaceSeed
	}
	return rand.Uint64()
}

// RaceSchedule is a race probe's choices (see At and Runs) and when it has
// run enough rounds (Done). Make one per probe, outside its bubble, with
// NewRaceSchedule; Stop it when done.
type RaceSchedule struct {
	seed      uint64
	focus     *traces.Race // replaying: only this pair, at this offset
	want, cap int64
	budget    *WallTimer
}

// NewRaceSchedule returns the schedule of a probe of pairs pairs of calls,
// each to race in rounds hot rounds, exploring for cfg.Budget more. When
// cfg replays a race trace (WithProbeReplay), the schedule runs only the
// trace's pair, as its round, for raceReplayRounds hot rounds.
func NewRaceSchedule(cfg Config, pairs, rounds int) *RaceSchedule {
	s := &RaceSchedule{seed: cfg.raceSeed(), want: int64(pairs * rounds), budget: NewWallTimer(cfg.Budget)}
	if f := cfg.race; f != nil {
		s.seed, s.focus, s.want = f.Seed, f, raceReplayRounds
		s.budget = NewWallTimer(0)
	}
	s.cap = raceCap * s.want
	return s
}

// Seed is the seed the schedule draws its offsets from.
func (s *RaceSchedule) Seed() uint64 { return s.seed }

// Runs reports whether the probe races pair: every pair, except when a
// race trace is replayed, which races only its own.
func (s *RaceSchedule) Runs(pair string) bool { return s.focus == nil || s.focus.Pair == pair }

// At is round of pair: its offset is RaceOffset of the round shifted by a
// phase drawn from the seed and the pair, so that a seed picks the offsets
// of every round and the sweeps still cover each offset once a period.
// When a race trace is replayed, every round is the trace's round, at the
// trace's offset in even rounds. A probe that sets up a round by its
// number uses the RaceAt's Round.
func (s *RaceSchedule) At(pair string, round int) RaceAt {
	at := RaceAt{Pair: pair, Round: round, Seed: s.seed}
	h := fnv.New64a()
	fmt.Fprintf(h, "%d/%s", s.seed, pair)
	at.Offset = RaceOffset(round + int(h.Sum64()%racePhases))
	if s.focus != nil {
		// The recorded round too: a probe may set up by the round's
		// number. Every other round at the recorded offset; the others
		// sweep as the probe did.
		at.Round = s.focus.Round
		if round%2 == 0 {
			at.Offset = s.focus.Offset
		}
	}
	return at
}

// racePhases is the range of a pair's phase: a multiple of every sweep's
// period, so that a phase keeps each sweep's coverage.
const racePhases = 4 * (2*raceNarrow + 1) * (2*raceMedium + 1) * (2*raceWide + 1)

// Done reports whether the probe may stop: the budget has passed, and its
// racer has run the hot rounds it wants or released raceCap times as many
// rounds. (An explicit budget is a request for more exploration: the cap
// does not cut it short. kverify mutants' second pass over survivors
// explores so, for race windows a loaded machine missed.)
func (s *RaceSchedule) Done(r *Racer) bool {
	return s.budget.Expired() && (r.hotRounds() >= s.want || r.releasedRounds() >= s.cap)
}

// Loop runs a probe's rounds inside the caller's synctest bubble: it
// starts a Racer, calls round with it for rounds 0, step, 2*step, ...
// until round fails, the schedule is done or a round releases no racer
// round, logs the racer's counts and the seed to t, and closes the racer.
func (s *RaceSchedule) Loop(t *testing.T, step int, round func(r *Racer, n int) error) error {
	r := newRacer()
	defer r.Close()
	for n := 0; ; n += step {
		before := r.releasedRounds()
		if err := round(r, n); err != nil {
			return err
		}
		if r.releasedRounds() == before {
			// The round raced nothing (every pair skipped: declared, or
			// out of a replay's focus): the next would not either, and
			// Done, which counts released rounds, would never come.
			t.Logf("%v; a round raced nothing: the probe ends; race seed %d", r, s.seed)
			return nil
		}
		if s.Done(r) {
			t.Logf("%v; race seed %d", r, s.seed)
			return nil
		}
	}
}

// Stop releases the schedule's timer.
func (s *RaceSchedule) Stop() { s.budget.Stop() }

// WallTimer tells, inside a synctest bubble too (where time.Now is fake),
// whether some real time has passed since it was made: what an explicit
// exploration budget (Config.Budget) is measured with. Make it outside any
// bubble; Stop it when done.
type WallTimer struct {
	expired atomic.Bool
	t       *time.Timer
}

// NewWallTimer starts a WallTimer of d.
func NewWallTimer(d time.Duration) *WallTimer {
	w := &WallTimer{}
	if d <= 0 {
		w.expired.Store(true)
		return w
	}
	w.t = time.AfterFunc(d, func() { w.expired.Store(true) })
	return w
}

// Expired reports whether the time has passed.
func (w *WallTimer) Expired() bool { return w.expired.Load() }

// Stop releases the timer.
func (w *WallTimer) Stop() {
	if w.t != nil {
		w.t.Stop()
	}
}
