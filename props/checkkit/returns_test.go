package checkkit

import (
	"strings"
	"testing"
)

// A panic of the call ReturnsWithin runs on its own goroutine is raised
// again on the caller's, with the stack where it happened, instead of
// ending the test binary.
func TestReturnsWithinRaisesPanicOnCaller(t *testing.T) {
	var got any
	func() {
		defer func() { got = recover() }()
		ReturnsWithin(Watchdog, func() { panic("close of closed channel") })
	}()
	p, ok := got.(goPanic)
	if !ok {
		t.Fatalf("recovered %v (%T), want a goPanic", got, got)
	}
	if msg := p.Error(); !strings.Contains(msg, "close of closed channel") || !strings.Contains(msg, "TestReturnsWithinRaisesPanicOnCaller") {
		t.Errorf("the panic lacks its value or the stack where it happened:\n%s", msg)
	}
	if !ReturnsWithin(Watchdog, func() {}) {
		t.Error("a call that returns did not return within the watchdog")
	}
}
