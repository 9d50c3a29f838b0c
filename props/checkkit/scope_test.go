package checkkit

import (
	"strings"
	"testing"
	"time"
)

// runGuarded runs body as a check under the watchdog and returns its error.
func runGuarded(t *testing.T, body func() error) error {
	t.Helper()
	return guard(t, Check{Name: "x/scope", Run: func(*testing.T, Config) error { return body() }}, Config{TraceDir: t.TempDir()})
}

// FindLeaks reports the check's own goroutines left behind, and not a
// goroutine that something else in the process started meanwhile.
func TestFindLeaksSeesOnlyItsCheck(t *testing.T) {
	stop := make(chan struct{})
	defer close(stop)
	// Outside the check: a goroutine of "an earlier subject", which starts
	// another one, without the check's label, once the check has begun.
	spawn, started := make(chan struct{}), make(chan struct{})
	go func() {
		<-spawn
		go func() { <-stop }()
		close(started)
	}()
	err := runGuarded(t, func() error {
		before := CurrentGoroutines()
		close(spawn)
		<-started
		if err := FindLeaks(before); err != nil {
			t.Errorf("a goroutine outside the check counted as its leak: %v", err)
		}
		go func() { <-stop }() // the check's own leak
		err := FindLeaks(before)
		if err == nil || !strings.Contains(err.Error(), "TestFindLeaksSeesOnlyItsCheck") {
			t.Errorf("FindLeaks = %v, want the check's blocked goroutine", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Outside a bubble, ReturnsWithin runs out on a call that blocks for good,
// and returns true for one that returns.
func TestReturnsWithinOutsideBubble(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	err := runGuarded(t, func() error {
		if ReturnsWithin(100*time.Millisecond, func() { <-release }) {
			t.Error("a call blocked for good returned within the bound")
		}
		if !ReturnsWithin(100*time.Millisecond, func() {}) {
			t.Error("a call that returns at once did not")
		}
		n := 0
		if !Eventually(100*time.Millisecond, func() bool { n++; return n > 3 }) {
			t.Error("Eventually missed a condition that came true")
		}
		if Eventually(100*time.Millisecond, func() bool { return false }) {
			t.Error("Eventually held a condition that never came true")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
