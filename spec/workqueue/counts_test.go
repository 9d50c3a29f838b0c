package workqueue

import "testing"

// The metrics' counts follow the history: an add each time a key becomes
// dirty, a get per item handed out, a done per Done of a key being
// processed; nothing for collapsed adds, raises, misuse or anything after
// shutdown; Step and Apply agree, and Key leaves the counts out.
func TestCounts(t *testing.T) {
	add := func(k string) Op { return Op{Kind: Add, Key: k} }
	addP := func(k string, p int) Op { return Op{Kind: Add, Key: k, Priority: p} }
	done := func(k string) Op { return Op{Kind: Done, Key: k} }
	get := Op{Kind: Get}
	for _, c := range []struct {
		name    string
		p       Profile
		ops     []Op
		want    Counts
		dirties int
	}{
		{"collapse", ClientGo, []Op{add("a"), add("a"), add("b"), add("a")}, Counts{Adds: 2}, 2},
		{"re-add while processing", ClientGo, []Op{add("a"), get, add("a"), add("a"), done("a"), get, done("a")}, Counts{Adds: 2, Gets: 2, Dones: 2}, 0},
		{"done of an item not processed", ClientGo, []Op{add("a"), done("a"), done("b")}, Counts{Adds: 1}, 1},
		{"after shutdown", ClientGo, []Op{add("a"), get, {Kind: ShutDown}, add("b"), add("a"), done("a"), {Kind: Len}}, Counts{Adds: 1, Gets: 1, Dones: 1}, 0},
		{"get drains after shutdown", ClientGo, []Op{add("a"), {Kind: ShutDown}, get, done("a")}, Counts{Adds: 1, Gets: 1, Dones: 1}, 0},
		{"get stops at shutdown", ControllerRuntime, []Op{addP("a", 0), {Kind: ShutDown}, get}, Counts{Adds: 1}, 1},
		{"raise is no add", ControllerRuntime, []Op{addP("a", 0), addP("a", 2), addP("a", 1)}, Counts{Adds: 1}, 1},
		{"re-add queues at once", ControllerRuntime, []Op{addP("a", 0), get, addP("a", 1), done("a"), get}, Counts{Adds: 2, Gets: 2, Dones: 1}, 0},
	} {
		m, _ := run(t, c.p, c.ops...)
		if got := m.Counts(); got != c.want || m.Dirties() != c.dirties {
			t.Errorf("%s (%s): Counts = %+v, Dirties = %d; want %+v, %d", c.name, c.p.Name, got, m.Dirties(), c.want, c.dirties)
		}
		in := New(c.p)
		for _, op := range c.ops {
			in.Apply(op)
		}
		if in.Counts() != m.Counts() {
			t.Errorf("%s: Apply counts %+v, Step %+v", c.name, in.Counts(), m.Counts())
		}
	}
	// Same state, different history: the same Key, and Clone keeps the counts.
	a, _ := run(t, ClientGo, add("a"))
	b, _ := run(t, ClientGo, add("a"), get, done("a"), add("a"))
	if a.Key() != b.Key() {
		t.Errorf("Key depends on the counts: %q, %q", a.Key(), b.Key())
	}
	if c := b.Clone(); c.Counts() != b.Counts() {
		t.Errorf("Clone counts %+v, want %+v", c.Counts(), b.Counts())
	}
}
