package delaying

import (
	"math"
	"testing"
	"time"

	"github.com/kverify/kverify/spec/workqueue"
)

// Retries counts every AddAfter before shutdown under client-go's profile
// (whatever the delay, a discarded later one included) and only positive
// delays under RetriesCountDelayed; nothing after shutdown or drain start.
func TestRetries(t *testing.T) {
	delays := []time.Duration{time.Second, 0, -time.Second, 2 * time.Second, math.MaxInt64, math.MinInt64, time.Second}
	for _, c := range []struct {
		p    workqueue.Profile
		want int64
	}{{workqueue.ClientGo, 7}, {workqueue.ControllerRuntime, 4}} {
		m := New(c.p)
		for _, d := range delays {
			m.ApplyAddAfter("a", d, t0)
		}
		if m.Retries() != c.want {
			t.Errorf("%s: Retries = %d, want %d", c.p.Name, m.Retries(), c.want)
		}
		if n := m.AddAfter("b", time.Second, t0); n.Retries() != c.want+1 || m.Retries() != c.want {
			t.Errorf("%s: AddAfter's copy counts %d, the original %d", c.p.Name, n.Retries(), m.Retries())
		}
		shut, _ := m.Step(workqueue.Op{Kind: workqueue.ShutDown})
		if shut = shut.AddAfter("b", time.Second, t0).AddAfter("b", 0, t0); shut.Retries() != c.want {
			t.Errorf("%s: after ShutDown, Retries = %d, want %d", c.p.Name, shut.Retries(), c.want)
		}
		drain := m.Begin(workqueue.Op{Kind: workqueue.ShutDownWithDrain}).AddAfter("b", time.Second, t0)
		if drain.Retries() != c.want {
			t.Errorf("%s: after the drain began, Retries = %d, want %d", c.p.Name, drain.Retries(), c.want)
		}
	}
}

// An item that becomes ready is an Add: counted if it was not dirty,
// not if it collapses into one queued or re-added while processing; and a
// waiting item is not dirty, so depth (Dirties) leaves it out.
func TestReadyCounts(t *testing.T) {
	m := New(workqueue.ClientGo)
	m.ApplyAddAfter("a", time.Second, t0) // waits
	m.ApplyAddAfter("b", time.Second, t0) // waits, and is queued before it is ready
	m.Apply(workqueue.Op{Kind: workqueue.Add, Key: "b"})
	m.ApplyAddAfter("c", 2*time.Second, t0) // waits while being processed
	m.Apply(workqueue.Op{Kind: workqueue.Add, Key: "c"})
	m.ApplyAddAfter("c", 2*time.Second, t0)
	m.Apply(workqueue.Op{Kind: workqueue.Get}) // b
	m.Apply(workqueue.Op{Kind: workqueue.Get}) // c
	if q := m.Queue(); q.Counts() != (workqueue.Counts{Adds: 2, Gets: 2}) || q.Dirties() != 0 {
		t.Fatalf("before the ready times: %+v, %d dirty", q.Counts(), q.Dirties())
	}
	m.ApplyAdvance(at(time.Second)) // a becomes dirty; b, processing, becomes dirty
	if q := m.Queue(); q.Counts().Adds != 4 || q.Dirties() != 2 {
		t.Fatalf("at 1s: %+v, %d dirty", q.Counts(), q.Dirties())
	}
	m.ApplyAdvance(at(2 * time.Second)) // c, processing, becomes dirty
	if q := m.Queue(); q.Counts().Adds != 5 || q.Dirties() != 3 {
		t.Fatalf("at 2s: %+v, %d dirty", q.Counts(), q.Dirties())
	}
	m.ApplyAddAfter("a", time.Second, at(2*time.Second)) // a is queued: it waits again
	m.ApplyAdvance(at(3 * time.Second))                  // and collapses into itself
	if q := m.Queue(); q.Counts().Adds != 5 || q.Dirties() != 3 {
		t.Fatalf("at 3s: %+v, %d dirty", q.Counts(), q.Dirties())
	}
	if m.Retries() != 5 {
		t.Fatalf("Retries = %d, want 5", m.Retries())
	}
}
