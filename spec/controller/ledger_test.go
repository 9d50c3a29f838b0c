package controller

import (
	"errors"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func at(d time.Duration) time.Time { return t0.Add(d) }

func present(rv int64) Seen { return Seen{Present: true, RV: rv} }

// promise is the promise err broke ("" for nil).
func promise(err error) string {
	var b *Broken
	if errors.As(err, &b) {
		return b.Promise
	}
	return ""
}

func TestLimiterDelay(t *testing.T) {
	l := Limiter{Base: time.Second, Max: 5 * time.Second}
	for n, want := range map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 3: 4 * time.Second, 4: 5 * time.Second, 40: 5 * time.Second} {
		if got := l.Delay(n); got != want {
			t.Errorf("Delay(%d) = %v, want %v", n, got, want)
		}
	}
}

// step is one ledger call and the promise it must break ("" none).
type step struct {
	call func(l *Ledger) error
	want string
}

func notify(k string, s Seen, d time.Duration) func(*Ledger) error {
	return func(l *Ledger) error { return l.Notify(k, s, at(d)) }
}
func start(k string, d time.Duration, r Seen) func(*Ledger) error {
	return func(l *Ledger) error { return l.Start(k, at(d), r) }
}
func end(k string, d time.Duration, o Outcome) func(*Ledger) error {
	return func(l *Ledger) error { return l.End(k, at(d), o) }
}

func TestLedger(t *testing.T) {
	const k = "default/a"
	ok := Outcome{}
	fail := Outcome{Failed: true}
	for name, steps := range map[string][]step{
		"notified then reconciled": {{notify(k, present(2), 0), ""}, {start(k, time.Second, present(2)), ""}, {end(k, 2*time.Second, ok), ""}},
		"never notified":           {{start(k, 0, present(2)), PromiseBusyLoop}},
		"overlap": {{notify(k, present(2), 0), ""}, {start(k, 0, present(2)), ""},
			{notify(k, present(3), time.Second), ""}, {start(k, 2*time.Second, present(3)), PromiseOneAtATime}},
		"stale read":                  {{notify(k, present(5), 0), ""}, {start(k, time.Second, present(4)), PromiseCaughtUp}},
		"read present after a delete": {{notify(k, present(5), 0), ""}, {notify(k, Seen{RV: 6}, 0), ""}, {start(k, time.Second, present(5)), PromiseCaughtUp}},
		"recreated after a delete":    {{notify(k, Seen{}, 0), ""}, {start(k, time.Second, present(9)), ""}},
		"back in time": {{notify(k, present(5), 0), ""}, {start(k, time.Second, present(7)), ""}, {end(k, time.Second, ok), ""},
			{notify(k, present(5), 2*time.Second), ""}, {start(k, 3*time.Second, present(6)), PromiseMonotonic}},
		"one notification at the start's instant owes one reconcile": {{notify(k, present(2), 0), ""}, {start(k, 0, present(2)), ""}, {end(k, time.Second, ok), ""},
			{start(k, time.Second, present(2)), PromiseBusyLoop}},
		// A carried wake lets a wake at the same instant carry again.
		"carry chains at one instant": {{notify(k, present(2), -1), ""}, {notify(k, present(2), 0), ""}, {start(k, 0, present(2)), ""}, {end(k, 0, ok), ""},
			{notify(k, present(3), 0), ""}, {start(k, 0, present(3)), ""}, {end(k, 0, ok), ""},
			{start(k, 0, present(3)), ""}, {end(k, 0, ok), ""}, {start(k, 0, present(3)), PromiseBusyLoop}},
		"busy loop": {{notify(k, present(2), 0), ""}, {start(k, time.Second, present(2)), ""}, {end(k, time.Second, ok), ""},
			{start(k, 2*time.Second, present(2)), PromiseBusyLoop}},
		"retry early": {{notify(k, present(2), 0), ""}, {start(k, 1, present(2)), ""}, {end(k, 1, fail), ""},
			{start(k, time.Second, present(2)), PromiseRetryDelay}},
		"retry on time, then doubled": {{notify(k, present(2), 0), ""}, {start(k, 1, present(2)), ""}, {end(k, 1, fail), ""},
			{start(k, time.Second+1, present(2)), ""}, {end(k, time.Second+1, fail), ""},
			{start(k, 2*time.Second+1, present(2)), PromiseRetryDelay}},
		"a notification lets a retry come at once": {{notify(k, present(2), 0), ""}, {start(k, 0, present(2)), ""},
			{notify(k, present(3), 0), ""}, {end(k, 0, fail), ""}, {start(k, time.Millisecond, present(3)), ""}},
		"requeue early": {{notify(k, present(2), 0), ""}, {start(k, 1, present(2)), ""}, {end(k, 0, Outcome{RequeueAfter: time.Minute}), ""},
			{start(k, 59*time.Second, present(2)), PromiseRequeue}},
		// A notification at the instant a reconcile started may have come
		// after the worker took the key: one more reconcile is owed, not two.
		"same-instant carry": {{notify(k, present(2), -time.Millisecond), ""}, {notify(k, present(2), 0), ""}, {start(k, 0, present(2)), ""}, {end(k, time.Second, ok), ""},
			{start(k, time.Second, present(2)), ""}, {end(k, time.Second, ok), ""}, {start(k, 2*time.Second, present(2)), PromiseBusyLoop}},
		// The queue keeps one waiting entry per key: a requeue scheduled
		// while an earlier retry waits is folded into it.
		"one waiting entry per key": {{notify(k, present(2), 0), ""}, {start(k, 0, present(2)), ""},
			{notify(k, present(2), time.Millisecond), ""}, {end(k, time.Second, fail), ""},
			{start(k, time.Second, present(2)), ""}, {end(k, time.Second, Outcome{RequeueAfter: time.Hour}), ""},
			{start(k, 2*time.Second, present(2)), ""}, {end(k, 2*time.Second, ok), ""}},
		// A reconcile for a notification supersedes a retry not yet due:
		// it may still come (client-go's delaying queue), or not
		// (controller-runtime's priority queue).
		"a superseded retry may still come": {{notify(k, present(2), 0), ""}, {start(k, 1, present(2)), ""}, {end(k, 1, fail), ""},
			{notify(k, present(3), 2), ""}, {start(k, 3, present(3)), ""}, {end(k, 3, ok), ""},
			{start(k, time.Second+1, present(3)), ""}, {end(k, time.Second+1, ok), ""}},
		"nothing after stop": {{func(l *Ledger) error { l.Stop(); return nil }, ""}, {notify(k, present(2), 0), PromiseStopped}},
	} {
		l := New(Limiter{Base: time.Second, Max: time.Hour})
		for i, s := range steps {
			if got := promise(s.call(l)); got != s.want {
				t.Errorf("%s: step %d broke %q, want %q", name, i, got, s.want)
				break
			}
		}
	}
}

func TestFinal(t *testing.T) {
	const k = "default/a"
	l := New(Limiter{Base: time.Second, Max: time.Hour})
	if err := l.Final(map[string]int64{k: 2}); promise(err) != PromiseEventual {
		t.Errorf("a key never reconciled: %v", err)
	}
	_ = l.Notify(k, present(2), at(0))
	_ = l.Start(k, at(0), present(2))
	if err := l.Final(map[string]int64{k: 2}); promise(err) != PromiseEventual {
		t.Errorf("a key still being reconciled: %v", err)
	}
	_ = l.End(k, at(0), Outcome{Failed: true})
	if err := l.Final(map[string]int64{k: 2}); promise(err) != PromiseEventual {
		t.Errorf("a failed key never retried: %v", err)
	}
	_ = l.Start(k, at(time.Second), present(2))
	_ = l.End(k, at(time.Second), Outcome{})
	if err := l.Final(map[string]int64{k: 2}); err != nil {
		t.Errorf("reconciled: %v", err)
	}
	if err := l.Final(map[string]int64{k: 3}); promise(err) != PromiseEventual {
		t.Errorf("behind the server: %v", err)
	}
	// Deleted on the server after the handler was told of it: the last
	// reconcile must read it absent.
	if err := l.Final(map[string]int64{}); promise(err) != PromiseEventual {
		t.Errorf("deleted, last read present: %v", err)
	}
	_ = l.Notify(k, Seen{RV: 3}, at(2*time.Second))
	_ = l.Start(k, at(2*time.Second), Seen{})
	_ = l.End(k, at(2*time.Second), Outcome{})
	if err := l.Final(map[string]int64{}); err != nil {
		t.Errorf("deleted and reconciled absent: %v", err)
	}
	// A failure's retry superseded by a reconcile that succeeded is not
	// owed; the retry of the last reconcile's failure is.
	_ = l.Notify(k, present(4), at(3*time.Second))
	_ = l.Start(k, at(3*time.Second), present(4))
	_ = l.End(k, at(3*time.Second), Outcome{Failed: true})
	_ = l.Notify(k, present(5), at(3*time.Second+1))
	_ = l.Start(k, at(3*time.Second+2), present(5))
	_ = l.End(k, at(3*time.Second+2), Outcome{})
	if err := l.Final(map[string]int64{k: 5}); err != nil {
		t.Errorf("a retry superseded by a success: %v", err)
	}
	_ = l.Notify(k, present(6), at(4*time.Second))
	_ = l.Start(k, at(4*time.Second), present(6))
	_ = l.End(k, at(4*time.Second), Outcome{RequeueAfter: time.Minute})
	if err := l.Final(map[string]int64{k: 6}); promise(err) != PromiseEventual {
		t.Errorf("the last reconcile's requeue never came: %v", err)
	}
}
