package delaying

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/kverify/kverify/spec/workqueue"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func at(d time.Duration) time.Time { return t0.Add(d) }

func queue(m Model) []string { return m.Queue().Queue() }

func keys(es []Entry) []string {
	var ks []string
	for _, e := range es {
		ks = append(ks, e.Key)
	}
	return ks
}

func TestAddAfterNonPositiveAddsAtOnce(t *testing.T) {
	var m Model
	m = m.AddAfter("a", 0, t0).AddAfter("b", -time.Second, t0)
	if got := queue(m); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("queue = %v", got)
	}
	if _, ok := m.NextReadyAt(); ok {
		t.Fatal("something waits")
	}
}

func TestReadyAtBoundary(t *testing.T) {
	m := Model{}.AddAfter("a", time.Second, t0)
	if r, ok := m.NextReadyAt(); !ok || !r.Equal(at(time.Second)) {
		t.Fatalf("NextReadyAt = %v, %v", r, ok)
	}
	if n := m.Advance(at(time.Second - 1)); len(queue(n)) != 0 || len(n.Waiting()) != 1 {
		t.Fatalf("fired early: %v", n)
	}
	n := m.Advance(at(time.Second))
	if !slices.Equal(queue(n), []string{"a"}) || len(n.Waiting()) != 0 {
		t.Fatalf("not fired: %v", n)
	}
}

func TestEarlierWinsLaterDiscarded(t *testing.T) {
	m := Model{}.AddAfter("a", 2*time.Second, t0).AddAfter("a", time.Second, t0)
	if w := m.Waiting(); len(w) != 1 || !w[0].ReadyAt.Equal(at(time.Second)) {
		t.Fatalf("earlier did not win: %v", w)
	}
	n := m.AddAfter("a", 5*time.Second, t0)
	if n.Key() != m.Key() {
		t.Fatalf("later not discarded: %v", n)
	}
}

func TestAdvanceOrder(t *testing.T) {
	var m Model
	m = m.AddAfter("c", 3*time.Second, t0)
	m = m.AddAfter("b", 2*time.Second, t0)
	m = m.AddAfter("x", 2*time.Second, t0) // tie: after b
	m = m.AddAfter("a", time.Second, t0)
	m = m.AddAfter("y", 5*time.Second, t0)
	m = m.AddAfter("y", 2*time.Second, t0) // lowered: after b and x
	if got, want := keys(m.Waiting()), []string{"a", "b", "x", "y", "c"}; !slices.Equal(got, want) {
		t.Fatalf("Waiting = %v, want %v", got, want)
	}
	n := m.Advance(at(2 * time.Second))
	if got, want := queue(n), []string{"a", "b", "x", "y"}; !slices.Equal(got, want) {
		t.Fatalf("queue = %v, want %v", got, want)
	}
	one, ok := m.AdvanceOne(at(10 * time.Second))
	if !ok || !slices.Equal(queue(one), []string{"a"}) {
		t.Fatalf("AdvanceOne = %v, %v", one, ok)
	}
	// m is unchanged by the transitions above.
	if got := keys(m.Waiting()); len(got) != 5 || len(queue(m)) != 0 {
		t.Fatalf("receiver mutated: %v", m)
	}
}

func TestWaitingDoesNotBlockAdd(t *testing.T) {
	m := Model{}.AddAfter("a", time.Second, t0)
	m, _ = m.Step(workqueue.Op{Kind: workqueue.Add, Key: "a"})
	if !slices.Equal(queue(m), []string{"a"}) || len(m.Waiting()) != 1 {
		t.Fatalf("%v", m)
	}
	m, out := m.Step(workqueue.Op{Kind: workqueue.Get})
	if out.Key != "a" {
		t.Fatalf("Get = %+v", out)
	}
	m = m.Advance(at(time.Second)) // dirty again while processing
	m, _ = m.Step(workqueue.Op{Kind: workqueue.Done, Key: "a"})
	if !slices.Equal(queue(m), []string{"a"}) {
		t.Fatalf("%v", m)
	}
}

func TestShutDownDropsWaiting(t *testing.T) {
	m := Model{}.AddAfter("a", time.Second, t0).AddAfter("b", 0, t0)
	s, _ := m.Step(workqueue.Op{Kind: workqueue.ShutDown})
	if len(s.Waiting()) != 0 || !slices.Equal(queue(s), []string{"b"}) {
		t.Fatalf("%v", s)
	}
	if s2 := s.AddAfter("c", 0, t0).AddAfter("d", time.Second, t0); s2.Key() != s.Key() {
		t.Fatalf("AddAfter after shutdown: %v", s2)
	}
	if err := s.Invariant(); err != nil {
		t.Fatal(err)
	}

	drain := workqueue.Op{Kind: workqueue.ShutDownWithDrain}
	d := m.Begin(drain)
	if len(d.Waiting()) != 0 || !d.IsShuttingDown() || d.Enabled(drain) {
		t.Fatalf("%v", d)
	}
	d, out := d.Step(workqueue.Op{Kind: workqueue.Get})
	d, _ = d.Step(workqueue.Op{Kind: workqueue.Done, Key: out.Key})
	if !d.Enabled(drain) {
		t.Fatalf("drain not enabled: %v", d)
	}
}

func TestHugeDelayStaysInFuture(t *testing.T) {
	now := time.Now() // with a monotonic reading
	m := Model{}.AddAfter("a", math.MaxInt64, now)
	r, ok := m.NextReadyAt()
	if !ok || !r.After(now) {
		t.Fatalf("readyAt %v not after %v", r, now)
	}
	if n := m.Advance(now.Add(100 * 365 * 24 * time.Hour)); len(queue(n)) != 0 {
		t.Fatalf("fired: %v", n)
	}
	// Saturation near the end of time.Time's range.
	end := time.Unix(math.MaxInt64-62135596800-1, 0) // about the largest time
	if r := (Model{}).AddAfter("b", math.MaxInt64, end).Waiting()[0].ReadyAt; r.Before(end) {
		t.Fatalf("wrapped: %v", r)
	}
}

func TestKeyCanonical(t *testing.T) {
	// Same state reached with different ranks.
	a := Model{}.AddAfter("x", time.Second, t0).AddAfter("y", 2*time.Second, t0)
	b := Model{}.AddAfter("y", 2*time.Second, t0).AddAfter("x", time.Second, t0)
	if a.Key() != b.Key() {
		t.Fatalf("keys differ:\n%s\n%s", a.Key(), b.Key())
	}
	// Location and monotonic reading do not matter.
	c := Model{}.AddAfter("x", time.Second, t0.In(time.FixedZone("X", 3600))).AddAfter("y", 2*time.Second, t0)
	if a.Key() != c.Key() {
		t.Fatalf("keys differ:\n%s\n%s", a.Key(), c.Key())
	}
}

// Each delaying variation point against client-go's behaviour in the same
// history.
func TestProfiles(t *testing.T) {
	add := workqueue.Op{Kind: workqueue.Add, Key: "a"}
	cr := workqueue.ControllerRuntime

	// AddAfterAbsorbed: a queued a, then AddAfter(a, 1s); after 1s, is a
	// waiting or queued again once taken?
	for _, c := range []struct {
		p     workqueue.Profile
		waits bool
	}{{workqueue.ClientGo, true}, {cr, false}} {
		m, _ := New(c.p).Step(add)
		m = m.AddAfter("a", time.Second, t0)
		if _, waits := m.ReadyAt("a"); waits != c.waits {
			t.Errorf("%s: a queued, AddAfter(a, 1s): waiting %v, want %v", c.p.Name, waits, c.waits)
		}
	}

	// AddClearsWaiting: AddAfter(a, 1s), then Add(a).
	for _, c := range []struct {
		p     workqueue.Profile
		waits bool
	}{{workqueue.ClientGo, true}, {cr, false}} {
		m, _ := New(c.p).AddAfter("a", time.Second, t0).Step(add)
		if _, waits := m.ReadyAt("a"); waits != c.waits || !slices.Equal(queue(m), []string{"a"}) {
			t.Errorf("%s: AddAfter(a, 1s), Add(a): waiting %v, queue %v; want waiting %v, queue [a]", c.p.Name, waits, queue(m), c.waits)
		}
		// The same through AddAfter(a, 0).
		m = New(c.p).AddAfter("a", time.Second, t0).AddAfter("a", 0, t0)
		if _, waits := m.ReadyAt("a"); waits != c.waits {
			t.Errorf("%s: AddAfter(a, 1s), AddAfter(a, 0): waiting %v, want %v", c.p.Name, waits, c.waits)
		}
	}

	// TiesByFirstAdd: a waits 2s, b 1s, then a lowered to 1s: who is
	// first at 1s?
	for _, c := range []struct {
		p    workqueue.Profile
		want []string
	}{{workqueue.ClientGo, []string{"b", "a"}}, {cr, []string{"a", "b"}}} {
		m := New(c.p).AddAfter("a", 2*time.Second, t0).AddAfter("b", time.Second, t0).AddAfter("a", time.Second, t0)
		if got := keys(m.Due(at(time.Second))); !slices.Equal(got, c.want) {
			t.Errorf("%s: due at 1s %v, want %v", c.p.Name, got, c.want)
		}
	}
}

// Priorities over delays: equal ready times move by priority, a waiting
// entry keeps the higher priority, and a delay of a queued item only
// raises its priority.
func TestPrioritiesWithDelays(t *testing.T) {
	cr := workqueue.ControllerRuntime
	m := New(cr)
	m.ApplyAddAfterPriority("a", time.Second, 0, t0)
	m.ApplyAddAfterPriority("b", time.Second, 2, t0)
	m.ApplyAddAfterPriority("c", 2*time.Second, 1, t0)
	m.ApplyAddAfterPriority("c", time.Second, 0, t0) // lowered time, lower priority: keeps 1
	m.ApplyAdvance(at(time.Second))
	var got []string
	var prios []int
	for m.Queue().Ready() > 0 {
		out := m.Apply(workqueue.Op{Kind: workqueue.Get})
		got, prios = append(got, out.Key), append(prios, out.Priority)
	}
	if !slices.Equal(got, []string{"b", "c", "a"}) || !slices.Equal(prios, []int{2, 1, 0}) {
		t.Errorf("Gets %v with priorities %v, want [b c a] [2 1 0]", got, prios)
	}

	// A queued item: a delay with a higher priority raises it, and it
	// does not wait.
	m = New(cr)
	m.Apply(workqueue.Op{Kind: workqueue.Add, Key: "x"})
	m.Apply(workqueue.Op{Kind: workqueue.Add, Key: "y", Priority: 1})
	m.ApplyAddAfterPriority("x", time.Hour, 3, t0)
	if _, waits := m.ReadyAt("x"); waits || !slices.Equal(queue(m), []string{"x", "y"}) {
		t.Errorf("after AddAfter(x, 1h, priority 3) of a queued x: waiting %v, queue %v; want not waiting, [x y]", waits, queue(m))
	}

	// Without Priorities the priority is ignored.
	m = New(workqueue.ClientGo)
	m.ApplyAddAfterPriority("a", time.Second, 0, t0)
	m.ApplyAddAfterPriority("b", time.Second, 5, t0)
	if got := keys(m.Due(at(time.Second))); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("client-go: due %v, want [a b]", got)
	}
}
