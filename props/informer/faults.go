package informer

import (
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kverify/kverify/props/checkkit"
)

// slowBacklog is the number of notifications queued behind a blocked handler
// in the slow-warning check: its calls then start with every backlog from
// slowBacklog down to 0 behind them.
const slowBacklog = 2100

// slowProbe is one handler call of the slow-warning check: the backlog
// behind it when it starts and how long it takes (fake time).
type slowProbe struct {
	behind int
	took   time.Duration
	warns  bool
}

// slowProbes straddle both thresholds, in call order (backlog decreasing).
// Every other call takes no time.
var slowProbes = []slowProbe{
	{2000, 100 * time.Millisecond, false},                // exactly 100 ms is not longer than 100 ms
	{1800, 100*time.Millisecond + time.Nanosecond, true}, // both thresholds passed by the least
	{1600, 99 * time.Millisecond, false},                 // short
	{1100, 10 * time.Second, true},                       // long
	{1025, 100*time.Millisecond + time.Nanosecond, true}, // 1025 is more than 1024
	{1024, 10 * time.Second, false},                      // 1024 is not more than 1024
	{1023, 150 * time.Millisecond, false},                // few
	{3, 10 * time.Second, false},                         // very few
}

// stopAndWait stops f and waits, letting fake time run: a subject's
// goroutine may sleep (client-go's listener does after a handler panic).
func stopAndWait(f FanOut) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f.Stop()
	}()
	<-done
}

func slowWarning(s Subject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, _ checkkit.Config) error {
		if s.Slow == nil {
			checkkit.SkipNotOffered(t, "the subject does not report slow-handler warnings")
		}
		return checkkit.InBubble(t, func() error {
			f, release := s.Slow()
			defer release()
			d := &driver{}
			p := newProbe("slow")
			p.blockAt(0)
			defer func() {
				p.unblock()
				if !d.stuck {
					stopAndWait(f)
				}
			}()
			sleeps := map[int]time.Duration{}
			var total time.Duration
			for _, sp := range slowProbes {
				sleeps[slowBacklog-sp.behind] = sp.took
				total += sp.took
			}
			p.onCall = func(i int, _ string) { time.Sleep(sleeps[i]) }
			if _, err := addHandler(d, f, p); err != nil {
				return err
			}
			if !d.call(f.Start) {
				return checkkit.Broke(GNonBlocking, "Start did not return")
			}
			if !d.call(func() { f.Emit(Add, "plug") }) {
				return checkkit.Broke(GNonBlocking, "Emit did not return")
			}
			if p.waiting.Load() != 1 {
				return checkkit.Broke(GDelivery, "the handler did not receive the first event")
			}
			seq := []string{addEv("plug")}
			if !d.call(func() {
				for i := range slowBacklog {
					f.Emit(Add, fmt.Sprintf("w%d", i))
				}
			}) {
				return checkkit.Broke(GNonBlocking, "Emit blocked behind a blocked handler")
			}
			for i := range slowBacklog {
				seq = append(seq, addEv(fmt.Sprintf("w%d", i)))
			}
			p.unblock()
			time.Sleep(total + time.Second)
			synctest.Wait()
			if msg := (expectation{seq: seq}).conforms(p.received(), true); msg != "" {
				return checkkit.Broke(GDelivery, "%s", msg)
			}
			if p.overlap.Load() {
				return checkkit.Broke(GSerial, "two handler calls overlapped")
			}
			if err := matchWarnings(f.SlowWarnings()); err != nil {
				return err
			}
			if !d.call(f.Stop) {
				return checkkit.Broke(GShutdown, "Stop did not return")
			}
			return nil
		})
	}
}

// matchWarnings pairs each warning with the slow call it is about (by its
// duration, else its backlog, else its rank) and checks the pairing
// against slowProbes, reporting the first discrepancy in call order.
func matchWarnings(ws []SlowWarning) error {
	const rule = "a warning needs more than 1024 notifications pending when the call starts and a call longer than 100ms"
	matched := make([]int, len(slowProbes)) // probe -> warning index + 1
	next := 0
	var stray []SlowWarning
	for wi, w := range ws {
		j := -1
		for k := next; k < len(slowProbes) && j < 0; k++ {
			sp := slowProbes[k]
			switch {
			case w.Took >= 0:
				if w.Took == sp.took {
					j = k
				}
			case w.Pending >= 0:
				if w.Pending == int64(sp.behind) {
					j = k
				}
			default:
				j = k
			}
		}
		if j < 0 {
			stray = append(stray, w)
			continue
		}
		matched[j] = wi + 1
		next = j + 1
	}
	for k, sp := range slowProbes {
		switch {
		case matched[k] > 0 && !sp.warns:
			w := ws[matched[k]-1]
			return checkkit.Broke(GSlowWarning, "the call that started with %d notifications pending and took %v warned (reported: %s); want no warning: %s", sp.behind, sp.took, describeWarning(w), rule)
		case matched[k] == 0 && sp.warns:
			return checkkit.Broke(GSlowWarning, "the call that started with %d notifications pending and took %v did not warn (warnings: %s): %s", sp.behind, sp.took, describeWarnings(ws), rule)
		case matched[k] > 0:
			if w := ws[matched[k]-1]; w.Pending >= 0 && w.Pending != int64(sp.behind) {
				return checkkit.Broke(GSlowWarning, "the warning for the call that started with %d notifications waiting behind it reports %d pending", sp.behind, w.Pending)
			}
		}
	}
	if len(stray) > 0 {
		return checkkit.Broke(GSlowWarning, "warnings about no slow call: %s (all: %s)", describeWarnings(stray), describeWarnings(ws))
	}
	return nil
}

func describeWarning(w SlowWarning) string {
	p, d := "?", "?"
	if w.Pending >= 0 {
		p = fmt.Sprint(w.Pending)
	}
	if w.Took >= 0 {
		d = w.Took.String()
	}
	return fmt.Sprintf("%s pending, took %s", p, d)
}

func describeWarnings(ws []SlowWarning) string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = "(" + describeWarning(w) + ")"
	}
	return fmt.Sprint(out)
}

// faultEvents is the number of events emitted past the faulty handlers.
const faultEvents = 6

// faultPanics are the calls of the panicking handler that panic: one of its
// three initial adds, then the second and fourth events.
var faultPanics = []int{1, 3 + 1, 3 + 3}

func faults(s Subject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, _ checkkit.Config) error {
		if s.ContainPanics == nil {
			checkkit.SkipNotOffered(t, "the subject does not promise to contain handler panics (one could crash the test binary)")
		}
		return s.ContainPanics(func() error {
			return checkkit.InBubble(t, func() error { return faultScenario(s) })
		})
	}
}

func panicValue(name string, call int) string {
	return fmt.Sprintf("kverify: planned panic in %s, call %d", name, call)
}

func faultScenario(s Subject) error {
	f := s.New()
	d := &driver{}
	pan, ok, stuck, slow := newProbe("panicking"), newProbe("healthy"), newProbe("stuck"), newProbe("slow")
	pan.onCall = func(i int, _ string) {
		if slices.Contains(faultPanics, i) {
			panic(panicValue(pan.name, i))
		}
	}
	stuck.blockAt(3) // its first event: blocked forever (until the end)
	slow.onCall = func(int, string) { time.Sleep(time.Second) }
	defer func() {
		stuck.unblock()
		if !d.stuck {
			stopAndWait(f)
		}
	}()
	base := []string{"a", "b", "c"}
	for _, k := range base {
		if !d.call(func() { f.Emit(Add, k) }) {
			return checkkit.Broke(GNonBlocking, "Emit before Start did not return")
		}
	}
	regs := map[*probe]Registration{}
	for _, p := range []*probe{pan, ok, stuck, slow} {
		r, err := addHandler(d, f, p)
		if err != nil {
			return err
		}
		regs[p] = r
	}
	if !d.call(f.Start) {
		return checkkit.Broke(GNonBlocking, "Start did not return")
	}
	t0 := time.Now()
	reports := func(want int) error {
		pr, ok := f.(PanicReporter)
		if !ok {
			return nil
		}
		got := pr.HandlerPanics()
		var wantVals []any
		for _, i := range faultPanics[:want] {
			wantVals = append(wantVals, panicValue(pan.name, i))
		}
		if !slices.Equal(got, wantVals) {
			return checkkit.Broke(GPanicContainment, "reported handler panics %v, want %v (each contained panic reported once)", got, wantVals)
		}
		return nil
	}
	initial := expectation{init: base}

	// Initial lists, one add of which panics.
	synctest.Wait()
	if got := pan.received(); len(got) != len(base) {
		return checkkit.Broke(GPanicContainment, "after a panic in its initial add, the handler received %v at once; want all %d initial adds at the same instant (the panicking one skipped, the next delivered at once)", got, len(base))
	}
	if msg := initial.conforms(pan.received(), true); msg != "" {
		return checkkit.Broke(GDelivery, "panicking handler: %s", msg)
	}
	if !regs[pan].HasSynced() {
		return checkkit.Broke(GPanicContainment, "a handler whose initial add panicked has HasSynced() false after every initial add returned or panicked: it would never sync")
	}
	for _, p := range []*probe{ok, stuck} {
		if msg := initial.conforms(p.received(), true); msg != "" {
			return checkkit.Broke(GIsolation, "%s, next to a panicking handler: %s", p.name, msg)
		}
		if !regs[p].HasSynced() {
			return checkkit.Broke(GHandlerSync, "%s: HasSynced() false after its initial list", p.name)
		}
	}
	if n := len(slow.received()); n != 1 {
		return checkkit.Broke(GDelivery, "a handler that takes 1s per call received %d calls in no time", n)
	}
	if err := reports(1); err != nil {
		return err
	}

	// Events: more panics, a handler blocked forever, a slow one.
	sc := newScript("e", faultEvents)
	if !d.call(func() { sc.emit(f, nil) }) {
		return checkkit.Broke(GNonBlocking, "with a handler blocked, a slow one and a panicking one, Emit did not return")
	}
	all := expectation{init: base, seq: sc.events()}
	if msg := all.conforms(ok.received(), true); msg != "" {
		return checkkit.Broke(GIsolation, "the healthy handler, next to a blocked, a slow and a panicking one: %s", msg)
	}
	if msg := all.conforms(pan.received(), true); msg != "" {
		return checkkit.Broke(GPanicContainment, "after panics in some calls, the panicking handler (each panicking notification skipped, the next delivered at once): %s", msg)
	}
	if err := reports(len(faultPanics)); err != nil {
		return err
	}
	if isClosed(regs[pan].Done()) {
		return checkkit.Broke(GPanicContainment, "the panicking handler's Done closed: its listener stopped")
	}
	if stuck.waiting.Load() != 1 || len(stuck.received()) != len(base)+1 {
		return checkkit.Broke(GDelivery, "the stuck handler is not blocked in its first event (received %v)", stuck.received())
	}

	// The stuck handler is removed while its call is in progress.
	var err error
	if !d.call(func() { err = f.RemoveHandler(regs[stuck]) }) {
		return checkkit.Broke(GNonBlocking, "RemoveHandler of a handler blocked in a call did not return")
	}
	if err != nil {
		return checkkit.Broke(GRemove, "RemoveHandler(stuck): %v", err)
	}
	if isClosed(regs[stuck].Done()) {
		return checkkit.Broke(GRemove, "the stuck handler's Done closed while its call is in progress")
	}
	if !d.call(func() { f.Emit(Add, "x") }) {
		return checkkit.Broke(GNonBlocking, "Emit did not return")
	}
	all.seq = append(all.seq, addEv("x"))
	for _, p := range []*probe{ok, pan} {
		if msg := all.conforms(p.received(), true); msg != "" {
			return checkkit.Broke(GIsolation, "%s, after the stuck handler's removal: %s", p.name, msg)
		}
	}
	if t := time.Since(t0); t != 0 {
		return checkkit.Broke(GIsolation, "%v of fake time passed while the healthy and the panicking handlers received everything", t)
	}

	// The slow handler gets everything, in order, one call a second.
	time.Sleep(time.Minute)
	synctest.Wait()
	got, at := slow.receivedAt()
	if msg := all.conforms(got, true); msg != "" {
		return checkkit.Broke(GDelivery, "the slow handler, a minute later: %s", msg)
	}
	for i := range at {
		if want := t0.Add(time.Duration(i) * time.Second); !at[i].Equal(want) {
			return checkkit.Broke(GDelivery, "the slow handler's call %d (%s) started at +%v, want +%v (one call a second, back to back)", i, got[i], at[i].Sub(t0), want.Sub(t0))
		}
	}
	if !regs[slow].HasSynced() {
		return checkkit.Broke(GHandlerSync, "the slow handler: HasSynced() false after its initial adds returned")
	}

	// Released, the stuck handler's listener finishes: Done closes and it
	// got nothing after its removal.
	stuck.unblock()
	synctest.Wait()
	if !isClosed(regs[stuck].Done()) {
		return checkkit.Broke(GRemove, "the stuck handler's Done did not close after its call returned")
	}
	if msg := (expectation{init: base, seq: sc.events()}).conforms(stuck.received(), false); msg != "" || len(stuck.received()) < len(base)+1 {
		return checkkit.Broke(GRemove, "the removed stuck handler: %s (received %v)", msg, stuck.received())
	}

	// The panicking handler's listener is alive and leaves as usual.
	if !d.call(func() { err = f.RemoveHandler(regs[pan]) }) {
		return checkkit.Broke(GNonBlocking, "RemoveHandler(panicking) did not return")
	}
	if err != nil {
		return checkkit.Broke(GRemove, "RemoveHandler(panicking): %v", err)
	}
	synctest.Wait()
	if !isClosed(regs[pan].Done()) {
		return checkkit.Broke(GPanicContainment, "the panicking handler's Done did not close after RemoveHandler")
	}
	if !d.call(func() { f.Emit(Add, "y") }) {
		return checkkit.Broke(GNonBlocking, "Emit did not return")
	}
	if msg := all.conforms(pan.received(), true); msg != "" {
		return checkkit.Broke(GRemove, "the removed panicking handler: %s", msg)
	}
	time.Sleep(time.Minute) // the slow handler's call for y
	synctest.Wait()
	if !d.call(f.Stop) {
		return checkkit.Broke(GShutdown, "Stop did not return")
	}
	for _, p := range []*probe{pan, ok, stuck, slow} {
		if !isClosed(regs[p].Done()) {
			return checkkit.Broke(GShutdown, "%s: Done open after Stop", p.name)
		}
		if p.overlap.Load() {
			return checkkit.Broke(GSerial, "%s: two handler calls overlapped", p.name)
		}
	}
	return nil
}
