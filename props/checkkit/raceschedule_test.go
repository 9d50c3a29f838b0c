package checkkit

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kverify/kverify/traces"
)

// toyRace is a race probe of two pairs whose subject breaks in round 7 of
// p2 (whatever the offset): it logs every round it races.
func toyRace(t *testing.T, cfg Config, raced *[]RaceAt) error {
	sched := NewRaceSchedule(cfg, 2, 20)
	defer sched.Stop()
	return InBubble(t, func() error {
		return sched.Loop(t, 1, func(r *Racer, round int) error {
			for _, pair := range []string{"p1", "p2"} {
				if !sched.Runs(pair) {
					continue
				}
				at := sched.At(pair, round)
				*raced = append(*raced, at)
				if _, err := r.RaceChecked(cfg.Progress, at, func() {}, func() {}); err != nil {
					return err
				}
				if pair == "p2" && at.Round == 7 {
					return at.Broke("Toy", "round 7 of p2 breaks")
				}
			}
			return nil
		})
	})
}

// A race probe's failing round is saved in its probe trace (pair, round,
// offset, seed), and replaying the trace races only that pair, at that
// round and offset, so the violation occurs again at once.
func TestRaceTraceReplaysItsRound(t *testing.T) {
	var raced []RaceAt
	err := toyRace(t, Config{}, &raced)
	var v *Violation
	if !errors.As(err, &v) || v.Race == nil {
		t.Fatalf("toy probe: %v, want a violation naming its round", err)
	}
	last := raced[len(raced)-1]
	if want := (traces.Race{Seed: last.Seed, Pair: "p2", Round: 7, Offset: last.Offset}); *v.Race != want {
		t.Fatalf("violation's round %+v, want %+v", *v.Race, want)
	}
	if !strings.Contains(v.Error(), "KVERIFY_RACE_SEED="+strconv.FormatUint(last.Seed, 10)) {
		t.Errorf("the violation does not print its race seed:\n%v", v)
	}

	dir := t.TempDir()
	err = saveProbe(t, Config{Component: "toy", TraceDir: dir}, "toy/race", err)
	if !errors.As(err, &v) || v.TracePath == "" {
		t.Fatalf("no probe trace saved: %v", err)
	}
	tr, rerr := traces.Read(v.TracePath)
	if rerr != nil {
		t.Fatal(rerr)
	}
	if tr.Race == nil || *tr.Race != *v.Race {
		t.Fatalf("trace's race %+v, want %+v", tr.Race, *v.Race)
	}

	raced = nil
	err = toyRace(t, probeReplayConfig(Config{}, tr), &raced)
	if !errors.As(err, &v) || v.Race == nil || *v.Race != *tr.Race {
		t.Fatalf("replay: %v, want the same round to break again", err)
	}
	for _, at := range raced {
		if at.Pair != "p2" || at.Round != 7 || at.Seed != tr.Race.Seed {
			t.Fatalf("replay raced %+v, want only %+v", at, *tr.Race)
		}
	}
	if raced[0].Offset != tr.Race.Offset {
		t.Fatalf("replay's first round at offset %d, want the trace's %d", raced[0].Offset, tr.Race.Offset)
	}
}

// The offsets are a function of the seed and the pair: the same seed
// draws the same offsets, another seed others, and every offset stays in
// its sweep.
func TestRaceScheduleOffsetsFollowTheSeed(t *testing.T) {
	offsets := func(seed uint64, pair string) []int {
		s := &RaceSchedule{seed: seed}
		var out []int
		for round := range 64 {
			at := s.At(pair, round)
			if at.Seed != seed || at.Round != round || at.Pair != pair {
				t.Fatalf("At(%q, %d) = %+v", pair, round, at)
			}
			if at.Offset < -raceWide || at.Offset > raceWide {
				t.Fatalf("offset %d outside every sweep", at.Offset)
			}
			out = append(out, at.Offset)
		}
		return out
	}
	a, b := offsets(1, "p"), offsets(1, "p")
	if !slices.Equal(a, b) {
		t.Fatalf("seed 1 drew %v, then %v", a, b)
	}
	if slices.Equal(a, offsets(2, "p")) {
		t.Errorf("seeds 1 and 2 drew the same offsets")
	}
	if slices.Equal(a, offsets(1, "q")) {
		t.Errorf("pairs p and q drew the same offsets")
	}
}

// A schedule's rounds are counted, not timed: with no budget it stops once
// it has its hot rounds, or at raceCap times as many released.
func TestRaceScheduleStopsByCount(t *testing.T) {
	var raced []RaceAt
	sched := NewRaceSchedule(Config{}, 1, 50)
	defer sched.Stop()
	var r *Racer
	err := InBubble(t, func() error {
		return sched.Loop(t, 1, func(rr *Racer, round int) error {
			r = rr
			at := sched.At("p", round)
			raced = append(raced, at)
			_, err := rr.RaceChecked(nil, at, func() {}, func() {})
			return err
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := r.releasedRounds(); n > raceCap*50 || r.hotRounds() < 50 && n < raceCap*50 {
		t.Fatalf("stopped after %d rounds, %d hot: want 50 hot, or %d rounds", n, r.hotRounds(), raceCap*50)
	}
}
