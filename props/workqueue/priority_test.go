package workqueue

import (
	"testing"
	"time"

	wq "github.com/kverify/kverify/spec/workqueue"
)

// Every step of the priority machine reads back from its trace notation.
func TestPrioStepRoundTrip(t *testing.T) {
	for _, s := range []prioStep{
		{kind: wq.Add, key: "a", priority: -1},
		{kind: wq.Add, key: "x", priority: 2, d: 3 * time.Second},
		{kind: wq.Add, key: "y", priority: 0, d: 0, when: time.Second, limited: true},
		{kind: wq.Add, key: "z", priority: 3, d: 2 * time.Second, when: time.Second, limited: true},
		{sleep: true, d: time.Second},
		{burst: 300},
		{kind: wq.Get},
		{kind: wq.Done, key: "b1"},
		{kind: wq.Len},
	} {
		got, err := parsePrioStep(s.String())
		if err != nil || got != s {
			t.Errorf("parsePrioStep(%q) = %+v, %v; want %+v", s.String(), got, err, s)
		}
	}
	for _, bad := range []string{"Add(a)", "AddAfter(x, priority 1, -1s)", "Burst(0)", "Sleep(x)", "AddRateLimitedAfter(x, 1s)", "Nope"} {
		if _, err := parsePrioStep(bad); err == nil {
			t.Errorf("parsePrioStep(%q) accepted", bad)
		}
	}
}
