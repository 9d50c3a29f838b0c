package workqueue_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	impl "github.com/kverify/kverify/impl/workqueue"
	"github.com/kverify/kverify/props/checkkit"
	pwq "github.com/kverify/kverify/props/workqueue"
)

// stuckLen is a queue whose Len stays 1 once it is shut down, while Get
// reports shutdown: queue/race's own drain used to loop on it for ever,
// which read as the subject's hang.
type stuckLen struct{ pwq.Queue }

func (q stuckLen) Len() int {
	if q.ShuttingDown() {
		return max(1, q.Queue.Len())
	}
	return q.Queue.Len()
}

// TestRaceDrainIsBounded: queue/race ends on such a queue with a verdict
// (the Len is a violation of the default profile), bounded by the
// drain's count,
// never by the watchdog's Termination.
func TestRaceDrainIsBounded(t *testing.T) {
	s := pwq.Subject{New: func(d pwq.Deps) pwq.Queue {
		return stuckLen{impl.New(impl.Config[string]{Clock: d.Clock})}
	}}
	cs := pwq.QueueChecks(s)
	i := slices.IndexFunc(cs, func(c checkkit.Check) bool { return c.Name == pwq.CheckRace })
	start := time.Now()
	err := cs[i].Run(t, checkkit.Config{TraceDir: t.TempDir()})
	var v *checkkit.Violation
	if errors.As(err, &v) && v.Guarantee == checkkit.GTermination {
		t.Fatalf("queue/race reported the subject as hung: %v", err)
	}
	if err == nil {
		t.Fatal("queue/race passed a queue whose Len stays 1 after ShutDown while Get reports shutdown")
	}
	// Not a bound on the time it took (under load it was 7.3s: a timed
	// test): that it returned a violation other than Termination is what
	// shows the drain bounded by its count.
	t.Logf("verdict after %v: %.200s", time.Since(start), err)
}

// TestBoundedGivesUp: a check's own loop that never ends gives up with an
// Unfinished error, which no divergence declaration covers.
func TestBoundedGivesUp(t *testing.T) {
	n := 0
	err := checkkit.Bounded(10, func() string { return "counting" }, func() (bool, error) { n++; return false, nil })
	var u *checkkit.Unfinished
	if !errors.As(err, &u) || n != 10 {
		t.Fatalf("Bounded = %v after %d steps, want an *Unfinished after 10", err, n)
	}
}
