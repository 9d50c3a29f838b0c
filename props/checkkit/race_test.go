package checkkit

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

func TestRacerRunsBothCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRacer()
		defer r.Close()
		var a, b atomic.Int64
		for round := range 200 {
			blocked, err := r.RaceChecked(nil, RaceAt{Pair: "a/b", Round: round, Offset: RaceOffset(round)}, func() { a.Add(1) }, func() { b.Add(1) })
			if blocked || err != nil {
				t.Fatalf("round %d: blocked %v, err %v", round, blocked, err)
			}
		}
		if a.Load() != 200 || b.Load() != 200 {
			t.Fatalf("a ran %d times, b %d, want 200 each", a.Load(), b.Load())
		}
		// Parked, the racer lets fake time pass.
		r.Park()
		time.Sleep(time.Hour)
	})
}

func TestRacerTellsBlockedAndPanics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRacer()
		defer r.Close()
		release := make(chan struct{})
		blocked, err := r.RaceChecked(nil, RaceAt{Pair: "x"}, func() {}, func() { <-release })
		if !blocked || err != nil {
			t.Fatalf("a b waiting on a channel: blocked %v, err %v", blocked, err)
		}
		close(release)
		synctest.Wait()
		var p Progress
		_, err = r.RaceChecked(&p, RaceAt{Pair: "p", Round: 1}, func() {}, func() { panic("boom") })
		var v *Violation
		if !errors.As(err, &v) || !strings.Contains(v.Detail, "boom") || p.verdict.Load() == nil {
			t.Fatalf("b panicked: err %v, verdict %v", err, p.verdict.Load())
		}
		_, err = r.RaceChecked(nil, RaceAt{Pair: "p", Round: 2}, func() { panic("bang") }, func() {})
		if !errors.As(err, &v) || !strings.Contains(v.Detail, "bang") || v.Race == nil || v.Race.Pair != "p" || v.Race.Round != 2 {
			t.Fatalf("a panicked: err %v", err)
		}
	})
}

func TestRaceOffsetSweeps(t *testing.T) {
	seen := map[int]bool{}
	for round := 0; round < 2*(2*raceNarrow+1); round += 2 {
		o := RaceOffset(round)
		if o < -raceNarrow || o > raceNarrow {
			t.Fatalf("round %d: offset %d outside the narrow sweep", round, o)
		}
		seen[o] = true
	}
	if len(seen) != 2*raceNarrow+1 {
		t.Fatalf("the narrow sweep covered %d of %d offsets", len(seen), 2*raceNarrow+1)
	}
	for round := 1; round < 4*(2*raceMedium+1); round += 4 {
		if o := RaceOffset(round); o < -raceMedium || o > raceMedium {
			t.Fatalf("round %d: offset %d outside the medium sweep", round, o)
		}
	}
	for round := 3; round < 4*64; round += 4 {
		if o := RaceOffset(round); o < -raceWide || o > raceWide {
			t.Fatalf("round %d: offset %d outside the wide sweep", round, o)
		}
	}
}
