package ring

import (
	"testing"

	"github.com/kverify/kverify/traces"
)

func TestStepRoundTrip(t *testing.T) {
	for _, st := range []Step{{Kind: Write}, {Kind: Read}, {Kind: Len}, {Kind: Cap}, {Kind: Burst, N: 12}, {Kind: Drain, N: 3}} {
		got, err := parseStep(st.String())
		if err != nil || got != st {
			t.Errorf("ParseStep(%q) = %v, %v", st.String(), got, err)
		}
	}
	for _, bad := range []string{"Write(1)", "Burst", "Drain(-1)", "Pop", "New(3)"} {
		if _, err := parseStep(bad); err == nil {
			t.Errorf("ParseStep(%q) accepted", bad)
		}
	}
	if n, ok := parseNew(newOp(-3)); !ok || n != -3 {
		t.Errorf("parseNew(newOp(-3)) = %d, %v", n, ok)
	}
}

// lifo is a broken buffer: it hands out the newest value first.
type lifo struct{ vs []string }

func (l *lifo) WriteOne(v string) { l.vs = append(l.vs, v) }
func (l *lifo) ReadOne() (string, bool) {
	if len(l.vs) == 0 {
		return "", false
	}
	v := l.vs[len(l.vs)-1]
	l.vs = l.vs[:len(l.vs)-1]
	return v, true
}
func (l *lifo) Len() int { return len(l.vs) }
func (l *lifo) Cap() int { return cap(l.vs) }

// TestReplayFindsLIFO: a hand-written trace of the fifo check breaks a
// LIFO buffer and replays by the check name's prefix.
func TestReplayFindsLIFO(t *testing.T) {
	s := Subject{Name: "lifo", New: func(int) Ring { return &lifo{} }}
	tr := &traces.Trace{Component: Component, Check: "lifo/fifo", Steps: []traces.Step{{Op: "New(0)"}, {Op: "Burst(2)"}, {Op: "Read"}}}
	if err := Replay([]Subject{s}, tr); err == nil {
		t.Fatal("replay of Burst(2), Read on a LIFO found no violation")
	}
	tr.Check = "lifo/retention"
	if err := Replay([]Subject{s}, tr); err == nil {
		t.Fatal("replay of a non-machine check accepted")
	}
}
