package checkkit

import (
	"runtime"
	"testing"
	"time"
)

func TestTimersCountsLiveTimers(t *testing.T) {
	c := NewTimers(time.Unix(0, 0))
	if n := c.Live(); n != 0 {
		t.Fatalf("a new clock has %d live timers", n)
	}
	a := c.NewTimer(time.Second)
	b := c.NewTimer(2 * time.Second)
	tk := c.NewTicker(time.Second)
	if n := c.Live(); n != 3 {
		t.Fatalf("two timers and a ticker: %d live (%s)", n, c.Describe())
	}
	c.Step(time.Second) // a fires; the ticker ticks and stays live
	if n := c.Live(); n != 2 {
		t.Fatalf("after the first timer fired: %d live (%s)", n, c.Describe())
	}
	<-a.C() // the fake clock's send blocks on a full channel
	b.Stop()
	tk.Stop()
	if n := c.Live(); n != 0 {
		t.Fatalf("after Stop of the others: %d live (%s)", n, c.Describe())
	}
	a.Reset(time.Second)
	if n := c.Live(); n != 1 {
		t.Fatalf("after Reset of a fired timer: %d live", n)
	}
	c.After(time.Minute)
	c.AfterFunc(time.Minute, func() {})
	if n := c.Live(); n != 3 {
		t.Fatalf("after After and AfterFunc: %d live (%s)", n, c.Describe())
	}
	c.Step(time.Hour)
	if n := c.Live(); n != 0 {
		t.Fatalf("after every timer fired: %d live (%s)", n, c.Describe())
	}
	c.Tick(time.Second)
	c.Step(time.Hour)
	if n := c.Live(); n != 1 {
		t.Fatalf("a Tick channel can never be stopped: %d live", n)
	}
}

func TestProbeHeld(t *testing.T) {
	kept, p1 := Probe("kept")
	_, p2 := Probe("dropped")
	held := Held(p1, p2)
	if len(held) != 1 || held[0] != 0 {
		t.Fatalf("Held = %v, want [0]: the kept probe only", held)
	}
	runtime.KeepAlive(kept)
}
