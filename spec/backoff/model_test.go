package backoff

import (
	"math"
	"slices"
	"testing"
	"time"
)

func secs(fs ...float64) []time.Duration {
	out := make([]time.Duration, len(fs))
	for i, f := range fs {
		out[i] = time.Duration(f * float64(time.Second))
	}
	return out
}

func steps(b Backoff, n int) []time.Duration {
	var out []time.Duration
	for range n {
		var d time.Duration
		d, b = b.Step()
		out = append(out, d)
	}
	return out
}

// TestDefaultSequence is reference §6.2 item 2: the reflector's default
// without jitter.
func TestDefaultSequence(t *testing.T) {
	b := Default()
	if b.Steps != int(math.Ceil(float64(DefaultCap)/float64(DefaultInitial))) {
		t.Errorf("DefaultSteps = %d, want ceil(30s/800ms)", b.Steps)
	}
	b.Jitter = 0
	got := steps(b, 12)
	want := secs(0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 30, 30, 30, 30, 30, 30)
	if !slices.Equal(got, want) {
		t.Errorf("default sequence %v, want %v", got, want)
	}
}

func TestStep(t *testing.T) {
	for _, c := range []struct {
		name string
		b    Backoff
		want []time.Duration
		end  Backoff
	}{
		{"no steps: constant", Backoff{Duration: 5, Factor: 2, Steps: 0}, []time.Duration{5, 5, 5}, Backoff{Duration: 5, Factor: 2}},
		{"steps run out", Backoff{Duration: 1, Factor: 3, Steps: 2}, []time.Duration{1, 3, 9, 9}, Backoff{Duration: 9, Factor: 3}},
		{"factor 0 keeps the duration, even above the cap", Backoff{Duration: 10, Steps: 3, Cap: 4}, []time.Duration{10, 10, 10, 10}, Backoff{Duration: 10, Cap: 4}},
		{"cap ends the steps", Backoff{Duration: 3, Factor: 2, Steps: 10, Cap: 10}, []time.Duration{3, 6, 10, 10}, Backoff{Duration: 10, Factor: 2, Cap: 10}},
		{"reaching the cap exactly does not end the steps", Backoff{Duration: 5, Factor: 2, Steps: 3, Cap: 10}, []time.Duration{5}, Backoff{Duration: 10, Factor: 2, Steps: 2, Cap: 10}},
		{"passing the cap ends them", Backoff{Duration: 5, Factor: 2, Steps: 3, Cap: 10}, []time.Duration{5, 10, 10}, Backoff{Duration: 10, Factor: 2, Steps: 0, Cap: 10}},
		{"shrinking factor below a cap it starts above", Backoff{Duration: 10, Factor: 0.5, Steps: 5, Cap: 4}, []time.Duration{10, 4, 4}, Backoff{Duration: 4, Factor: 0.5, Cap: 4}},
		{"saturates instead of wrapping", Backoff{Duration: MaxDuration / 2, Factor: 4, Steps: 3}, []time.Duration{MaxDuration / 2, MaxDuration, MaxDuration, MaxDuration}, Backoff{Duration: MaxDuration, Factor: 4}},
		{"negative steps become 0", Backoff{Duration: 7, Factor: 2, Steps: -3}, []time.Duration{7}, Backoff{Duration: 7, Factor: 2}},
	} {
		b := c.b
		var got []time.Duration
		for range c.want {
			var d time.Duration
			d, b = b.Step()
			got = append(got, d)
		}
		if !slices.Equal(got, c.want) || b != c.end {
			t.Errorf("%s: %v from %v gave %v ending at %v, want %v ending at %v", c.name, len(c.want), c.b, got, b, c.want, c.end)
		}
	}
}

func TestScaleSaturates(t *testing.T) {
	if got := Scale(MaxDuration, 1); got != MaxDuration {
		t.Errorf("Scale(max, 1) = %v", got)
	}
	if got := Scale(1<<62, 2); got != MaxDuration {
		t.Errorf("Scale(2^62, 2) = %v, want MaxDuration (2^63 does not fit)", got)
	}
	if got := Scale(3, 0.5); got != 1 {
		t.Errorf("Scale(3, 0.5) = %v, want 1 (truncated)", got)
	}
}

func TestJittered(t *testing.T) {
	for _, c := range []struct {
		base   time.Duration
		jitter float64
		r      float64
		want   time.Duration
	}{
		{time.Second, 0, 0.9, time.Second},
		{time.Second, 1, 0, time.Second},
		{time.Second, 1, 0.5, 1500 * time.Millisecond},
		{time.Second, 0.1, 0.5, 1050 * time.Millisecond},
		{MaxDuration - 10, 1, 0.5, MaxDuration},
		{MaxDuration, 10, 0.99, MaxDuration},
	} {
		if got := Jittered(c.base, c.jitter, c.r); got != c.want {
			t.Errorf("Jittered(%v, %v, %v) = %v, want %v", c.base, c.jitter, c.r, got, c.want)
		}
		lo, hi := JitterBounds(c.base, c.jitter)
		if got := float64(Jittered(c.base, c.jitter, c.r)); got < lo || got > hi {
			t.Errorf("Jittered(%v, %v, %v) = %v outside [%v, %v]", c.base, c.jitter, c.r, got, lo, hi)
		}
	}
}

// probe drives a Delay over the default backoff without jitter and a 2
// minute reset through reference §6.2 item 5's calls: ten at once, then at
// +119s, twice at +2s more, at +60s more and at +61s more.
func probe(rule ResetRule) []time.Duration {
	b := Default()
	b.Jitter = 0
	d := NewDelay(b, DefaultReset, rule)
	var at time.Duration
	var out []time.Duration
	call := func() {
		var v time.Duration
		d, v = d.Next(at, 0)
		out = append(out, v)
	}
	for range 10 {
		call()
	}
	for _, gap := range []time.Duration{119 * time.Second, 2 * time.Second, 0, 60 * time.Second, 61 * time.Second} {
		at += gap
		call()
	}
	return out
}

// TestProbeSinceLastReset is the reference probe on client-go's rule.
func TestProbeSinceLastReset(t *testing.T) {
	got := probe(SinceLastReset)
	want := secs(0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 30, 30, 30, 30, // ten calls at once
		30,       // +119s: within two minutes of the start
		0.8, 1.6, // 121s: more than two minutes since the start
		3.2, // +60s: 60s since the restart
		0.8) // +61s: 121s since the restart
	if !slices.Equal(got, want) {
		t.Errorf("client-go rule: %v, want %v", got, want)
	}
}

// TestProbeSinceLastCall is the same probe on kverify's rule: no gap is
// longer than two minutes, so the sequence never starts over.
func TestProbeSinceLastCall(t *testing.T) {
	got := probe(SinceLastCall)
	want := secs(0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 30, 30, 30, 30, 30, 30, 30, 30, 30)
	if !slices.Equal(got, want) {
		t.Errorf("kverify rule: %v, want %v", got, want)
	}
}

func TestResetBoundaryAndZero(t *testing.T) {
	b := Backoff{Duration: 1, Factor: 2, Steps: 10}
	for _, rule := range []ResetRule{SinceLastCall, SinceLastReset} {
		d := NewDelay(b, 10, rule)
		d, _ = d.Next(0, 0)
		d, v := d.Next(10, 0) // exactly the interval: no reset
		if v != 2 {
			t.Errorf("%v: after exactly the interval got %v, want 2", rule, v)
		}
		_, v = d.Next(21, 0) // 11 since the previous call and since creation
		if v != 1 {
			t.Errorf("%v: after more than the interval got %v, want 1", rule, v)
		}
		z := NewDelay(b, 0, rule)
		z, _ = z.Next(0, 0)
		if _, v := z.Next(time.Hour, 0); v != 2 {
			t.Errorf("%v: reset 0 started over after an hour (%v)", rule, v)
		}
	}
}

func TestDelayJitterDoesNotFeedBack(t *testing.T) {
	d := NewDelay(Backoff{Duration: 100, Factor: 2, Jitter: 1, Steps: 5}, 0, SinceLastCall)
	d, v := d.Next(0, 0.5)
	if v != 150 || d.Cur.Duration != 200 {
		t.Errorf("first call %v with next base %v, want 150 and 200", v, d.Cur.Duration)
	}
	if _, v = d.Next(0, 0); v != 200 {
		t.Errorf("second call %v, want 200", v)
	}
}
