package retrywatcher

import (
	"errors"
	"testing"
	"time"
)

func must[T any](t *testing.T) func(T, Request, error) (T, Request) {
	return func(m T, r Request, err error) (T, Request) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return m, r
	}
}

func apply(t *testing.T, m Model, s Step, now time.Duration) (Model, *Out) {
	t.Helper()
	n, out, err := m.Apply(s, now)
	if err != nil {
		t.Fatal(err)
	}
	return n, out
}

func TestNewRefusesUnresumableVersions(t *testing.T) {
	for _, rv := range []string{"", "0"} {
		if _, err := New(rv); !errors.Is(err, ErrInitialRV) {
			t.Errorf("New(%q): %v, want ErrInitialRV", rv, err)
		}
	}
}

// A closed stream resumes from the last event's version, bookmarks
// included, and passes on no bookmark.
func TestResumesFromTheLastVersionSeen(t *testing.T) {
	m, _ := New("5")
	m, r := must[Model](t)(m.Watch(0))
	if r != (Request{RV: "5", Bookmarks: true}) {
		t.Fatalf("first request %+v", r)
	}
	m, out := apply(t, m, Step{Kind: Event, Type: Added, RV: "6"}, 0)
	if out == nil || !out.Passed || out.RV != "6" {
		t.Fatalf("Added 6: %+v", out)
	}
	m, out = apply(t, m, Step{Kind: Event, Type: Bookmark, RV: "9"}, 0)
	if out != nil {
		t.Fatalf("a bookmark was passed on: %+v", out)
	}
	m, _ = apply(t, m, Step{Kind: Closed}, 300*time.Millisecond)
	if m.Phase != Waiting || m.Next != RestartPeriod {
		t.Fatalf("after a close at 300ms: %+v, want waiting until 1s", m)
	}
	if _, _, err := m.Watch(999 * time.Millisecond); err == nil {
		t.Fatal("a watch before the restart period passed")
	}
	_, r = must[Model](t)(m.Watch(RestartPeriod))
	if r.RV != "9" {
		t.Fatalf("resumed from %q, want the bookmark's 9", r.RV)
	}
}

func TestRetryAfterIsWaitedFromTheEnd(t *testing.T) {
	m, _ := New("5")
	m, _ = must[Model](t)(m.Watch(0))
	m, out := apply(t, m, Step{Kind: Event, Type: Error, Code: 504, RetryAfter: 3 * time.Second}, 2*time.Second)
	if out != nil || m.Next != 5*time.Second {
		t.Fatalf("504 with retry-after 3s at 2s: out %+v, next %v, want nothing and 5s", out, m.Next)
	}
}

func TestWhatEndsIt(t *testing.T) {
	for _, c := range []struct {
		name string
		step Step
		code int
		pass bool
	}{
		{"410 in the stream", Step{Kind: Event, Type: Error, Code: 410}, 410, true},
		{"forbidden", Step{Kind: Refused, Code: 403}, 403, false},
		{"unauthorized", Step{Kind: Refused, Code: 401}, 401, false},
		{"no version", Step{Kind: Event, Type: Modified}, 500, false},
		{"unknown type", Step{Kind: Event, Type: "FOO", RV: "7"}, 500, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, _ := New("5")
			m, _ = must[Model](t)(m.Watch(0))
			m, out := apply(t, m, c.step, 0)
			if m.Phase != Ended || out == nil || out.Type != Error || out.Code != c.code || out.Passed != c.pass {
				t.Fatalf("%+v, out %+v", m, out)
			}
			if _, _, err := m.Watch(time.Hour); err == nil {
				t.Fatal("a watch after the end")
			}
			if _, _, err := m.Apply(Step{Kind: StopCalled}, 0); err != nil {
				t.Fatal("Stop after the end:", err)
			}
		})
	}
}

func TestWhatItRecoversFromSilently(t *testing.T) {
	for _, s := range []Step{
		{Kind: Refused, Code: 410}, // the watch call's 410 is retried (not the stream's)
		{Kind: Refused, Code: 0},
		{Kind: Refused, Code: 500},
		{Kind: Closed},
		{Kind: Event, Type: Error, Code: 500},
		{Kind: Event, Type: Error, Code: 429},
		{Kind: Event, Type: Error, NotStatus: true},
	} {
		m, _ := New("5")
		m, _ = must[Model](t)(m.Watch(0))
		m, out := apply(t, m, s, 0)
		if m.Phase != Waiting || out != nil || m.RV != "5" {
			t.Errorf("%+v: %+v, out %+v", s, m, out)
		}
	}
}

func TestStepsNeedAStream(t *testing.T) {
	m, _ := New("5")
	if _, _, err := m.Apply(Step{Kind: Closed}, 0); err == nil {
		t.Error("a close with no watch call")
	}
	m, _ = must[Model](t)(m.Watch(0))
	if _, _, err := m.Watch(0); err == nil {
		t.Error("a second watch while one is open")
	}
}
