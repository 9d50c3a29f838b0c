package checkkit

import (
	"fmt"
	"runtime"
	"slices"
	"time"
)

// self describes the calling goroutine: its id, its check label ("" when
// it runs outside props.Run's watchdog) and whether it is in a synctest
// bubble.
func self() (g grt) {
	buf := make([]byte, 4<<10)
	gs := parseDump(string(buf[:runtime.Stack(buf, false)]))
	if len(gs) == 1 {
		g = gs[0]
	}
	return g
}

// stuck waits for done to close or cond (if not nil) to hold, looked at
// between looks, and reports false; or it reports true once none of
// the goroutines of me's check (but me, which looks) could run for d of wall time,
// counted between looks (a look is a stack dump; its own time does not
// count). A starved goroutine is runnable, so a loaded machine stops the
// count instead of running it out: this is the real-time bound of calls
// made outside any bubble, which a wall-clock timer would decide by load.
func stuck(done <-chan struct{}, cond func() bool, me grt, d time.Duration) bool {
	var (
		clock idleClock
		wait  = time.Millisecond
	)
	t := time.NewTimer(wait)
	defer t.Stop()
	for {
		select {
		case <-done:
			return false
		case <-t.C:
		}
		if cond != nil && cond() {
			return false
		}
		start := time.Now()
		mine := owned(lookAtStacks(), me.label)
		end := time.Now()
		idle := !anyActive(slices.DeleteFunc(mine, func(g grt) bool { return g.id == me.id })) // the looker runs
		clock.look(start, end, idle)
		if clock.blocked >= d {
			return true
		}
		// Look more rarely as the wait grows, and never spend more than a
		// fifth of the time looking.
		wait = max(min(2*wait, pollCap), 4*end.Sub(start))
		t.Reset(wait)
	}
}

// pollCap is the longest pause between two looks of stuck.
const pollCap = 50 * time.Millisecond

// Goroutines is a set of goroutine ids, taken by CurrentGoroutines before a
// leak check's subject is made.
type Goroutines map[string]bool

// CurrentGoroutines returns the goroutines of the calling check: those
// carrying its label, and every goroutine of its synctest bubbles. Called
// outside props.Run, it returns every goroutine.
func CurrentGoroutines() Goroutines {
	me := self()
	gs := lookAtStacks()
	if me.label != "" {
		gs = owned(gs, me.label)
	}
	out := Goroutines{}
	for _, g := range gs {
		out[g.id] = true
	}
	return out
}

// leakLooks is how many looks FindLeaks takes, with nothing of the leak
// able to run, before it calls a goroutine leaked; between looks it
// sleeps from a microsecond doubling to 100ms (about 0.4s in all, goleak's
// default retries), on the fake clock inside a bubble.
const leakLooks = 20

// FindLeaks reports the goroutines of the calling check that were not in
// before and are still there: a leak check of a subject's shutdown. Only
// the check's own goroutines are looked at (its label, its bubbles), so
// what earlier checks or subjects left behind in the process neither
// counts as this one's leak nor hides it. A goroutine on its way out is
// running or runnable; looks that find one of the candidates so do not
// count, so a loaded machine delays the verdict instead of changing it.
func FindLeaks(before Goroutines) error {
	me := self()
	sleep := time.Microsecond
	for looks, tries := 0, 0; ; tries++ {
		gs := lookAtStacks()
		if me.label != "" {
			gs = owned(gs, me.label)
		}
		var left []grt
		for _, g := range gs {
			if !before[g.id] && g.id != me.id && relevant(g.text) {
				left = append(left, g)
			}
		}
		if len(left) == 0 {
			return nil
		}
		if !anyActive(left) || tries >= 100*leakLooks {
			looks++
		}
		if looks >= leakLooks {
			return fmt.Errorf("found unexpected goroutines:\n%s", indentLines(truncateLines(joinEntries(left), 120), "  "))
		}
		time.Sleep(sleep)
		sleep = min(2*sleep, 100*time.Millisecond)
	}
}
