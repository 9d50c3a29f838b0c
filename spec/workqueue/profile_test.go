package workqueue

import "testing"

// run applies ops to a new model of profile p (each must be enabled) and
// returns the outputs.
func run(t *testing.T, p Profile, ops ...Op) (Model, []Out) {
	t.Helper()
	m := New(p)
	var outs []Out
	for _, op := range ops {
		if !m.Enabled(op) {
			t.Fatalf("%s: %v not enabled in %v", p.Name, op, m)
		}
		var out Out
		m, out = m.Step(op)
		if err := m.Invariant(); err != nil {
			t.Fatalf("%s: after %v: %v", p.Name, op, err)
		}
		outs = append(outs, out)
	}
	return m, outs
}

// Each variation point against client-go's behaviour in the same history.
func TestProfiles(t *testing.T) {
	add := func(k string) Op { return Op{Kind: Add, Key: k} }
	done := func(k string) Op { return Op{Kind: Done, Key: k} }
	get, length := Op{Kind: Get}, Op{Kind: Len}

	// x re-added while processing, then y: Len, then the order after Done.
	hist := []Op{add("x"), get, add("x"), add("y"), length, done("x"), get, get}
	for _, c := range []struct {
		p      Profile
		n      int
		first  string
		second string
	}{
		{ClientGo, 1, "y", "x"},          // x queued at Done, behind y
		{ControllerRuntime, 2, "x", "y"}, // x kept its place at the re-Add, and Len counts it
	} {
		_, outs := run(t, c.p, hist...)
		if outs[4].N != c.n || outs[6].Key != c.first || outs[7].Key != c.second {
			t.Errorf("%s: Len %d, then Gets %q, %q; want %d, %q, %q", c.p.Name, outs[4].N, outs[6].Key, outs[7].Key, c.n, c.first, c.second)
		}
	}

	// Get after ShutDown with an item queued.
	_, outs := run(t, ClientGo, add("a"), Op{Kind: ShutDown}, get)
	if outs[2] != (Out{Key: "a"}) {
		t.Errorf("client-go: Get after ShutDown = %+v, want a", outs[2])
	}
	_, outs = run(t, ControllerRuntime, add("a"), Op{Kind: ShutDown}, get)
	if outs[2] != (Out{Shutdown: true}) {
		t.Errorf("controller-runtime: Get after ShutDown = %+v, want shutdown", outs[2])
	}

	// ShutDownWithDrain with an item being processed.
	drain := Op{Kind: ShutDownWithDrain}
	m, _ := run(t, ClientGo, add("a"), get)
	if m.Begin(drain).Enabled(drain) {
		t.Error("client-go: a drain returned while a was being processed")
	}
	m, _ = run(t, ControllerRuntime, add("a"), get)
	if !m.Begin(drain).Enabled(drain) {
		t.Error("controller-runtime: ShutDownWithDrain waited")
	}
}

// Priorities: highest level first, FIFO inside a level; a raise moves a
// key to the back of its new level, a lower priority changes nothing.
func TestPriorities(t *testing.T) {
	addp := func(k string, p int) Op { return Op{Kind: Add, Key: k, Priority: p} }
	get := Op{Kind: Get}
	_, outs := run(t, ControllerRuntime,
		addp("a", 0), addp("b", 1), addp("c", 0), addp("d", 1), addp("e", 2),
		addp("a", 1), // a: 0 -> 1, behind d
		addp("e", 0), // lower: no change
		get, get, get, get, get)
	var got []Out
	for _, o := range outs[7:] {
		got = append(got, Out{Key: o.Key, Priority: o.Priority})
	}
	want := []Out{{Key: "e", Priority: 2}, {Key: "b", Priority: 1}, {Key: "d", Priority: 1}, {Key: "a", Priority: 1}, {Key: "c"}}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("Gets = %+v, want %+v", got, want)
		}
	}
	// Without Priorities, a priority is ignored: one FIFO.
	_, outs = run(t, ClientGo, addp("a", 0), addp("b", 5), get)
	if outs[2].Key != "a" {
		t.Errorf("client-go: Get = %+v, want a (no priorities)", outs[2])
	}
}
