package informer

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/kverify/kverify/linearizability"
	"github.com/kverify/kverify/props/checkkit"
)

// CheckLifecycle is the informer's lifecycle check.
const CheckLifecycle = "informer/lifecycle"

// lifecycleEvents is how many events each scenario emits after the
// lifecycle calls: enough for a second pump set to show as a reordering
// or a call overlapping another.
const lifecycleEvents = 200

// lifecycle checks Start and Stop made twice, at the same instant, and in
// the unexpected order (Stop before Start), on the fan-out; and, with
// s.Linear, the processor's Run made twice, at once and after it stopped:
// nothing panics, every call returns (a second Run at once), and the
// handlers get every event exactly once, in order, one call at a time, as
// if each call had been made once.
func lifecycle(s Subject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, cfg checkkit.Config) error {
		return checkkit.InBubble(t, func() error {
			if err := fanOutLifecycle(s, cfg); err != nil {
				return err
			}
			if s.Linear != nil {
				return processorLifecycle(s, cfg)
			}
			return nil
		})
	}
}

// concurrently runs every f on its own goroutine and reports how many have
// returned once the bubble is idle.
func concurrently(fs ...func()) int {
	var n atomic.Int32
	for _, f := range fs {
		go func() { f(); n.Add(1) }()
	}
	synctest.Wait()
	return int(n.Load())
}

func fanOutLifecycle(s Subject, cfg checkkit.Config) error {
	for _, sc := range []struct {
		name        string
		start, stop func(FanOut) int // how many calls returned, of how many
	}{
		{"Start twice, then Stop twice",
			func(f FanOut) int { f.Start(); f.Start(); return 2 },
			func(f FanOut) int { f.Stop(); f.Stop(); return 2 }},
		{"Start twice at once, then Stop twice at once",
			func(f FanOut) int { return concurrently(f.Start, f.Start) },
			func(f FanOut) int { return concurrently(f.Stop, f.Stop) }},
	} {
		cfg.Progress.Op(sc.name)
		f := s.New()
		p := newProbe("h")
		reg, err := f.AddHandler(p)
		if err != nil {
			return fmt.Errorf("AddHandler: %w", err)
		}
		if n := sc.start(f); n != 2 {
			return checkkit.Broke(GLifecycle, "%s: only %d of the 2 Start calls returned", sc.name, n)
		}
		synctest.Wait() // started and synced: what follows is not in an initial list
		want := emitAdds(f)
		got := p.received()
		if n := sc.stop(f); n != 2 {
			return checkkit.Broke(GLifecycle, "%s: only %d of the 2 Stop calls returned", sc.name, n)
		}
		synctest.Wait()
		if msg := (expectation{seq: want}).conforms(got, true); msg != "" {
			return checkkit.Broke(GLifecycle, "%s: after %d events: %s", sc.name, len(want), msg)
		}
		if p.overlap.Load() {
			return checkkit.Broke(GLifecycle, "%s: two handler calls overlapped", sc.name)
		}
		if !isClosed(reg.Done()) {
			return checkkit.Broke(GLifecycle, "%s: the registration's Done is still open after Stop", sc.name)
		}
	}
	if err := readdedListener(s, cfg); err != nil {
		return err
	}
	cfg.Progress.Op("Stop before Start, then Start and Stop")
	f := s.New()
	if _, err := f.AddHandler(newProbe("h")); err != nil {
		return fmt.Errorf("AddHandler: %w", err)
	}
	if n := concurrently(f.Stop); n != 1 {
		return checkkit.Broke(GLifecycle, "Stop before Start did not return")
	}
	if n := concurrently(f.Start, func() { f.Emit(Add, "a") }); n != 2 {
		return checkkit.Broke(GLifecycle, "after Stop, Start and Emit: only %d of the 2 calls returned", n)
	}
	if n := concurrently(f.Stop); n != 1 {
		return checkkit.Broke(GLifecycle, "a second Stop after Start did not return")
	}
	return nil
}

// emitAdds emits lifecycleEvents adds of fresh keys, waits until the
// bubble is idle, and returns the calls every handler then owes.
func emitAdds(f FanOut) []string {
	var want []string
	for i := range lifecycleEvents {
		k := fmt.Sprint("k", i)
		f.Emit(Add, k)
		want = append(want, addEv(k))
	}
	synctest.Wait()
	return want
}

// readdedListener adds a running registration's listener again, twice in a
// row and twice at once, where the fan-out offers it (Readder): the
// handler still gets every event once, in order, one call at a time.
func readdedListener(s Subject, cfg checkkit.Config) error {
	f := s.New()
	ra, ok := f.(Readder)
	if !ok {
		f.Stop() // never started: what New made must go too
		return nil
	}
	const name = "a listener added again while running (twice, then twice at once)"
	cfg.Progress.Op(name)
	p := newProbe("h")
	reg, err := f.AddHandler(p)
	if err != nil {
		return fmt.Errorf("AddHandler: %w", err)
	}
	f.Start()
	defer f.Stop()
	synctest.Wait()
	for range 2 {
		if err := ra.AddAgain(reg); err != nil {
			return checkkit.Broke(GLifecycle, "%s: AddAgain: %v", name, err)
		}
	}
	if n := concurrently(func() { _ = ra.AddAgain(reg) }, func() { _ = ra.AddAgain(reg) }); n != 2 {
		return checkkit.Broke(GLifecycle, "%s: only %d of the 2 concurrent adds returned", name, n)
	}
	want := emitAdds(f)
	if msg := (expectation{seq: want}).conforms(p.received(), true); msg != "" {
		return checkkit.Broke(GLifecycle, "%s: after %d events: %s", name, len(want), msg)
	}
	if p.overlap.Load() {
		return checkkit.Broke(GLifecycle, "%s: two handler calls overlapped", name)
	}
	return nil
}

// processorLifecycle drives the processor behind s.Linear: a second Run
// while the first runs returns at once and cancelling its context stops
// nothing; two Runs at once leave one running; Run after the processor
// stopped returns at once.
func processorLifecycle(s Subject, cfg checkkit.Config) error {
	type recorder struct {
		mu  sync.Mutex
		got []string
	}
	fresh := func() (linearizability.FanOut, *recorder) {
		fo := s.Linear()
		r := &recorder{}
		fo.AddHandler(func(v string) { r.mu.Lock(); r.got = append(r.got, v); r.mu.Unlock() })
		return fo, r
	}
	distribute := func(fo linearizability.FanOut, r *recorder, from, n int, what string) error {
		var want []string
		for i := from; i < from+n; i++ {
			v := fmt.Sprint("v", i)
			fo.Distribute(v)
			want = append(want, v)
		}
		synctest.Wait()
		r.mu.Lock()
		got := slices.Clone(r.got[min(from, len(r.got)):])
		r.mu.Unlock()
		if msg := (expectation{seq: want}).conforms(got, true); msg != "" {
			return checkkit.Broke(GLifecycle, "%s: distributed %d values: %s", what, n, msg)
		}
		return nil
	}

	cfg.Progress.Op("processor: Run, then a second Run with its own context")
	fo, r := fresh()
	ctx1, cancel1 := context.WithCancel(context.Background())
	defer cancel1()
	var first atomic.Bool
	go func() { fo.Run(ctx1); first.Store(true) }()
	synctest.Wait()
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	if n := concurrently(func() { fo.Run(ctx2) }); n != 1 {
		cancel2()
		synctest.Wait()
		return checkkit.Broke(GLifecycle, "processor: a second Run while the first runs did not return at once (it runs until its own context is done)")
	}
	if err := distribute(fo, r, 0, lifecycleEvents, "processor: after a second Run returned"); err != nil {
		return err
	}
	cancel2()
	synctest.Wait()
	if err := distribute(fo, r, lifecycleEvents, 10, "processor: after the second Run's context was cancelled"); err != nil {
		return err
	}
	cancel1()
	synctest.Wait()
	if !first.Load() {
		return checkkit.Broke(GLifecycle, "processor: Run did not return once its context was done")
	}
	if n := concurrently(func() { fo.Run(context.Background()) }); n != 1 {
		return checkkit.Broke(GLifecycle, "processor: Run after the processor stopped did not return at once")
	}

	cfg.Progress.Op("processor: two Runs at once")
	fo, r = fresh()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if n := concurrently(func() { fo.Run(ctx) }, func() { fo.Run(ctx) }); n != 1 {
		cancel()
		synctest.Wait()
		return checkkit.Broke(GLifecycle, "processor: of two Runs made at once, %d returned at once, want exactly 1", n)
	}
	if err := distribute(fo, r, 0, lifecycleEvents, "processor: two Runs at once"); err != nil {
		return err
	}
	cancel()
	synctest.Wait()
	return nil
}
