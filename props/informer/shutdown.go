package informer

import (
	"fmt"
	"slices"
	"testing"
	"testing/synctest"

	"github.com/kverify/kverify/props/checkkit"
)

func shutdown(s Subject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, _ checkkit.Config) error {
		if err := checkkit.InBubble(t, func() error { return removeAndStop(s) }); err != nil {
			return err
		}
		return leak(s)
	}
}

// removeAndStop is the bubbled part of the shutdown check.
func removeAndStop(s Subject) error {
	f := s.New()
	d := &driver{}
	probes := map[string]*probe{}
	newP := func(name string) *probe {
		p := newProbe(name)
		probes[name] = p
		return p
	}
	defer func() {
		for _, p := range probes {
			p.unblock()
		}
		d.call(f.Stop)
	}()
	remove := func(name string, r Registration) error {
		var err error
		if !d.call(func() { err = f.RemoveHandler(r) }) {
			return checkkit.Broke(GNonBlocking, "RemoveHandler(%s) did not return", name)
		}
		if err != nil {
			return checkkit.Broke(GRemove, "RemoveHandler(%s): %v", name, err)
		}
		return nil
	}
	emit := func(kind Kind, k string) error {
		if !d.call(func() { f.Emit(kind, k) }) {
			return checkkit.Broke(GNonBlocking, "Emit(%s) did not return", eventOf(kind, k))
		}
		return nil
	}
	exact := func(p *probe, want []string) error {
		if got := p.received(); !slices.Equal(got, want) {
			return checkkit.Broke(GRemove, "%s received %v, want %v", p.name, got, want)
		}
		return nil
	}

	h1 := newP("h1")
	r1, err := addHandler(d, f, h1)
	if err != nil {
		return err
	}
	h2 := newP("removed-before-start")
	r2, err := addHandler(d, f, h2)
	if err != nil {
		return err
	}
	if err := remove(h2.name, r2); err != nil {
		return err
	}
	if !isClosed(r2.Done()) {
		return checkkit.Broke(GRemove, "a handler removed before Start: Done did not close")
	}
	if err := remove(h2.name+" (again)", r2); err != nil {
		return err
	}
	if !d.call(f.Start) {
		return checkkit.Broke(GNonBlocking, "Start did not return")
	}
	if err := emit(Add, "a"); err != nil {
		return err
	}
	if err := exact(h2, nil); err != nil {
		return err
	}

	h3 := newP("removed-after-start")
	r3, err := addHandler(d, f, h3)
	if err != nil {
		return err
	}
	if err := emit(Add, "b"); err != nil {
		return err
	}
	if err := remove(h3.name, r3); err != nil {
		return err
	}
	if !isClosed(r3.Done()) {
		return checkkit.Broke(GRemove, "%s: Done did not close after RemoveHandler with no call in progress", h3.name)
	}
	if err := emit(Update, "a"); err != nil {
		return err
	}
	if err := remove(h3.name+" (again)", r3); err != nil {
		return err
	}
	if err := exact(h3, []string{initEv("a"), addEv("b")}); err != nil {
		return err
	}

	// Removed while blocked in a call: Done waits for the call.
	h4 := newP("removed-while-blocked")
	h4.block()
	r4, err := addHandler(d, f, h4)
	if err != nil {
		return err
	}
	if err := emit(Update, "b"); err != nil {
		return err
	}
	if err := remove(h4.name, r4); err != nil {
		return err
	}
	if isClosed(r4.Done()) {
		return checkkit.Broke(GRemove, "%s: Done closed while its handler call is still in progress", h4.name)
	}
	h4.unblock()
	synctest.Wait()
	if !isClosed(r4.Done()) {
		return checkkit.Broke(GRemove, "%s: Done did not close after its call returned", h4.name)
	}
	n4 := len(h4.received())
	if err := emit(Update, "b"); err != nil {
		return err
	}
	if n := len(h4.received()); n != n4 {
		return checkkit.Broke(GRemove, "%s was called after Done closed: %v", h4.name, h4.received())
	}
	want4 := expectation{init: []string{"a", "b"}, seq: []string{updateEv("b")}}
	if msg := want4.conforms(h4.received(), false); msg != "" {
		return checkkit.Broke(GDelivery, "%s: %s", h4.name, msg)
	}

	// Stop with a handler call in progress waits for it.
	h1.block()
	if err := emit(Delete, "a"); err != nil {
		return err
	}
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		f.Stop()
	}()
	synctest.Wait()
	if isClosed(stopped) {
		d.stuck = true // stopped: nothing more to call
		return checkkit.Broke(GShutdown, "Stop returned while a handler call was in progress")
	}
	if isClosed(r1.Done()) {
		return checkkit.Broke(GShutdown, "Done closed while the handler call is in progress")
	}
	h1.unblock()
	synctest.Wait()
	if !isClosed(stopped) {
		d.stuck = true
		return checkkit.Broke(GShutdown, "Stop did not return after the last handler call returned")
	}
	if !isClosed(r1.Done()) {
		return checkkit.Broke(GShutdown, "Stop returned and a handler's Done is open")
	}
	want1 := []string{addEv("a"), addEv("b"), updateEv("a"), updateEv("b"), updateEv("b"), deleteEv("a")}
	if err := exact(h1, want1); err != nil {
		return err
	}
	for _, p := range probes {
		if p.overlap.Load() {
			return checkkit.Broke(GSerial, "%s: two handler calls overlapped", p.name)
		}
	}
	return nil
}

// leak runs a fan-out in real time, outside any bubble, and checks that
// Stop leaves no goroutine of the check behind (checkkit.FindLeaks): once
// started, and once never started.
func leak(s Subject) error {
	before := checkkit.CurrentGoroutines()
	for _, start := range []bool{true, false} {
		f := s.New()
		p := newProbe("h")
		if _, err := addHandlerWithin(f, p); err != nil {
			return err
		}
		if start {
			if err := within("Start", f.Start); err != nil {
				return err
			}
			if err := within("Emit right after Start", func() { f.Emit(Add, "x") }); err != nil {
				return err
			}
			if !checkkit.Eventually(checkkit.Watchdog, func() bool { return len(p.received()) > 0 }) {
				return checkkit.Broke(GLiveness, "an event was not delivered within %v", checkkit.Watchdog)
			}
			late := newProbe("late")
			r, err := addHandlerWithin(f, late)
			if err != nil {
				return err
			}
			if err := within("RemoveHandler", func() { err = f.RemoveHandler(r) }); err != nil {
				return err
			}
			if err != nil {
				return fmt.Errorf("RemoveHandler: %w", err)
			}
		}
		if err := within(fmt.Sprintf("Stop (started: %v)", start), f.Stop); err != nil {
			return err
		}
		if err := checkkit.FindLeaks(before); err != nil {
			return checkkit.Broke(GNoLeak, "after Stop (started: %v): %v", start, err)
		}
	}
	return nil
}

// within runs a subject call in real time, outside any bubble, and turns
// a call that does not return within checkkit.Watchdog into a violation (the
// call is abandoned).
func within(op string, f func()) error {
	if !checkkit.ReturnsWithin(checkkit.Watchdog, f) {
		return checkkit.Broke(GNonBlocking, "%s did not return within %v", op, checkkit.Watchdog)
	}
	return nil
}

func addHandlerWithin(f FanOut, p *probe) (Registration, error) {
	var reg Registration
	var err error
	if werr := within("AddHandler", func() { reg, err = f.AddHandler(p) }); werr != nil {
		return nil, werr
	}
	if err != nil {
		return nil, fmt.Errorf("AddHandler: %w", err)
	}
	return reg, nil
}
