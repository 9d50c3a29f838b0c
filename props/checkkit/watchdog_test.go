package checkkit

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// A check that hangs outside any bubble is reported after HangAfter.
func TestGuardNamesHang(t *testing.T) {
	t.Setenv("KVERIFY_HANG_AFTER", "200ms")
	defer tainted.Store(nil)
	release := make(chan struct{})
	c := Check{Name: "x/hang", Run: func(_ *testing.T, cfg Config) error {
		cfg.Progress.Op("Get()")
		<-release
		return nil
	}}
	err := guard(t, c, Config{TraceDir: t.TempDir()})
	close(release)
	var v *Violation
	if !errors.As(err, &v) || v.Guarantee != GTermination || !strings.Contains(v.Detail, "no progress for") || !strings.Contains(v.Detail, "Get()") {
		t.Fatalf("guard = %v, want a %s violation naming Get()", err, GTermination)
	}
}

// The check's own analysis (a porcupine search) is not the subject's lack
// of progress, however long it takes within its bound; the same wait
// outside Analyse is a hang.
func TestGuardWaitsForAnalysis(t *testing.T) {
	t.Setenv("KVERIFY_HANG_AFTER", "100ms")
	defer tainted.Store(nil)
	for _, analysed := range []bool{true, false} {
		release := make(chan struct{})
		// The watchdog measures wall time, so the long analysis is too.
		timer := time.AfterFunc(500*time.Millisecond, func() { close(release) })
		c := Check{Name: "x/analyse", Run: func(_ *testing.T, cfg Config) error {
			cfg.Progress.Op("workload")
			if analysed {
				cfg.Progress.Analyse(func() { <-release })
			} else {
				<-release
			}
			return nil
		}}
		err := guard(t, c, Config{TraceDir: t.TempDir()})
		if analysed && err != nil {
			t.Fatalf("a 500ms analysis with a 100ms hang limit: guard = %v, want nil", err)
		}
		var v *Violation
		if !analysed && (!errors.As(err, &v) || v.Guarantee != GTermination) {
			t.Fatalf("a 500ms wait outside Analyse: guard = %v, want a %s violation", err, GTermination)
		}
		<-release
		timer.Stop()
	}
}

// spinCheck is a check whose subject spins inside a synctest bubble until
// stop is closed: synctest.Wait never returns, and only the watchdog can
// end the check.
func spinCheck(stop chan struct{}, wg *sync.WaitGroup) Check {
	return Check{Name: "x/spin", Family: FamilyModel, Run: func(t *testing.T, cfg Config) error {
		wg.Add(1)
		defer wg.Done()
		synctest.Test(t, func(*testing.T) {
			cfg.Progress.Op("Add(a)")
			cfg.Progress.Op("Spin()")
			go func() {
				// Spins: the subject's bug this test stands for.
				for !isClosed(stop) {
				}
			}()
			synctest.Wait()
		})
		return nil
	}}
}

// A spin inside a bubble is told from a slow step by the bubble's state, so
// it is reported after SpinAfter, well before HangAfter.
func TestGuardNamesSpinWithStacks(t *testing.T) {
	defer tainted.Store(nil)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	start := time.Now()
	err := guard(t, spinCheck(stop, &wg), Config{TraceDir: t.TempDir(), Subject: "test"})
	took := time.Since(start)
	close(stop)
	wg.Wait()
	var v *Violation
	if !errors.As(err, &v) || v.Guarantee != GTermination {
		t.Fatalf("guard = %v, want a %s violation", err, GTermination)
	}
	if took >= HangAfter {
		t.Errorf("the spin was reported after %v, want well under HangAfter (%v)", took, HangAfter)
	}
	for _, want := range []string{"cannot become quiescent", "Add(a)\n    Spin()", "spinCheck.func1.1.1", "every goroutine: "} {
		if !strings.Contains(v.Detail, want) {
			t.Errorf("violation lacks %q:\n%s", want, v.Detail)
		}
	}
	if by := tainted.Load(); by == nil || *by != t.Name() {
		t.Errorf("tainted = %v, want %q", by, t.Name())
	}
}

func TestGuardTurnsPanicIntoViolation(t *testing.T) {
	c := Check{Name: "x/panic", Run: func(*testing.T, Config) error { panic("subject exploded") }}
	err := guard(t, c, Config{})
	var v *Violation
	if !errors.As(err, &v) || v.Guarantee != "No panic" || !strings.Contains(v.Detail, "subject exploded") {
		t.Fatalf("guard = %v, want a No panic violation", err)
	}
}

func TestProgressKeepsTheTail(t *testing.T) {
	var p Progress
	for i := range progressTail + 3 {
		p.Op(string(rune('a' + i%26)))
	}
	last := p.Last()
	if len(last) != progressTail || last[0] != "d" {
		t.Fatalf("Last() = %v", last)
	}
	var nilP *Progress
	nilP.Op("x") // must not panic
	nilP.Beat()
}

func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
